"""The trace parser on its own: both JSON paths agree, and the odd shapes Chrome traces
come in (bare arrays, B/E pairs, events without dur, string pids, garbage) are handled."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.kinds.profile import traces
from visualdl.kinds.profile import parse
from visualdl.kinds.profile.model import TraceModel
from visualdl.kinds.profile.parse import TraceError, parse_trace


def _columns(raw: bytes) -> dict:
    cols = parse_trace(raw)
    order = np.lexsort((cols.dur, cols.ts, cols.track))
    return {"ts": cols.ts[order].tolist(), "dur": cols.dur[order].tolist(),
            "name": [cols.names[i] for i in cols.name[order]],
            "cat": [cols.cats[i] for i in cols.cat[order]],
            "track": [cols.tracks[i] for i in cols.track[order]],
            "args": [cols.args_blob[s:s + n] and json.loads(cols.args_blob[s:s + n])
                     for s, n in zip(cols.args_start[order], cols.args_len[order])],
            "meta": cols.meta, "warnings": cols.warnings}


def test_msgspec_and_json_paths_agree(monkeypatch):
    pytest.importorskip("msgspec")
    raw = traces.dump(traces.ours())
    fast = _columns(raw)
    monkeypatch.setattr(parse, "msgspec", None)
    slow = _columns(raw)
    assert fast == slow
    assert fast["meta"]["env"]["framework"] == "visualdl"


def test_bare_array_begin_end_pairs_missing_dur_and_string_ids():
    events = [
        {"ph": "B", "name": "outer", "cat": "Forward", "pid": "host", "tid": "main", "ts": 10},
        {"ph": "X", "name": "op", "cat": "Operator", "pid": "host", "tid": "main", "ts": 12,
         "dur": 3},
        {"ph": "X", "name": "nodur", "cat": "Operator", "pid": "host", "tid": "main", "ts": 16},
        {"ph": "E", "pid": "host", "tid": "main", "ts": 20},
        {"ph": "X", "name": "bad", "pid": 1, "tid": 1, "ts": "soon", "dur": 1},
        "not an event",
    ]
    cols = parse_trace(json.dumps(events).encode())
    model = TraceModel(cols)
    names = [cols.names[i] for i in cols.name]
    assert sorted(names) == ["nodur", "op", "outer"]
    outer = names.index("outer")
    assert cols.ts[outer] == 10 and cols.dur[outer] == 10
    assert any("no dur" in w for w in cols.warnings)
    assert any("malformed" in w for w in cols.warnings)
    assert cols.tracks == [("host", "main")]
    i = int(np.flatnonzero(model.name == cols.names.index("outer"))[0])
    assert model.self_time[i] == pytest.approx(10 - 3)


@pytest.mark.parametrize("raw, words", [
    (b"", "empty"), (b"   ", "empty"), (b"hello", "not JSON"),
    (b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}', "truncated"),
    (b'{"traceEvents": 5}', "Chrome trace"),
])
def test_unreadable_traces_say_why(raw, words):
    with pytest.raises(TraceError, match=words):
        parse_trace(raw)
