"""A ranked LogWriter: its file name, the Worker record it starts with, the environment it
reads its rank from, elastic resizes and checkpoints, and the errors bad arguments get."""

import os
import socket

import pytest

from visualdl import LogWriter, SummaryWriter
from visualdl.format import framing
from visualdl.format.record_pb2 import Record
from visualdl.kinds.workers.write import ENV_PAIRS

ENV_VARS = [name for pair in ENV_PAIRS for name in pair]


@pytest.fixture(autouse=True)
def no_launcher_env(monkeypatch):
    """Tests start from a single-process environment, whatever launched pytest."""
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def _records(path):
    with open(path, "rb") as f:
        result = framing.scan(f.read())
    assert not result.errors
    return [Record.FromString(bytes(payload)) for _, payload in result.records]


def _entries(path, field):
    return [getattr(e, field) for r in _records(path) for e in r.entries
            if e.WhichOneof("kind") == field]


def _only_file(folder):
    files = sorted(os.listdir(folder))
    assert len(files) == 1, files
    return os.path.join(folder, files[0])


def _writer(tmp_path, **kw):
    return LogWriter(logdir=str(tmp_path / "run"), system_metrics=False, **kw)


def test_ranked_file_starts_with_its_worker_and_names_its_rank(tmp_path):
    with _writer(tmp_path, rank=1, world_size=4) as w:
        w.add_scalar("loss", 0.5, 1)
        assert (w.rank, w.world_size) == (1, 4)
    path = _only_file(tmp_path / "run")
    assert ".rank1." in os.path.basename(path)
    records = _records(path)
    assert records[0].HasField("header")
    first = records[1].entries[0]
    assert first.WhichOneof("kind") == "worker"
    worker = first.worker
    assert (worker.rank, worker.world_size, worker.restart, worker.step) == (1, 4, 0, 0)
    assert worker.host == socket.gethostname() and worker.pid == os.getpid()
    assert worker.wall_time > 1e9


def test_two_ranks_write_two_files_into_one_run(tmp_path):
    for rank in (0, 1):
        with _writer(tmp_path, rank=rank, world_size=2) as w:
            w.add_scalar("loss", float(rank), 0)
    names = sorted(os.listdir(tmp_path / "run"))
    assert len(names) == 2
    assert [".rank0." in names[0] or ".rank0." in names[1],
            ".rank1." in names[0] or ".rank1." in names[1]] == [True, True]
    ranks = sorted(_entries(str(tmp_path / "run" / n), "worker")[0].rank for n in names)
    assert ranks == [0, 1]


def test_single_process_run_is_as_before(tmp_path):
    with _writer(tmp_path) as w:
        w.add_scalar("loss", 0.5, 1)
        assert w.rank is None and w.world_size is None
    path = _only_file(tmp_path / "run")
    assert ".rank" not in os.path.basename(path)
    assert _entries(path, "worker") == []
    kinds = [e.WhichOneof("kind") for r in _records(path) for e in r.entries]
    assert kinds == ["scalars", "close"]


@pytest.mark.parametrize("pair", ENV_PAIRS)
def test_rank_from_the_launchers_environment(tmp_path, monkeypatch, pair):
    monkeypatch.setenv(pair[0], "2")
    monkeypatch.setenv(pair[1], "3")
    with _writer(tmp_path) as w:
        assert (w.rank, w.world_size) == (2, 3)
    path = _only_file(tmp_path / "run")
    assert ".rank2." in os.path.basename(path)
    assert [(x.rank, x.world_size) for x in _entries(path, "worker")] == [(2, 3)]


def test_arguments_win_over_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "5")
    monkeypatch.setenv("WORLD_SIZE", "8")
    with _writer(tmp_path, rank=0, world_size=2) as w:
        assert (w.rank, w.world_size) == (0, 2)


@pytest.mark.parametrize("kw, message", [
    ({"rank": 2, "world_size": 2}, r"rank must be in \[0, world_size=2\), got 2"),
    ({"rank": -1, "world_size": 2}, r"rank must be in \[0, world_size=2\), got -1"),
    ({"rank": 0, "world_size": 0}, r"world_size must be at least 1, got 0"),
    ({"rank": 1}, r"rank is 1 but world_size is not given"),
    ({"world_size": 2}, r"world_size is 2 but rank is not given"),
    ({"rank": "0", "world_size": 2}, r"rank must be an integer, got '0'"),
    ({"rank": 0, "world_size": 2.0}, r"world_size must be an integer, got 2.0"),
    ({"rank": True, "world_size": 2}, r"rank must be an integer, got True"),
])
def test_bad_rank_arguments_are_named(tmp_path, kw, message):
    with pytest.raises(ValueError, match=message):
        _writer(tmp_path, **kw)
    assert not os.path.exists(tmp_path / "run")  # refused before anything is written


def test_bad_environment_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "zero")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError, match=r"RANK='zero' is not an integer"):
        _writer(tmp_path)
    monkeypatch.setenv("RANK", "3")
    with pytest.raises(ValueError, match=r"rank \(environment variable RANK\) must be in "
                                         r"\[0, world_size=2\), got 3"):
        _writer(tmp_path)


def test_resize_and_checkpoint_records(tmp_path):
    with _writer(tmp_path, rank=0, world_size=2) as w:
        w.add_scalar("loss", 1.0, 0)
        w.add_checkpoint("/ckpt/step_100", 100, walltime=1000.0)
        w.add_resize(1, step=100, restart=1, walltime=1001.0)
        w.add_resize(world_size=2, step=150, restart=2)
        w.add_checkpoint(tmp_path / "ckpt200", 200)  # an os.PathLike
    path = _only_file(tmp_path / "run")
    workers = _entries(path, "worker")
    assert [(x.rank, x.world_size, x.restart, x.step) for x in workers] == [
        (0, 2, 0, 0), (0, 1, 1, 100), (0, 2, 2, 150)]
    assert workers[1].wall_time == 1001.0 and workers[1].host == socket.gethostname()
    checkpoints = _entries(path, "checkpoint")
    assert [(c.path, c.step, c.rank) for c in checkpoints] == [
        ("/ckpt/step_100", 100, 0), (str(tmp_path / "ckpt200"), 200, 0)]
    assert checkpoints[0].wall_time == 1000.0


def test_checkpoint_of_a_single_process_run(tmp_path):
    with _writer(tmp_path) as w:
        w.add_checkpoint("model.pdparams", 7)
    path = _only_file(tmp_path / "run")
    assert [(c.path, c.step, c.rank) for c in _entries(path, "checkpoint")] == [
        ("model.pdparams", 7, 0)]
    assert _entries(path, "worker") == []


@pytest.mark.parametrize("call, message", [
    (lambda w: w.add_resize(0, 10, 1), r"world_size must be at least 1, got 0"),
    (lambda w: w.add_resize(2, 10, 0), r"restart counts restarts from 1, got 0"),
    (lambda w: w.add_resize(2, 10, 1.5), r"restart must be an integer, got 1.5"),
    (lambda w: w.add_resize(2, 1.5, 1), r"step must be an integer"),
    (lambda w: w.add_checkpoint("", 10), r"path must be a non-empty str"),
    (lambda w: w.add_checkpoint(None, 10), r"path must be a non-empty str"),
    (lambda w: w.add_checkpoint("a", "10"), r"step must be an integer"),
])
def test_bad_resize_and_checkpoint_arguments(tmp_path, call, message):
    with _writer(tmp_path, rank=0, world_size=2) as w:
        with pytest.raises((ValueError, TypeError), match=message):
            call(w)


def test_summary_writer_forwards_the_rank(tmp_path):
    with SummaryWriter(str(tmp_path / "run"), rank=1, world_size=2,
                       system_metrics=False) as w:
        w.add_scalar("loss", 0.5, 3)
        w.add_scalars("acc", {"train": 0.9}, 3)
        w.add_checkpoint("c.pt", 3)
        w.add_resize(1, 3, 1)
    main = [n for n in os.listdir(tmp_path / "run") if n.startswith("vdlrecords")]
    assert len(main) == 1 and ".rank1." in main[0]
    path = str(tmp_path / "run" / main[0])
    assert [(x.rank, x.restart) for x in _entries(path, "worker")] == [(1, 0), (1, 1)]
    assert [c.step for c in _entries(path, "checkpoint")] == [3]
    sub = _only_file(tmp_path / "run" / "acc_train")
    assert ".rank1." in os.path.basename(sub)
