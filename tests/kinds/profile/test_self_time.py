"""Self times never exceed totals (issue 23, audit item 1): ``ts + dur - ts`` in floats is
not ``dur``, which made a leaf's self time a rounding above its total (per event, and per
operator row once summed). Checked on traces whose times round in floats (Unix-epoch
microseconds, about 1.7e15, with sub-microsecond durations; and small decimal times), on
the model, the API, and a real torch.profiler trace; self times stay exact to the
trace's resolution (nanoseconds)."""

from __future__ import annotations

import json
import random
import re
from decimal import Decimal

import numpy as np
import pytest

from tests.helpers.http import Client, client_of
from tests.helpers.server import serving
from tests.kinds.profile import traces
from visualdl.kinds.profile import nesting
from visualdl.kinds.profile.model import TraceModel
from visualdl.kinds.profile.parse import parse_trace

EPOCH = Decimal("1700000000000000.000")  # Unix-epoch microseconds, as newer Kineto writes


def _rounding_trace(origin: Decimal, steps: int = 40) -> dict:
    """Steps of nested ops (a parent, two children, a grandchild, leaves) at nanosecond
    times whose float sums round: durations like 0.3, starts a few tenths apart."""
    rnd = random.Random(23)
    events, t = [], origin
    ev = {"ph": "X", "pid": 1, "tid": 1}
    for k in range(steps):
        kids = [Decimal(rnd.randint(lo, 900)) / 1000 for lo in (400, 100, 100)]
        d = sum(kids) + Decimal("0.3") + Decimal(rnd.randint(1, 999)) / 1000
        events.append({**ev, "cat": "cpu_op", "name": "aten::outer", "ts": t, "dur": d})
        c = t + Decimal("0.1")
        for j, kd in enumerate(kids):
            name = "aten::mid" if j == 0 else "aten::add_"
            events.append({**ev, "cat": "cpu_op", "name": name, "ts": c, "dur": kd})
            if j == 0:  # a grandchild, ending with its parent
                events.append({**ev, "cat": "cpu_op", "name": "aten::add_",
                               "ts": c + kd - Decimal("0.3"), "dur": Decimal("0.3")})
            c += kd
        t += d + Decimal(rnd.randint(1, 99)) / 1000
    return {"traceEvents": events}


def _dump(trace: dict) -> bytes:
    """The trace's JSON with its Decimals written as the exact decimals they are."""
    text = json.dumps(trace, default=lambda d: f"@{d}@")
    return re.sub(r'"@(-?[0-9.]+)@"', r"\1", text).encode()


def _model(trace: dict) -> TraceModel:
    return TraceModel(parse_trace(_dump(trace)))


def _check_model(model: TraceModel) -> int:
    """Every self time within its dur, every leaf's its dur exactly; the leaves' count."""
    done = np.flatnonzero(model.complete)
    assert np.all(model.self_time[done] <= model.dur[done])
    leaves = np.setdiff1d(done, model.parent[model.parent >= 0])
    assert model.self_time[leaves].tolist() == model.dur[leaves].tolist()
    return len(leaves)


@pytest.mark.parametrize("origin", [EPOCH, Decimal("10.000")])
def test_each_self_time_is_at_most_its_dur_and_a_leaf_s_is_its_dur(origin):
    trace = _rounding_trace(origin)
    model = _model(trace)
    assert model.complete.sum() == 5 * 40
    assert _check_model(model) == 3 * 40


@pytest.mark.parametrize("origin", [EPOCH, Decimal("10.000")])
def test_operator_rows_and_events_are_exact_and_self_never_above_total(tmp_path, origin):
    trace = _rounding_trace(origin)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "w0.1.pt.trace.json").write_bytes(_dump(trace))
    expected = traces.exact_op_table(json.loads(_dump(trace), parse_float=Decimal))
    with client_of(tmp_path) as api:
        rows = api.json("/api/profile/operators", run="run", tag="w0")["rows"]
        for row in rows:
            want = expected[row["name"]]
            assert row["self"] <= row["total"], row
            assert row["total"] == float(want["total"]) and row["self"] == float(want["self"])
        hits = api.json("/api/profile/search", run="run", tag="w0", q="aten", limit=1000)
        assert hits["total"] == 5 * 40
        for hit in hits["events"]:
            event = api.json("/api/profile/event", run="run", tag="w0", id=hit["id"])
            assert event["self"] <= event["dur"], event
            if hit["name"] == "aten::add_":  # leaves
                assert event["self"] == event["dur"], event


def test_without_a_resolution_floats_are_kept_within_dur():
    # times with more places than any resolution tried: the float path, clamped
    ts = np.array([0.0, 0.1, 0.1 + 0.1 / 3, 10.0 / 3])
    dur = np.array([10.0 / 3, 0.1 + 0.2, 0.7 / 3, 1e-7 / 3])
    assert nesting.resolution(ts, dur) == 0.0
    parent, _, own = nesting.nest_exact(ts, dur, 0.0)
    assert parent.tolist() == [-1, 0, 1, -1]
    assert np.all((own >= 0) & (own <= dur))
    assert own[2] == dur[2] and own[3] == dur[3]


def test_resolution_is_the_traces_decimals():
    assert nesting.resolution(np.array([0.1, 2.0]), np.array([0.3, 1.0])) == 1e3
    assert nesting.resolution(np.array([0.0001]), np.array([0.3])) == 1e6
    assert nesting.resolution(np.array([1.0, np.nan]), np.array([1.0, 1.0])) == 0.0


@pytest.fixture(scope="module")
def torch_api(torch_logdir):
    with serving(torch_logdir) as handle:
        client = Client(handle.url)
        yield client
        client.close()


@pytest.mark.parametrize("tag", ["worker0", "export"])
def test_torch_trace_self_never_above_total(torch_api, torch_logdir, tag):
    (path,) = [p for p in (torch_logdir / "torchrun").iterdir() if p.name.startswith(tag)]
    assert _check_model(TraceModel(parse_trace(path.read_bytes()))) > 20
    rows = torch_api.json("/api/profile/operators", run="torchrun", tag=tag)["rows"]
    assert rows and all(r["self"] <= r["total"] for r in rows)
    hits = torch_api.json("/api/profile/search", run="torchrun", tag=tag, q="aten",
                          limit=1000)["events"]
    assert hits
    for hit in hits:
        event = torch_api.json("/api/profile/event", run="torchrun", tag=tag, id=hit["id"])
        assert event["self"] <= event["dur"], event
