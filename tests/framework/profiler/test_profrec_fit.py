"""Profiles of real training: ``Model.fit`` on the digits with ``VisualDL(profile_steps=...)``,
read back from the logdir as the dashboard reads them."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest

pytest.importorskip("sklearn")

from visualdl import LogReader  # noqa: E402

from .digits import fit_model  # noqa: E402

CATS = {"ProfileStep", "Operator", "Backward", "Optimizer", "Dataloader", "Forward", "Compile",
        "UserDefined", "Memory", "Kernel", "Memcpy", "Runtime"}


def _trace_from_logdir(logdir: str, tag: str = "worker0"):
    reader = LogReader(logdir)
    (run,) = reader.runs()
    refs = reader.blobs(run, "profile", tag)
    assert len(refs) == 1
    msg = reader.load(refs[0])
    return refs[0], json.loads(gzip.decompress(msg.trace_gz))


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    logdir = str(tmp_path_factory.mktemp("fit") / "run")
    fit_model(logdir, profile_steps=(3, 7), record_shapes=True, profile_memory=True)
    return logdir, _trace_from_logdir(logdir)


def _x(trace, cat=None, name=None):
    return [e for e in trace["traceEvents"] if e.get("ph") == "X"
            and (cat is None or e["cat"] == cat) and (name is None or e["name"] == name)]


def _inside(ev, outer) -> bool:
    return (outer["ts"] - 1e-3 <= ev["ts"]
            and ev["ts"] + ev["dur"] <= outer["ts"] + outer["dur"] + 1e-3)


def test_profile_kind_in_logdir_next_to_the_curves(fitted):
    logdir, (ref, trace) = fitted
    reader = LogReader(logdir)
    (run,) = reader.runs()
    tags = reader.tags(run)
    assert "train/loss" in tags["scalar"] and tags["profile"] == ["worker0"]
    assert ref.step == 3 and ref.meta["end_step"] == 6
    assert trace["visualdl_env"]["steps"] == [3, 6]


def test_steps_are_exactly_the_window(fitted):
    _, (_, trace) = fitted
    steps = _x(trace, "ProfileStep")
    assert [s["name"] for s in steps] == [f"ProfilerStep#{n}" for n in (3, 4, 5, 6)]
    for a, b in zip(steps, steps[1:]):  # back to back, in order
        assert a["ts"] + a["dur"] <= b["ts"] + 1e-3
    assert {e["cat"] for e in trace["traceEvents"] if "cat" in e} <= CATS


def test_kineto_fields_and_environment(fitted):
    _, (_, trace) = fitted
    for e in trace["traceEvents"]:
        assert {"ph", "name", "pid", "tid"} <= set(e)
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and e["cat"] in CATS
    assert trace["displayTimeUnit"] == "ms" and trace["baseTimeNanoseconds"] > 1.6e18
    env = trace["visualdl_env"]
    assert env["framework"] == "visualdl.framework" and env["device"] == "cpu"
    assert env["num_threads"] >= 1 and env["numba"] and env["numpy"] and env["python"]
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    assert {"process_name", "thread_name"} <= names


def test_every_step_holds_forward_backward_optimizer_and_data_loading(fitted):
    _, (_, trace) = fitted
    for step in _x(trace, "ProfileStep"):
        inside = [e for e in _x(trace) if e is not step and _inside(e, step)]
        cats = Counter(e["cat"] for e in inside)
        names = {e["name"] for e in inside}
        # Linear, ReLU, Linear, cross entropy forward, and their gradients
        assert {"linear", "relu", "cross_entropy"} <= names, names
        assert {"linear_grad", "relu_grad", "cross_entropy_grad"} <= names, names
        assert cats["Operator"] >= 4 and cats["Backward"] >= 4
        assert "Optimizer.step#SGD.step" in names and "Optimizer.zero_grad#SGD.zero_grad" in names
        assert "DataLoader.__next__" in names and "Model.fit: next batch" in names
        assert {"forward", "backward"} <= names


def test_ops_nest_in_their_phase(fitted):
    _, (_, trace) = fitted
    forwards, backwards = _x(trace, "Forward", "forward"), _x(trace, "Backward", "backward")
    for op in _x(trace, "Operator"):
        if op["name"] in ("linear", "relu", "cross_entropy"):
            assert any(_inside(op, f) for f in forwards + _x(trace, "Forward", "eval")), op
    for op in _x(trace, "Backward"):
        if op["name"].endswith("_grad"):
            assert any(_inside(op, b) for b in backwards), op


def test_backward_ops_link_to_their_forward_op(fitted):
    _, (_, trace) = fitted
    fwd = {e["args"]["Sequence number"]: e for e in _x(trace, "Operator")}
    grads = [e for e in _x(trace, "Backward") if e["name"].endswith("_grad")]
    assert grads
    for g in grads:
        f = fwd[g["args"]["Sequence number"]]
        assert g["name"] == f["name"] + "_grad" == g["args"]["Forward Op"] + "_grad"
        assert g["ts"] >= f["ts"] + f["dur"] - 1e-3  # backward runs after its forward


def test_input_shapes_when_record_shapes(fitted):
    _, (_, trace) = fitted
    linears = _x(trace, "Operator", "linear")
    dims = {json.dumps(e["args"]["Input Dims"]) for e in linears}
    # batch 64: Linear(64, 32) then Linear(32, 10); the eval batches (128 rows) too
    assert json.dumps([[64, 64], [32, 64], [32]]) in dims
    assert json.dumps([[64, 32], [10, 32], [10]]) in dims
    ce = _x(trace, "Operator", "cross_entropy")[0]
    assert ce["args"]["Input Dims"] == [[64, 10], [64]]


def test_memory_events_when_profile_memory(fitted):
    _, (_, trace) = fitted
    mem = [e for e in trace["traceEvents"] if e.get("name") == "[memory]"]
    assert mem and all(e["ph"] == "i" and e["cat"] == "Memory" for e in mem)
    assert any(e["args"]["Bytes"] < 0 for e in mem) and any(e["args"]["Bytes"] > 0 for e in mem)
    total = 0
    for e in sorted(mem, key=lambda e: e["ts"]):  # running total, per event
        total += e["args"]["Bytes"]
        assert e["args"]["Total Allocated"] == total
        assert e["args"]["Device Type"] == 0 and e["args"]["Device Id"] == -1
    # linear's output (a view of the buffer its kernel allocated) counts, inside linear
    linear = [e for e in mem if e["args"].get("Op") == "linear"]
    assert {e["args"]["Bytes"] for e in linear} >= {64 * 32 * 4, 64 * 10 * 4}
    # the batches, made by the DataLoader: 64 x 64 float32 inputs, 64 int64 labels
    loaded = {e["args"]["Bytes"] for e in mem if e["args"].get("Op") == "DataLoader.__next__"}
    assert {64 * 64 * 4, 64 * 8} <= loaded
    # relu's output: 64 x 32 float32, allocated inside the relu op
    relu = _x(trace, "Operator", "relu")
    allocs = [e for e in mem if e["args"].get("Op") == "relu"]
    assert allocs and all(e["args"]["Bytes"] == 64 * 32 * 4 or e["args"]["Bytes"] == 128 * 32 * 4
                          for e in allocs)
    assert all(any(r["ts"] <= a["ts"] <= r["ts"] + r["dur"] for r in relu) for a in allocs)


def test_overview_parts_sum_to_the_step(fitted):
    from visualdl.framework.profiler.summary import PARTS, step_parts

    _, (_, trace) = fitted
    for s in step_parts([dict(e) for e in trace["traceEvents"]]):
        assert set(s["parts"]) == set(PARTS)
        assert sum(s["parts"].values()) == pytest.approx(s["dur"], rel=0.01)
        assert s["parts"]["Forward"] > 0 and s["parts"]["Backward"] > 0
        assert s["parts"]["Optimizer"] > 0 and s["parts"]["Dataloader"] > 0


def test_window_cut_short_by_the_end_of_training(tmp_path):
    # 640 samples / 64 = 10 steps: a window 8..20 ends with training at step 10
    logdir = str(tmp_path / "run")
    fit_model(logdir, profile_steps=(8, 20), eval_data=False)
    ref, trace = _trace_from_logdir(logdir)
    assert [s["name"] for s in _x(trace, "ProfileStep")] == [
        "ProfilerStep#8", "ProfilerStep#9", "ProfilerStep#10"]
    assert ref.step == 8 and ref.meta["end_step"] == 10


def test_timer_only_records_no_ops(tmp_path):
    logdir = str(tmp_path / "run")
    fit_model(logdir, profile_steps=(2, 4), timer_only=True)
    _, trace = _trace_from_logdir(logdir)
    cats = Counter(e["cat"] for e in _x(trace))
    assert cats["ProfileStep"] == 2 and cats["Dataloader"] >= 2 and cats["Optimizer"] >= 2
    assert cats["Operator"] == 0 and not _x(trace, "Backward", "linear_grad")


def test_bad_profile_steps_are_refused(tmp_path):
    import visualdl.framework as vf

    for bad in ((5, 5), (0, 3), (3,), "3-5", (1.5, 3)):
        with pytest.raises(ValueError, match="profile_steps"):
            vf.callbacks.VisualDL(str(tmp_path), profile_steps=bad)
    with pytest.raises(ValueError, match="profiler_options"):
        vf.callbacks.VisualDL(str(tmp_path), profile_steps=(1, 2), profiler_options={"x": 1})


def test_the_callback_keeps_its_profiler(tmp_path, capsys):
    _, cb = fit_model(str(tmp_path / "run"), profile_steps=(2, 4), eval_data=False)
    assert cb.profiler.profiled_steps == (2, 3)
    text = cb.profiler.summary()
    assert "Operator Summary" in text and "linear_grad" in text
    path = cb.profiler.export(str(tmp_path / "t.json"))
    trace = json.loads(open(path).read())
    assert [e["name"] for e in _x(trace, "ProfileStep")] == ["ProfilerStep#2", "ProfilerStep#3"]


def test_a_window_after_the_last_step_writes_nothing(tmp_path):
    # 10 steps: the window (11, 20) opens at the last step() and records no step
    logdir = str(tmp_path / "run")
    _, cb = fit_model(logdir, profile_steps=(11, 20), eval_data=False)
    reader = LogReader(logdir)
    (run,) = reader.runs()
    assert "profile" not in reader.tags(run) and cb.profiler.profiled_steps is None
