"""A data-parallel run read back: each rank's series kept apart, rank 0 the default, and
the workers, resizes and checkpoints as events."""

import numpy as np
import pytest

from tests.reader.test_cache_persist import cache, restart  # noqa: F401 - the cache fixture
from visualdl import LogReader, LogWriter
from visualdl.reader import scalar_cache


def _write_ranked(run_dir, ranks=(0, 1, 2), world_size=3, steps=10):
    """Rank r logs loss = 10 * r + step, interleaved in time with the others."""
    for rank in ranks:
        with LogWriter(logdir=str(run_dir), rank=rank, world_size=world_size,
                       system_metrics=False) as w:
            for step in range(steps):
                w.add_scalar("loss", 10.0 * rank + step, step, walltime=1000.0 + step + rank / 10)
            if rank == 0:
                w.add_checkpoint("ckpt/5", 5, walltime=1005.5)
                w.add_resize(2, step=6, restart=1, walltime=1006.0)


def _reader(logdir):
    reader = LogReader(str(logdir))
    assert reader.errors == 0, reader.error_messages
    return reader


def test_ranks_are_kept_apart_and_rank0_is_the_default(tmp_path):
    _write_ranked(tmp_path / "dp")
    r = _reader(tmp_path)
    assert r.ranks("dp") == [0, 1, 2]
    default = r.scalars("dp", "loss")
    assert default.steps.tolist() == list(range(10))
    assert default.values.tolist() == [float(s) for s in range(10)]
    for rank in (0, 1, 2):
        got = r.scalars("dp", "loss", rank)
        assert got.steps.tolist() == list(range(10))
        assert got.values.tolist() == [10.0 * rank + s for s in range(10)]
    assert r.scalar_ends("dp", "loss", 2) == (10, 1000.2, 1009.2, 29.0)
    assert r.scalar_ends("dp", "loss") == (10, 1000.0, 1009.0, 9.0)
    with pytest.raises(KeyError, match="no rank 5"):
        r.scalars("dp", "loss", 5)


def test_a_rank_of_several_files_is_merged_in_time(tmp_path):
    run = tmp_path / "dp"
    for part, steps in enumerate((range(0, 3), range(3, 6))):  # rank 1 restarted: 2 files
        for rank in (0, 1):
            with LogWriter(logdir=str(run), rank=rank, world_size=2, system_metrics=False,
                           filename_suffix=f".part{part}") as w:
                for s in steps:
                    w.add_scalar("acc", rank + s / 10, s, walltime=2000.0 + s)
    r = _reader(tmp_path)
    assert r.scalars("dp", "acc", 1).values.tolist() == [1 + s / 10 for s in range(6)]
    assert r.scalars("dp", "acc").values.tolist() == [s / 10 for s in range(6)]


def test_single_process_run_is_unchanged(tmp_path):
    for part in range(2):  # a resumed run: two files merged into one series, as always
        with LogWriter(logdir=str(tmp_path / "one"), system_metrics=False,
                       filename_suffix=f".{part}") as w:
            for s in range(3):
                w.add_scalar("loss", part * 3 + s, part * 3 + s, walltime=100.0 + part * 3 + s)
    r = _reader(tmp_path)
    assert r.ranks("one") == []
    assert r.scalars("one", "loss").values.tolist() == [0, 1, 2, 3, 4, 5]
    assert r.scalars("one", "loss", 0).values.tolist() == [0, 1, 2, 3, 4, 5]
    with pytest.raises(KeyError, match="no rank 1"):
        r.scalars("one", "loss", 1)


def test_untagged_files_join_rank0(tmp_path):
    run = tmp_path / "mixed"
    with LogWriter(logdir=str(run), system_metrics=False) as w:  # e.g. the launcher's own
        w.add_scalar("loss", 7.0, 100, walltime=50.0)
    _write_ranked(run, ranks=(0, 1), world_size=2, steps=2)
    r = _reader(tmp_path)
    assert r.ranks("mixed") == [0, 1]
    assert r.scalars("mixed", "loss").values.tolist() == [7.0, 0.0, 1.0]
    assert r.scalars("mixed", "loss", 1).values.tolist() == [10.0, 11.0]


def test_workers_resizes_and_checkpoints_are_events(tmp_path):
    _write_ranked(tmp_path / "dp")
    r = _reader(tmp_path)
    workers = r.events("dp", "workers", "workers")
    opening = sorted((w.rank, w.world_size) for w in workers if not w.resize)
    assert opening == [(0, 3), (1, 3), (2, 3)]
    resizes = [(w.world_size, w.step, w.restart) for w in workers if w.resize]
    assert resizes == [(2, 6, 1)]
    checkpoints = r.events("dp", "checkpoint", "checkpoint")
    assert [(c.path, c.step, c.rank, c.wall_time) for c in checkpoints] == [
        ("ckpt/5", 5, 0, 1005.5)]


def test_reload_keeps_ranks_apart(tmp_path):
    run = tmp_path / "dp"
    writers = [LogWriter(logdir=str(run), rank=k, world_size=2, system_metrics=False)
               for k in (0, 1)]
    try:
        for k, w in enumerate(writers):
            w.add_scalar("loss", float(k), 0, walltime=1.0)
            w.flush()
        r = _reader(tmp_path)
        assert r.scalars("dp", "loss").values.tolist() == [0.0]
        for k, w in enumerate(writers):
            w.add_scalar("loss", 10.0 + k, 1, walltime=2.0)
            w.flush()
        r.reload()
        assert r.scalars("dp", "loss").values.tolist() == [0.0, 10.0]
        assert np.array_equal(r.scalars("dp", "loss", 1).values, [1.0, 11.0])
    finally:
        for w in writers:
            w.close()


def test_ranks_stay_apart_through_the_scalar_disk_cache(tmp_path, cache):
    """Series long enough to spill to the disk cache, and a restart that maps them from it
    (nothing decoded): the file's rank comes back with its Worker record."""
    n = 30_000  # > the cache fixture's spill threshold
    run = tmp_path / "logs" / "dp"
    for rank in (0, 1):
        with LogWriter(logdir=str(run), rank=rank, world_size=2, system_metrics=False) as w:
            for step in range(n):
                w.add_scalar("loss", rank * 1e6 + step, step, walltime=1e9 + step)
    first = LogReader(tmp_path / "logs", load=False)
    first.reload()
    assert isinstance(first.scalars("dp", "loss", 1), scalar_cache.SpilledScalars)
    assert first.scalars("dp", "loss", 1).values[-1] == 1e6 + n - 1
    del first
    scalar_cache.wait_writes()  # the cache's commits run on its writer thread
    reader, read = restart(tmp_path / "logs")
    assert read == 0  # every series mapped from the cache
    assert reader.ranks("dp") == [0, 1]
    assert np.array_equal(reader.scalars("dp", "loss").values, np.arange(n, dtype=float))
    assert np.array_equal(reader.scalars("dp", "loss", 1).values, 1e6 + np.arange(n))
