"""The cold path of a big trace: the second half parsed by a forked child
(visualdl.server.profile.forked) gives the very columns a single process does, B/E pairs
across the halves, metadata and odd events included; a mapped file parses as its bytes do;
a standby worker takes its job from stdin (or leaves); the start-up hook starts the worker
for the newest profile before any app exists, and the app's request collects that worker.

Forking happens in subprocesses of the test (single-threaded, as the worker is), never in
the test process itself."""

from __future__ import annotations

import json
import mmap
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.profiler import traces
from visualdl.reader import scalar_cache
from visualdl.server.profile import forked, parse, store, warm, worker
from visualdl.server.profile.parse import TraceError, parse_trace

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ("ts", "dur", "name", "cat", "track", "ph", "args_start", "args_len")


def _mixed_trace() -> dict:
    """Our trace, plus what only the careful path handles, spread over both halves: thread
    names, B/E pairs (one opened in the first half and closed in the second), an E
    without its B, events whose values are odd (a string ts: their batch goes one by one)
    and a counter."""
    events = traces.ours(steps=6)["traceEvents"]
    mid = len(events) // 2
    extra_first = [
        {"ph": "B", "name": "outer", "cat": "user_annotation", "pid": 1, "tid": 10, "ts": 1001.0},
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "trainer"}},
        {"ph": "X", "name": "odd", "cat": "Operator", "pid": 1, "tid": 10, "ts": "1002",
         "dur": 1},
    ]
    extra_second = [
        {"ph": "E", "pid": 1, "tid": 10, "ts": 1900.0},
        {"ph": "E", "pid": 1, "tid": 12, "ts": 1950.0},  # no B: counted as malformed
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 12, "args": {"name": "loader"}},
        {"ph": "C", "name": "queue", "pid": 1, "tid": 12, "ts": 1960.0, "args": {"n": 3}},
        {"ph": "X", "name": "late", "cat": "Operator", "pid": "gpu 0", "tid": 7, "ts": 1970.0,
         "dur": 2.5, "args": {"Input Dims": [[2, 3]]}},
        {"ph": "X", "name": "odd2", "cat": ["not", "a", "str"], "pid": 1, "tid": 10,
         "ts": 1980.0, "dur": 1.0},
    ]
    events = events[:mid // 2] + extra_first + events[mid // 2:mid + mid // 2] + \
        extra_second + events[mid + mid // 2:]
    return {"schemaVersion": 1, "traceEvents": events}


COMPARE = r"""
import json, sys
import numpy as np
from visualdl.server.profile import forked, parse
parse._BATCH = int(sys.argv[2])  # many small batches: some of them the careful way
started = []
real_start = forked.start
def start(raws, first, size):
    half = real_start(raws, first, size)
    started.append(half.pid is not None)
    return half
forked.start = start
raw = open(sys.argv[1], "rb").read()
one = parse.parse_trace(raw)
two = parse.parse_trace(raw, fork_from=2)
def events(c):  # every event as what it says (ids differ with the order of arrival)
    return sorted(zip(map(repr, (c.tracks[int(t)] for t in c.track)), c.ts.tolist(),
                      c.dur.tolist(), (c.names[int(i)] for i in c.name),
                      (c.cats[int(i)] for i in c.cat), c.ph.tolist(),
                      (c.args_blob[int(s):int(s) + int(n)] for s, n in zip(c.args_start,
                                                                           c.args_len))))
a, b = events(one), events(two)
same = {"events": a == b, "count": len(a) == len(b) == len(one.ts),
        "names": sorted(one.names) == sorted(two.names), "cats": sorted(one.cats) == sorted(two.cats),
        "tracks": sorted(map(repr, one.tracks)) == sorted(map(repr, two.tracks)),
        "process": one.process_names == two.process_names,
        "threads": one.thread_names == two.thread_names, "warnings": one.warnings == two.warnings}
print(json.dumps({"same": same, "forked": started, "n": len(a), "warnings": one.warnings,
                  "outer": [e[1:3] for e in a if e[3] == "outer"],
                  "threads": {repr(k): v for k, v in one.thread_names.items()}}))
"""


@pytest.mark.skipif(not forked.available(), reason="needs fork and two CPUs")
@pytest.mark.parametrize("batch", [7, 50_000])
def test_the_forked_halves_give_the_columns_of_one_process(tmp_path, batch):
    path = tmp_path / "mixed.pt.trace.json"
    path.write_bytes(traces.dump(_mixed_trace()))
    out = subprocess.run([sys.executable, "-c", COMPARE, str(path), str(batch)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    found = json.loads(out.strip().splitlines()[-1])
    assert found["forked"] == [True]  # the second half really was a child's
    assert all(found["same"].values()), found["same"]
    # what the careful path added is there: the B/E pair across the halves, names
    assert found["threads"] == {"(1, 12)": "loader", "(1, 10)": "main"}
    assert found["outer"] == [[1001.0, 899.0]]  # B in the first half, E in the second
    assert any("malformed" in w for w in found["warnings"])


def _columns_equal(a, b) -> None:
    for c in COLUMNS:
        assert np.array_equal(getattr(a, c), getattr(b, c)), c
    assert (a.args_blob, a.names, a.cats, a.tracks, a.thread_names, a.warnings) == \
        (b.args_blob, b.names, b.cats, b.tracks, b.thread_names, b.warnings)


def test_a_mapped_file_parses_as_its_bytes(tmp_path):
    raw = b"\n\n  " + traces.dump(_mixed_trace())
    path = tmp_path / "t.pt.trace.json"
    path.write_bytes(raw)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        from_map = parse_trace(mapped)
        _columns_equal(from_map, parse_trace(raw))
        assert "matmul" in from_map.names and from_map.thread_names[(1, 12)] == "loader"
    cut = tmp_path / "cut.pt.trace.json"
    cut.write_bytes(raw[: len(raw) // 2])
    with open(cut, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        with pytest.raises(TraceError, match="truncated"):
            parse_trace(mapped)


def _spawn_standby() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "visualdl.server.profile.worker",
                             "--standby"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env=worker._env())


def test_a_standby_worker_leaves_when_given_no_job():
    proc = _spawn_standby()
    out, err = proc.communicate(b"", timeout=60)
    assert proc.returncode == 0 and out == b"", err


def test_a_standby_worker_builds_the_model_it_is_told_of(tmp_path):
    path = tmp_path / "host.1.pt.trace.json"
    path.write_bytes(traces.dump(_mixed_trace()))
    ident = {"format": store.FORMAT, "path": str(path), "test": 1}
    proc = _spawn_standby()
    job = {"out": str(tmp_path / "model"), "identity": ident, "source": "pytorch",
           "trace": str(path)}
    out, err = proc.communicate(json.dumps(job).encode() + b"\n", timeout=120)
    assert proc.returncode == 0, err
    assert out.splitlines()[0] == b"ready"
    model = store.read_folder(tmp_path / "model", ident)
    assert model is not None
    from visualdl.server.profile.model import TraceModel

    here = TraceModel(parse_trace(path.read_bytes()), "pytorch")
    for key in TraceModel.SAVED:
        assert np.array_equal(getattr(model, key), getattr(here, key)), key
    assert model.names == here.names and model.steps == here.steps


class _Provider:
    """Just enough of the data provider for the start-up hook: a first load that finds
    one profile after a while."""

    def __init__(self, ref, after: float) -> None:
        self.ref, self.began, self.after = ref, time.monotonic(), after

    def _found(self) -> bool:
        return time.monotonic() - self.began >= self.after

    @property
    def version(self) -> int:
        return int(self._found())

    @property
    def loaded(self) -> bool:
        return self._found()

    def tags_by_kind(self, kind):
        return {"profile": {"files": ["host"]}} if self._found() else {}

    def blobs(self, run, kind, tag):
        return [self.ref]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    scalar_cache.configure(cache_dir=tmp_path / "cache", persist=True)
    monkeypatch.setattr(worker, "MIN_BYTES", 0)
    yield tmp_path / "cache"
    worker.release_standby()
    scalar_cache.configure()


def test_the_start_up_hook_starts_the_worker_before_any_app(tmp_path, cache):
    from visualdl.kinds import registry
    from visualdl.reader.events import BlobRef

    path = tmp_path / "files" / "host.1700000000001.pt.trace.json"
    path.parent.mkdir()
    path.write_bytes(traces.dump(traces.ours(steps=4)))
    ref = BlobRef("profile", "host", 5, os.path.getmtime(path), path.stat().st_size,
                  str(path), 0, {"end_step": 8, "source": "pytorch", "error": ""})
    ident = store.identity(str(path), 0, "host", 5)
    registry.start_all(_Provider(ref, after=0.3))  # the profile kind's hook: warm.prefetch
    folder = store.folder_for(ident)
    deadline = time.monotonic() + 60
    while not store.saved(ident) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.saved(ident), "no worker wrote the model without being asked"
    key = json.dumps(ident, sort_keys=True)
    job = worker._jobs[key]  # started, not yet collected
    model = worker.build(ident, str(path))  # what a request does: the same worker's model
    assert model is not None and model.worker is job.proc and model.folder == folder
    assert key not in worker._jobs
    assert "matmul" in model.names and len(model.steps) == 4


def test_the_start_up_hook_ends_its_standby_worker_when_no_profile_comes(cache):
    class Empty(_Provider):
        def tags_by_kind(self, kind):
            return {}

    thread = warm.prefetch(Empty(None, after=0.2))
    thread.join(30)
    assert not thread.is_alive()
    assert worker._standby == []  # the waiting worker was told to leave


def test_a_worker_whose_model_was_found_saved_is_reaped(tmp_path, cache):
    path = tmp_path / "host.1.pt.trace.json"
    path.write_bytes(traces.dump(traces.ours(steps=2)))
    ident = store.identity(str(path), 0, "host", 5)
    job = worker.start(ident, str(path))
    deadline = time.monotonic() + 60
    while not store.saved(ident) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.read(ident) is not None  # what a request finds first
    worker.discard(ident)
    assert json.dumps(ident, sort_keys=True) not in worker._jobs
    assert job.proc.wait(60) == 0  # it finished its overview and was reaped
