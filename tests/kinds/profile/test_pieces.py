"""Big traces are decoded a piece at a time, the pieces cut by a byte search for ``}, {``
(visualdl.kinds.profile.parse): wherever such a cut falls (in a name, in args, in the
arrays before and after ``traceEvents``), the columns are those of the careful split; a
mapped file parses as its bytes do."""

from __future__ import annotations

import json
import mmap

import pytest

from tests.kinds.profile import traces
from visualdl.kinds.profile import parse
from visualdl.kinds.profile.parse import TraceError, parse_trace


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
    _columns_equal(parse_trace(raw), _careful(raw))
    if make is _tricky_trace and form != "array":
        columns = parse_trace(raw)
        assert "not an event" not in columns.names and columns.meta["displayTimeUnit"] == "ms"
        assert len(columns.meta["deviceProperties"]) == 30


@pytest.mark.parametrize("form", ["object", "spaced"])
def test_pieces_refuse_cuts_outside_the_events(monkeypatch, form):
    """Piece sizes from tiny to a third of the trace: the byte search's cuts fall in every
    part of it (inside the arrays before and after ``traceEvents``, names, args)."""
    trace = _tricky_trace()
    raw = json.dumps(trace, indent=1).encode() if form == "spaced" else traces.dump(trace)
    careful = _careful(raw)
    monkeypatch.setattr(parse, "CHUNKED_BYTES", 0)
    for piece in sorted({*range(40, 2000, 53), *range(2000, len(raw) // 3, len(raw) // 40)}):
        monkeypatch.setattr(parse, "PIECE_BYTES", piece)
        _columns_equal(parse_trace(raw), careful)


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
