"""The cold path of a big trace: the second half parsed by a forked child
(visualdl.kinds.profile.forked) gives the very columns a single process does, B/E pairs
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
from visualdl.storage import cache_folder
from visualdl.kinds.profile import forked, parse, store, warm, worker
from visualdl.kinds.profile.parse import TraceError, parse_trace

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
from visualdl.kinds.profile import forked, parse
parse._BATCH = int(sys.argv[2])  # many small batches: some of them the careful way
parse.PIECE_BYTES = int(sys.argv[3])  # many pieces (or, 0: the careful split)
if parse.PIECE_BYTES == 0:
    parse.CHUNKED_BYTES = 1 << 62
started = []
real_start = forked.start
def start(fill, size):
    half = real_start(fill, size)
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
@pytest.mark.parametrize("batch,piece", [(7, 0), (50_000, 0), (7, 300), (50_000, 5000)])
def test_the_forked_halves_give_the_columns_of_one_process(tmp_path, batch, piece):
    path = tmp_path / "mixed.pt.trace.json"
    path.write_bytes(traces.dump(_mixed_trace()))
    out = subprocess.run([sys.executable, "-c", COMPARE, str(path), str(batch), str(piece)],
                         cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    found = json.loads(out.strip().splitlines()[-1])
    assert found["forked"] == [True]  # the second half really was a child's
    assert all(found["same"].values()), found["same"]
    # what the careful path added is there: the B/E pair across the halves, names
    assert found["threads"] == {"(1, 12)": "loader", "(1, 10)": "main"}
    assert found["outer"] == [[1001.0, 899.0]]  # B in the first half, E in the second
    assert any("malformed" in w for w in found["warnings"])


def _tricky_trace() -> dict:
    """Where a byte search for ``}, {`` finds cuts that are not between two events: in
    names, in args (arrays of objects), in top-level arrays of objects before and after
    ``traceEvents``; with top-level keys on both sides."""
    events = _mixed_trace()["traceEvents"]
    for i, e in enumerate(events):
        if i % 5 == 0:
            e["name"] = 'a}, {"ph": "X", "ts": 1}, {b' + str(i % 3)
        if i % 7 == 0:
            e["args"] = {"list": [{"x": 1}, {"y": [{"z": 2}, {"w": 3}]}], "s": "}, {"}
    return {"deviceProperties": [{"id": k, "name": "gpu"} for k in range(30)],
            "schemaVersion": 1, "traceEvents": events, "traceName": "t",
            "samples": [{"ph": "X", "name": "not an event", "ts": 5, "dur": 1, "pid": 9,
                         "tid": 9} for _ in range(200)],
            "displayTimeUnit": "ms"}


def _careful(raw) -> parse.Columns:
    old = parse.CHUNKED_BYTES
    parse.CHUNKED_BYTES = 1 << 62
    try:
        return parse_trace(raw)
    finally:
        parse.CHUNKED_BYTES = old


@pytest.mark.parametrize("piece", [97, 1000, 20_000, 8 << 20])
@pytest.mark.parametrize("make", [_mixed_trace, _tricky_trace])
@pytest.mark.parametrize("form", ["object", "array", "spaced"])
def test_pieces_cut_by_a_byte_search_read_as_the_careful_split(monkeypatch, piece, make, form):
    trace = make()
    if form == "array":
        raw = traces.dump(trace["traceEvents"])
    elif form == "spaced":  # blanks around every comma, as pretty printers write
        raw = json.dumps(trace, indent=1).encode()
    else:
        raw = traces.dump(trace)
    monkeypatch.setattr(parse, "PIECE_BYTES", piece)
    monkeypatch.setattr(parse, "CHUNKED_BYTES", 0)
    cut = []
    real = parse._cut
    monkeypatch.setattr(parse, "_cut", lambda text: cut.append(1) or real(text))
    _columns_equal(parse_trace(raw), _careful(raw))
    assert cut  # the pieces were tried (and, where a cut was wrong, refused)
    if make is _tricky_trace and form != "array":
        columns = parse_trace(raw)
        assert "not an event" not in columns.names and columns.meta["displayTimeUnit"] == "ms"
        assert len(columns.meta["deviceProperties"]) == 30


def test_pieces_refuse_cuts_outside_the_events():
    raw = traces.dump(_tricky_trace())
    text = raw
    # a cut inside deviceProperties (before traceEvents), in a name, in args, in samples
    second_sample = text.index(b'"not an event"', text.index(b'"not an event"') + 1)
    for marker in (b'{"id": 3', b'a}, {\\"ph', b'{"y": [', b'{"w"', b'"not an event"'):
        at = second_sample if marker == b'"not an event"' else text.index(marker)
        before = text.rindex(b"}", 0, at + len(marker))
        with pytest.raises(parse._Misaligned):
            parse._head(text, before + 1)
    # the last piece opened in samples (after traceEvents) reads as a trace of its own:
    # the piece before it, which must span the end of traceEvents, is what refuses it
    samples = text.index(b'"samples"')
    last_event = text.rindex(b'{"ph"', 0, samples)
    assert parse._tail(text, text.index(b"{", samples))
    with pytest.raises(parse._Misaligned):
        parse._add_pieces(parse.Builder(), text, [(last_event, text.index(b"}", samples) + 1)])


def _events(c) -> list:
    """Every event as what it says (the order of arrival, and so the ids, depend on how
    the events were batched: the model sorts them anyway)."""
    return sorted(zip(map(repr, (c.tracks[int(t)] for t in c.track)), c.ts.tolist(),
                      c.dur.tolist(), (c.names[int(i)] for i in c.name),
                      (c.cats[int(i)] for i in c.cat), c.ph.tolist(),
                      (bytes(c.args_blob[int(s):int(s) + int(n)])
                       for s, n in zip(c.args_start, c.args_len))))


def _columns_equal(a, b) -> None:
    assert _events(a) == _events(b)
    assert sorted(a.names) == sorted(b.names) and sorted(a.cats) == sorted(b.cats)
    assert (a.thread_names, a.process_names, a.warnings, a.meta) == \
        (b.thread_names, b.process_names, b.warnings, b.meta)


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
    return subprocess.Popen([sys.executable, "-m", "visualdl.kinds.profile.worker",
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
    from visualdl.kinds.profile.model import TraceModel

    here = TraceModel(parse_trace(path.read_bytes()), "pytorch")
    for key in TraceModel.SAVED:
        assert np.array_equal(getattr(model, key), getattr(here, key)), key
    assert model.names == here.names and model.steps == here.steps


class _Provider:
    """Just enough of the data provider for the start-up hook: a first load that finds
    one profile after the hook's first look (it looks at ``loaded`` once a round)."""

    def __init__(self, ref, after: int = 1) -> None:
        self.ref, self.after, self.looks = ref, after, 0

    def _found(self) -> bool:
        return self.looks > self.after

    @property
    def version(self) -> int:
        return int(self._found())

    @property
    def loaded(self) -> bool:
        self.looks += 1
        return self._found()

    def tags_by_kind(self, kind):
        return {"profile": {"files": ["host"]}} if self._found() else {}

    def blobs(self, run, kind, tag):
        return [self.ref]

    def files(self):  # listed at once, indexed (found) later
        from visualdl.sources.values import FileInfo

        return [FileInfo(self.ref.path, "files", "torchtrace")] if self.ref is not None else []


@pytest.fixture
def cache(tmp_path, monkeypatch):
    cache_folder.configure(cache_dir=tmp_path / "cache", persist=True)
    monkeypatch.setattr(worker, "MIN_BYTES", 0)
    yield tmp_path / "cache"
    worker.release_standby()
    cache_folder.configure()


def test_the_start_up_hook_starts_the_worker_before_any_app(tmp_path, cache):
    from visualdl.kinds import registry
    from visualdl.sources.values import BlobRef

    path = tmp_path / "files" / "host.1700000000001.pt.trace.json"
    path.parent.mkdir()
    path.write_bytes(traces.dump(traces.ours(steps=4)))
    ref = BlobRef("profile", "host", 5, os.path.getmtime(path), path.stat().st_size,
                  str(path), 0, {"end_step": 8, "source": "pytorch", "error": ""}, "torchtrace")
    ident = store.identity(str(path), 0, "host", 5)
    registry.start_all(_Provider(ref))  # the profile kind's hook: warm.prefetch
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


@pytest.mark.parametrize("listed", [True, False])
def test_the_start_up_hook_ends_its_standby_worker_when_no_profile_comes(tmp_path, cache,
                                                                        listed):
    from visualdl.sources.values import BlobRef

    class Broken(_Provider):  # a trace file is listed, but no profile is found in it
        def tags_by_kind(self, kind):
            return {}

    path = tmp_path / "host.1.pt.trace.json"
    path.write_bytes(b"{}")
    ref = BlobRef("profile", "host", 0, 0.0, 2, str(path), 0, {}, "torchtrace") if listed \
        else None
    started, procs = [], []
    real = worker.standby

    def standby() -> bool:
        started.append(real())
        procs.extend(worker._standby)
        return started[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(worker, "standby", standby)
        thread = warm.prefetch(Broken(ref))
        thread.join(30)
    assert not thread.is_alive()
    assert started == ([True] if listed else [])  # only for a (big enough) trace file
    assert worker._standby == []  # the waiting worker was told to leave...
    assert [p.wait(30) for p in procs] == ([0] if listed else [])  # ...and left


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
    assert job.proc.wait(60) == 0  # it finished its overview and was reaped...
    deadline = time.monotonic() + 30
    while json.dumps(ident, sort_keys=True) in worker._jobs and time.monotonic() < deadline:
        time.sleep(0.02)
    assert json.dumps(ident, sort_keys=True) not in worker._jobs  # ...and forgotten


def test_the_worker_writes_a_model_without_events(tmp_path):
    """(Columns are built in memory-mapped files; an empty one cannot be mapped.)"""
    path = tmp_path / "meta.1.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}]}))
    ident = {"format": store.FORMAT, "path": str(path), "empty": 1}
    proc = subprocess.run([sys.executable, "-m", "visualdl.kinds.profile.worker", "--out",
                           str(tmp_path / "model"), "--identity", json.dumps(ident), str(path)],
                          cwd=ROOT, env=worker._env(), capture_output=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.splitlines()[0] == b"ready", proc.stderr
    model = store.read_folder(tmp_path / "model", ident)
    assert model is not None and model.n == 0 and model.steps == []
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_args_written_to_a_file_read_as_joined_ones(tmp_path):
    raw = traces.dump(_mixed_trace())
    columns = parse_trace(raw, args_to=tmp_path / "args.bin")
    here = parse_trace(raw)
    assert isinstance(columns.args_blob, mmap.mmap)
    assert columns.args_blob[:] == here.args_blob == (tmp_path / "args.bin").read_bytes()
    assert np.array_equal(columns.args_start, here.args_start)
    none = parse_trace(b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}]}',
                       args_to=tmp_path / "none.bin")
    assert none.args_blob == b"" and (tmp_path / "none.bin").read_bytes() == b""
