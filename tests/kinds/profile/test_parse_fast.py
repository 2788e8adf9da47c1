"""The fast paths of loading a trace agree with the reference ones.

* nesting: the closed-form numpy nesting (``nesting.closed_form``) against the sequential stack
  walk, on well-nested threads, threads whose children outlive their parents (clipped),
  zero-length events tied at one start, and empty threads; phases inherited by pointer
  doubling against the parent-first loop; a whole model built either way;
* parsing: the msgspec batch decoder (``map`` + interning) against the ``json`` module on
  generated traces with the odd inputs PyTorch and others write (B/E pairs, missing dur,
  NaN and Infinity, trailing commas, string pids, metadata, gzip files).
"""

from __future__ import annotations

import gzip
import json
import random

import numpy as np
import pytest

from tests.kinds.profile import traces
from visualdl.kinds.profile import nesting, parse
from visualdl.kinds.profile.model import TraceModel
from visualdl.kinds.profile.parse import parse_trace
from visualdl.sources import torchtrace


def _sorted(ts: np.ndarray, end: np.ndarray):
    order = np.lexsort((-(end - ts), ts))
    return ts[order], end[order]


def _nested(rng: random.Random, n: int):
    """A well-nested thread: spans split into children, gaps between siblings."""
    ts, end = [], []

    def fill(a: float, b: float, level: int) -> None:
        t = a
        while t < b and len(ts) < n:
            length = rng.uniform(0, b - t)
            if length < 1e-3:
                return
            ts.append(t)
            end.append(t + length)
            if level < 6:
                fill(t, t + length, level + 1)
            t += length + rng.choice([0.0, 0.0, 0.5])

    fill(0.0, 1e6, 0)
    return _sorted(np.array(ts, np.float64), np.array(end, np.float64))


def _overlapping(rng: random.Random, n: int, spread: float):
    """Integer starts with many ties, lengths 0 to 400: zero-length events and children
    that outlive their parents."""
    ts = np.array([float(rng.randrange(int(spread) + 1)) for _ in range(n)])
    dur = np.array([float(rng.choice([0, 0, 1, 2, 5, 50, 400])) for _ in range(n)])
    return _sorted(ts, ts + dur)


def _pytorch_like(rng: random.Random, steps: int):
    """Nested ops, with the rare child that ends a little after its parent (as PyTorch's
    rounding to microseconds makes): the clipped fixed point, in a round or two."""
    ts, end = [], []
    t = 0.0
    for _ in range(steps):
        ts.append(t)
        end.append(t + 100)
        for k in range(10):
            a = t + 1 + 9 * k
            ts.append(a)
            end.append(a + 8 + (2 if k == 9 else 0))  # the last one outlives the step
            ts.append(a + 1)
            end.append(a + 3)
        t += 101
    return _sorted(np.array(ts), np.array(end))


def _same(fast, slow) -> None:
    names = ("parent", "depth", "self_time", "seg_start", "seg_end", "seg_event")
    for name, a, b in zip(names, fast, slow):
        assert a.shape == b.shape, name
        if a.dtype.kind == "f":  # sums taken in another order
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.parametrize("seed", range(6))
def test_numpy_nesting_equals_the_stack_walk(seed):
    rng = random.Random(seed)
    cases = [_nested(rng, rng.randrange(1, 400)), _pytorch_like(rng, rng.randrange(1, 30)),
             _overlapping(rng, rng.randrange(1, 300), spread=rng.choice([5, 50, 5000]))]
    closed = 0
    for ts, end in cases:
        for segments in (False, True):
            _same(nesting.nest(ts, end, segments), nesting.nest_by_stack(ts, end, segments))
        closed += nesting.closed_form(ts, end) is not None
    # the well-nested thread and the PyTorch-like one never need the stack walk
    assert nesting.closed_form(*cases[0]) is not None and nesting.closed_form(*cases[1]) is not None
    assert closed >= 2


def test_nesting_of_known_shapes():
    # a step [0, 100) holding op [10, 20) (child [12, 14)) and op [90, 110) (clipped to 100),
    # a zero-length marker at 10 and an event tied with the step, shorter
    ts = np.array([0.0, 0.0, 10.0, 10.0, 12.0, 90.0])
    end = np.array([100.0, 50.0, 20.0, 10.0, 14.0, 110.0])
    parent, depth, self_time, s, e, ev = nesting.nest(ts, end, True)
    assert parent.tolist() == [-1, 0, 1, 2, 2, 0]
    assert depth.tolist() == [0, 1, 2, 3, 3, 1]
    assert self_time.tolist() == [40.0, 40.0, 8.0, 0.0, 2.0, 10.0]
    assert list(zip(s.tolist(), e.tolist(), ev.tolist())) == [
        (0.0, 10.0, 1), (10.0, 12.0, 2), (12.0, 14.0, 4), (14.0, 20.0, 2), (20.0, 50.0, 1),
        (50.0, 90.0, 0), (90.0, 100.0, 5)]
    _same((parent, depth, self_time, s, e, ev), nesting.nest_by_stack(ts, end, True))
    empty = nesting.nest(np.zeros(0), np.zeros(0), True)
    assert [len(x) for x in empty] == [0] * 6


def test_unsettled_or_unsorted_threads_go_to_the_stack_walk():
    ts = np.array([5.0, 1.0])  # not sorted: the closed form does not apply
    assert nesting.closed_form(ts, ts + 1) is None
    _same(nesting.nest(ts, ts + 1, True), nesting.nest_by_stack(ts, ts + 1, True))


@pytest.mark.parametrize("seed", range(4))
def test_inherit_equals_the_loop(seed):
    rng = random.Random(seed)
    ts, end = _nested(rng, 500)
    parent = nesting.nest(ts, end)[0]
    own = np.array([rng.choice([-1, -1, -1, 0, 3]) for _ in parent], np.int8)
    own[0] = -1  # a root without a phase: its subtree keeps none where it has none
    loop = nesting.inherit_by_loop(own, parent)
    assert np.array_equal(nesting.inherit(own, parent), loop)
    assert (loop >= 0).any() and (loop < 0).any()


def _model_arrays(model: TraceModel) -> dict:
    out = {k: getattr(model, k).tolist() for k in
           ("parent", "depth", "self_time", "phase", "is_op", "is_step")}
    out["segments"] = [[a.tolist() for a in model.segments(t)]
                       for t in range(len(model.track_slices))]
    return out


def test_model_equal_with_the_stack_walk(monkeypatch):
    raw = traces.dump(traces.ours(steps=4, ops_per_phase=5))
    fast = _model_arrays(TraceModel(parse_trace(raw)))
    monkeypatch.setattr(nesting, "closed_form", lambda ts, end: None)
    monkeypatch.setattr(nesting, "inherit", nesting.inherit_by_loop)
    slow = _model_arrays(TraceModel(parse_trace(raw)))
    assert fast["parent"] == slow["parent"] and fast["depth"] == slow["depth"]
    assert fast["phase"] == slow["phase"] and fast["is_op"] == slow["is_op"]
    np.testing.assert_allclose(fast["self_time"], slow["self_time"], atol=1e-9)
    for a, b in zip(fast["segments"], slow["segments"]):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, atol=1e-9)
    assert sum(fast["is_step"]) == 4


# -- parsing ----------------------------------------------------------------------------

def _odd_trace(rng: random.Random, n: int) -> str:
    """A PyTorch-flavoured trace as text, with what is not strict JSON in it."""
    events = ['{"ph": "M", "name": "thread_name", "pid": 7, "tid": "main", '
              '"args": {"name": "python main"}}',
              '{"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "trainer"}}']
    t = 1000.0
    for i in range(n):
        kind = rng.random()
        pid = rng.choice([7, 7, "7"]) if kind < 0.1 else 7
        tid = rng.choice(["main", 3, 4])
        if kind < 0.05:  # a B/E pair
            events.append(f'{{"ph": "B", "name": "span{i % 3}", "cat": "user_annotation", '
                          f'"pid": 7, "tid": "main", "ts": {t}}}')
            events.append(f'{{"ph": "E", "pid": 7, "tid": "main", "ts": {t + 4.5}}}')
        elif kind < 0.1:  # no dur
            events.append(f'{{"ph": "X", "name": "nodur", "cat": "cpu_op", "pid": {json.dumps(pid)}, '
                          f'"tid": {json.dumps(tid)}, "ts": {t}}}')
        elif kind < 0.13:  # NaN in args, Infinity as a value
            events.append(f'{{"ph": "X", "name": "aten::nan", "cat": "cpu_op", "pid": 7, '
                          f'"tid": {json.dumps(tid)}, "ts": {t}, "dur": 2, '
                          f'"args": {{"Sequence number": NaN, "w": -Infinity}}}}')
        elif kind < 0.16:  # memory instants
            events.append(f'{{"ph": "i", "s": "t", "name": "[memory]", "cat": "cpu_instant_event", '
                          f'"pid": 7, "tid": {json.dumps(tid)}, "ts": {t}, '
                          f'"args": {{"Bytes": {rng.randrange(-512, 512)}, "Total Allocated": {i},}}}}')
        elif kind < 0.18:  # a flow event: not drawn
            events.append(f'{{"ph": "f", "id": {i}, "pid": 7, "tid": 3, "ts": {t}, "cat": "ac2g", '
                          f'"name": "ac2g"}}')
        else:
            name = rng.choice(["aten::mm", "aten::add", "aten::relu", "ProfilerStep#1"])
            events.append(f'{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 7, '
                          f'"tid": {json.dumps(tid)}, "ts": {t}, "dur": {rng.choice([0, 1, 3.25])}, '
                          f'"args": {{"Input Dims": [[{i % 5}, 3]], "External id": {i}}}}}')
        t += rng.choice([0, 0.5, 1, 7])
    return ('{"schemaVersion": 1, "deviceProperties": [], "traceEvents": [\n' +
            ",\n".join(events) + ',\n],\n"traceName": "x.pt.trace.json",}')


def _as_lists(cols: parse.Columns) -> dict:
    """Rows in an order that does not depend on the order ids were given out in."""
    def args(s: int, n: int):
        return json.loads(cols.args_blob[s:s + n]) if n else None

    rows = sorted(
        (repr(cols.tracks[k]), float(t), float(d), int(p), cols.names[a], cols.cats[c],
         json.dumps(args(s, n), sort_keys=True))
        for k, t, d, p, a, c, s, n in zip(cols.track, cols.ts, cols.dur, cols.ph, cols.name,
                                          cols.cat, cols.args_start, cols.args_len))
    keys = ("track", "ts", "dur", "ph", "name", "cat", "args")
    out = {key: [row[i] for row in rows] for i, key in enumerate(keys)}
    out["args"] = [json.loads(a) for a in out["args"]]
    out.update(meta=cols.meta, warnings=cols.warnings, threads=cols.thread_names,
               processes=cols.process_names)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_batch_decoder_equals_json_module_on_odd_traces(monkeypatch, tmp_path, seed):
    pytest.importorskip("msgspec")
    rng = random.Random(seed)
    text = _odd_trace(rng, 3000).encode()
    path = tmp_path / "w.1.pt.trace.json.gz"
    path.write_bytes(gzip.compress(text))
    loaded = torchtrace.load(str(path))
    assert loaded.gzipped and loaded.json == text
    monkeypatch.setattr(parse, "BATCH", 257)  # many batches, odd sizes
    fast = _as_lists(parse_trace(loaded.json))
    monkeypatch.setattr(parse, "msgspec", None)
    slow = _as_lists(parse_trace(loaded.json))
    for key in fast:
        assert fast[key] == slow[key], key
    assert fast["threads"] == {(7, "main"): "python main"} and fast["processes"] == {7: "trainer"}
    assert any("no dur" in w for w in fast["warnings"])
    names = fast["name"]
    spans = [i for i, name in enumerate(names) if name.startswith("span")]
    assert spans and all(fast["dur"][i] == 4.5 for i in spans)
    assert "ac2g" not in names
    # NaN args decoded as null after the repair; memory instants kept with their bytes
    assert any(a and a.get("Sequence number") is None and "w" in a for a in fast["args"])
    assert names.count("[memory]") == sum(1 for a, n in zip(fast["args"], names)
                                          if n == "[memory]" and "Bytes" in a)


def test_batches_with_a_non_object_event_keep_the_rest(monkeypatch):
    pytest.importorskip("msgspec")
    events = [{"ph": "X", "name": f"op{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1}
              for i in range(10)]
    raw = json.dumps({"traceEvents": events[:5] + [17, "x"] + events[5:]}).encode()
    monkeypatch.setattr(parse, "BATCH", 4)
    cols = parse_trace(raw)
    assert sorted(cols.names[i] for i in cols.name) == sorted(f"op{i}" for i in range(10))
    assert any("2 events were malformed" in w for w in cols.warnings)
