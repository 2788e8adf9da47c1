"""Run health from real files: a closed writer, an open one, a torn file, an old file of a
format without close markers, several writers of one run, a reopened file, and the first
non-finite scalar. Time passing is the ``now`` given to ``run_health`` (and file times set
with ``os.utime``), never a sleep."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from tests.sources.tfevents.tbwrite import EventWriter
from visualdl import LogWriter
from visualdl.reader import LogReader
from visualdl.reader import run_health
from visualdl.reader.run_health import OLD_SECONDS, RUNNING_MIN_SECONDS

DAY = 86_400.0


def record_file(run_dir: Path) -> Path:
    (path,) = [p for p in run_dir.iterdir() if "vdlrecords" in p.name]
    return path


def age(path: Path, seconds: float) -> None:
    """Make ``path`` look last written ``seconds`` ago."""
    t = time.time() - seconds
    os.utime(path, (t, t))


def health(logdir: Path, run: str, later: float = 0.0):
    reader = LogReader(str(logdir))
    return reader.run_health(run, now=time.time() + later)


def test_a_closed_writer_is_finished_at_once_and_forever(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_scalar("loss", 1.0, 0)
    assert health(tmp_path, "run").state == "finished"
    assert health(tmp_path, "run", later=30 * DAY).state == "finished"


def test_an_open_writer_is_running_then_stalled(tmp_path):
    w = LogWriter(logdir=str(tmp_path / "run"), flush_secs=1)
    try:
        for i in range(5):
            w.add_scalar("loss", float(i), i, walltime=time.time() - 5 + i)
        w.flush()
        assert health(tmp_path, "run").state == "running"
        assert health(tmp_path, "run", later=RUNNING_MIN_SECONDS / 2).state == "running"
        assert health(tmp_path, "run", later=10 * RUNNING_MIN_SECONDS).state == "stalled"
        # our files are never taken as finished by age: only the close marker says so
        assert health(tmp_path, "run", later=30 * DAY).state == "stalled"
    finally:
        w.close()
    assert health(tmp_path, "run", later=30 * DAY).state == "finished"


def test_the_usual_interval_follows_how_often_points_come(tmp_path):
    w = LogWriter(logdir=str(tmp_path / "run"))
    try:
        t0 = time.time() - 600
        for i in range(11):  # a point every minute
            w.add_scalar("loss", float(i), i, walltime=t0 + 60 * i)
        w.flush()
        found = health(tmp_path, "run", later=4 * 60)
        assert found.interval == pytest.approx(60.0)
        assert found.state == "running"  # 4 minutes of quiet is usual for it
        assert health(tmp_path, "run", later=30 * 60).state == "stalled"
    finally:
        w.close()


def test_a_torn_record_without_close_is_crashed_once_quiet(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        for i in range(100):
            w.add_scalar("loss", float(i), i)
        w.flush()
        size = os.path.getsize(w.file_name)
        w.add_scalar("loss", 100.0, 100)
    path = record_file(tmp_path / "run")
    with open(path, "r+b") as f:  # the process died inside its last write
        f.truncate(size + 9)
    reader = LogReader(str(tmp_path))
    assert reader.scalars("run", "loss").steps.tolist() == list(range(100))
    now = time.time()
    assert reader.run_health("run", now=now).state == "running"  # still being written?
    assert reader.run_health("run", now=now + 10 * RUNNING_MIN_SECONDS).state == "crashed"


def test_a_file_without_close_markers_is_judged_by_age(tmp_path):
    with EventWriter(str(tmp_path / "tb")) as ev:
        ev.add_scalar("loss", 0.5, 1, wall=time.time())
    path = Path(ev.path)
    assert health(tmp_path, "tb").state == "running"
    age(path, 2 * RUNNING_MIN_SECONDS + 120)
    assert health(tmp_path, "tb").state == "stalled"
    age(path, OLD_SECONDS + 60)
    assert health(tmp_path, "tb").state == "finished"


def test_several_writers_are_finished_only_when_all_closed(tmp_path):
    run = tmp_path / "run"
    with LogWriter(logdir=str(run), filename_suffix=".rank0") as w:
        w.add_scalar("loss", 1.0, 0)
    other = LogWriter(logdir=str(run), filename_suffix=".rank1")
    try:
        other.add_scalar("loss", 2.0, 1)
        other.flush()
        assert health(tmp_path, "run").state == "running"
        assert health(tmp_path, "run", later=DAY).state == "stalled"
    finally:
        other.close()
    assert health(tmp_path, "run", later=DAY).state == "finished"


def test_a_reopened_file_is_not_finished_until_closed_again(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_scalar("loss", 1.0, 0)
    name = os.path.basename(w.file_name)
    again = LogWriter(logdir=str(tmp_path / "run"), file_name=name)
    try:
        again.add_scalar("loss", 2.0, 1)
        again.flush()
        assert health(tmp_path, "run", later=DAY).state == "stalled"
    finally:
        again.close()
    assert health(tmp_path, "run", later=DAY).state == "finished"


def test_the_first_non_finite_scalar_is_named(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        for i in range(50):
            w.add_scalar("acc", float("inf") if i == 40 else 0.5, i)
            w.add_scalar("loss", float("nan") if i in (30, 45) else 1.0 / (i + 1), i)
    reader = LogReader(str(tmp_path))
    assert reader.run_health("run").nan == {"tag": "loss", "step": 30, "value": "NaN"}
    with LogWriter(logdir=str(tmp_path / "clean")) as w:
        w.add_scalar("loss", 1.0, 0)
    reader.reload()
    assert reader.run_health("clean").nan is None


def test_states_are_served_in_runs_and_the_run_table(tmp_path):
    with LogWriter(logdir=str(tmp_path / "done")) as w:
        w.add_scalar("loss", 1.0, 0)
        w.add_scalar("loss", float("nan"), 7)
    with LogWriter(logdir=str(tmp_path / "died")) as w:
        w.add_scalar("loss", 1.0, 0)
        w.flush()
        size = os.path.getsize(w.file_name)
        w.add_scalar("loss", 2.0, 1)
    path = record_file(tmp_path / "died")
    with open(path, "r+b") as f:
        f.truncate(size + 5)
    age(path, DAY)
    live = LogWriter(logdir=str(tmp_path / "live"))
    try:
        live.add_scalar("loss", 1.0, 0)
        live.flush()
        with serving(tmp_path) as handle:
            client = Client(handle.url)
            body = client.json("/api/runs")
            assert body["runs"] == ["died", "done", "live"]
            states = {run: s["state"] for run, s in body["states"].items()}
            assert states == {"died": "crashed", "done": "finished", "live": "running"}
            assert body["states"]["done"]["nan"] == {"tag": "loss", "step": 7, "value": "NaN"}
            table = client.json("/api/runs/table")
            assert dict(zip(table["runs"], table["state"])) == states
            assert table["nan"][table["runs"].index("done")]["step"] == 7
            client.close()
    finally:
        live.close()


def test_file_state_rules():
    facts = run_health.FileFacts
    now = 1e9
    assert run_health.file_state(facts("a", True, True, True, now - DAY), 5, now) == "finished"
    assert run_health.file_state(facts("a", True, False, True, now - 1), 5, now) == "running"
    assert run_health.file_state(facts("a", True, False, True, now - DAY), 5, now) == "crashed"
    assert run_health.file_state(facts("a", False, False, False, now - DAY), 5, now) == \
        "finished"
    assert run_health.file_state(facts("a", True, False, False, None), 5, now) == "stalled"


def _killed(run: Path, rank: int | None, quiet_for: float) -> Path:
    """A writer's file left as a SIGKILLed worker leaves it: complete records, no close,
    last written ``quiet_for`` seconds ago."""
    start = int(time.time() - quiet_for - 60)
    w = LogWriter(logdir=str(run), rank=rank, world_size=None if rank is None else 2,
                  file_name=f"vdlrecords.{start}.host.0{'' if rank is None else f'.rank{rank}'}"
                            ".log")
    for i in range(3):
        w.add_scalar("loss", float(i), i)
    w.flush()
    path = Path(w.file_name)
    data = path.read_bytes()
    w.close()
    path.write_bytes(data)  # as it was before the close marker
    age(path, quiet_for)
    return path


def _restarted_name(path: Path, rank: int | None, seconds_later: float) -> str:
    """The name a writer of ``rank`` started ``seconds_later`` than ``path``'s last change
    gets (names carry the start in whole seconds)."""
    start = int(os.path.getmtime(path) + seconds_later)
    return f"vdlrecords.{start}.host.1{'' if rank is None else f'.rank{rank}'}.log"


@pytest.mark.parametrize("rank", [None, 1])
def test_a_worker_started_again_speaks_for_its_rank(tmp_path, rank):
    """An elastic restart (or a run resumed into its folder): the killed worker's file is
    history once a new file of its rank started; the run is what its current files say."""
    run = tmp_path / "run"
    quiet = _killed(run, rank, quiet_for=600)
    assert health(tmp_path, "run").state == "stalled"
    age(quiet, 10)  # killed moments ago: a file this recent would be taken as running
    assert health(tmp_path, "run").state == "running"
    again = LogWriter(logdir=str(run), rank=rank, world_size=None if rank is None else 2,
                      file_name=_restarted_name(quiet, rank, 5))
    try:
        again.add_scalar("loss", 0.5, 3)
        again.flush()
        assert health(tmp_path, "run").state == "running"
    finally:
        again.close()
    assert health(tmp_path, "run").state == "finished"
    assert health(tmp_path, "run", later=30 * DAY).state == "finished"


def test_a_worker_that_stopped_while_another_rank_went_on_still_counts(tmp_path):
    """Rank 1 went quiet while rank 0 (started with it) kept writing and finished: no restart
    of rank 1, so the run stays stalled; a file of rank 0 started later changes nothing."""
    run = tmp_path / "run"
    quiet = _killed(run, 1, quiet_for=600)
    with LogWriter(logdir=str(run), rank=0, world_size=2,
                   file_name=_restarted_name(quiet, 0, 5)) as w:
        w.add_scalar("loss", 0.5, 3)
    assert health(tmp_path, "run").state == "stalled"
