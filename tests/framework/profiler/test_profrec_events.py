"""RecordEvent spans, the summary's numbers against the trace, and the exporters' files."""

from __future__ import annotations

import gzip
import json
import os
import re
from collections import defaultdict

import numpy as np
import pytest

import visualdl.framework as vf
import visualdl.framework.nn.functional as F
from visualdl.framework import nn
from visualdl.framework.profiler import RecordEvent, SummaryView


def _net_step():
    vf.seed(0)
    net = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = vf.optim.SGD(net.parameters(), 0.1)
    x = vf.tensor(np.random.default_rng(0).random((4, 16), np.float32))
    y = vf.tensor(np.array([0, 1, 2, 1]))

    def step():
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    step()
    return step


def _x(trace, cat=None, name=None):
    return [e for e in trace["traceEvents"] if e.get("ph") == "X"
            and (cat is None or e["cat"] == cat) and (name is None or e["name"] == name)]


def _inside(ev, outer):
    return outer["ts"] <= ev["ts"] and ev["ts"] + ev["dur"] <= outer["ts"] + outer["dur"] + 1e-3


@RecordEvent("decorated")
def _decorated(step):
    step()
    return 7


def test_record_event_nesting_decorator_and_begin_end():
    step = _net_step()
    with vf.profiler.Profiler() as prof:
        with RecordEvent("outer"):
            with RecordEvent("inner"):
                step()
            assert _decorated(step) == 7
        ev = RecordEvent("manual")
        ev.begin()
        step()
        ev.end()
        with RecordEvent("as data", event_type=vf.profiler.TracerEventType.Dataloader):
            pass
        prof.step()
    trace = prof.trace()
    (outer,) = _x(trace, "UserDefined", "outer")
    (inner,) = _x(trace, "UserDefined", "inner")
    (deco,) = _x(trace, "UserDefined", "decorated")
    (manual,) = _x(trace, "UserDefined", "manual")
    assert _inside(inner, outer) and _inside(deco, outer) and not _inside(manual, outer)
    assert not _inside(inner, deco) and not _inside(deco, inner)
    assert [o for o in _x(trace, "Operator") if _inside(o, inner)]  # the ops nest inside
    assert [o for o in _x(trace, "Operator") if _inside(o, manual)]
    assert _x(trace, "Dataloader", "as data")


def test_record_event_without_a_profiler_records_nothing():
    with RecordEvent("nobody listens") as ev:
        pass
    assert ev.name == "nobody listens" and _decorated(lambda: None) == 7
    with pytest.raises(ValueError, match="name"):
        RecordEvent("")


def _rows(text: str, title: str) -> dict[str, list[str]]:
    """Rows of one printed table: first column -> the other cells."""
    block = text.split(title, 1)[1].split("\n\n", 1)[0].splitlines()
    rows = {}
    for line in block[3:]:
        if set(line) <= {"-"}:
            break
        cells = re.split(r"\s{2,}", line.strip())
        rows[cells[0]] = cells[1:]
    return rows


def test_summary_equals_sums_over_the_trace(capsys):
    step = _net_step()
    with vf.profiler.Profiler(record_shapes=True) as prof:
        for _ in range(5):
            step()
            prof.step()
    text = prof.summary(time_unit="us")
    assert capsys.readouterr().out.strip() == text.strip()
    trace = prof.trace()
    total = defaultdict(float)
    calls = defaultdict(int)
    for e in _x(trace):
        if e["cat"] in ("Operator", "Backward") and "Sequence number" in e.get("args", {}):
            total[e["name"]] += e["dur"]
            calls[e["name"]] += 1
    step_time = sum(e["dur"] for e in _x(trace, "ProfileStep"))
    rows = _rows(text, "Operator Summary----")
    assert set(rows) == set(total) == {"linear", "relu", "cross_entropy", "linear_grad",
                                       "relu_grad", "cross_entropy_grad"}
    order = [name for name in rows]
    assert order == sorted(total, key=lambda n: (-total[n], n))  # sorted by total
    for name, cells in rows.items():
        n, tot, self_t, avg, mn, mx, share = cells
        durs = [e["dur"] for e in _x(trace, name=name)]
        assert int(n) == calls[name] == len(durs)
        assert float(tot) == pytest.approx(total[name], abs=1e-3)
        assert float(avg) == pytest.approx(total[name] / calls[name], abs=1e-3)
        assert float(mn) == pytest.approx(min(durs), abs=1e-3)
        assert float(mx) == pytest.approx(max(durs), abs=1e-3)
        assert float(self_t) <= float(tot) + 1e-3
        assert float(share) == pytest.approx(100 * total[name] / step_time, abs=0.01)
    by_shape = _rows(text, "Operator Summary (by input shapes)")
    assert "linear" in by_shape and by_shape["linear"][0] in ("[[4, 16], [8, 16], [8]]",
                                                              "[[4, 8], [3, 8], [3]]")
    only = prof.summary(views=SummaryView.OverView)
    assert "Overview Summary" in only and "Operator Summary" not in only


def test_export_chrome_tracing_writes_one_file_per_window(tmp_path):
    step = _net_step()
    out = tmp_path / "traces"
    handler = vf.profiler.export_chrome_tracing(str(out), worker_name="worker0")
    with vf.profiler.Profiler(scheduler=vf.profiler.make_scheduler(closed=0, ready=0, record=2,
                                                                   repeat=2),
                              on_trace_ready=handler) as prof:
        for _ in range(5):
            step()
            prof.step()
    files = sorted(os.listdir(out))
    assert len(files) == 2 and all(re.fullmatch(r"worker0\.\d{13}\.vf\.trace\.json", f)
                                   for f in files)
    assert prof.last_trace_path == str(out / files[-1])
    docs = [json.loads((out / f).read_text()) for f in files]
    assert [[e["name"] for e in _x(d, "ProfileStep")] for d in docs] == [
        ["ProfilerStep#0", "ProfilerStep#1"], ["ProfilerStep#2", "ProfilerStep#3"]]
    for _ in range(3):  # within the same millisecond too: never overwrite a file
        handler(prof)
    assert len(os.listdir(out)) == 5
    gz = vf.profiler.export_chrome_tracing(str(tmp_path / "gz"), use_gzip=True)
    gz(prof)
    (name,) = os.listdir(tmp_path / "gz")
    assert name.endswith(".vf.trace.json.gz")
    assert json.loads(gzip.decompress((tmp_path / "gz" / name).read_bytes()))["traceEvents"]
    prof.export(str(tmp_path / "one.json"))
    assert json.loads((tmp_path / "one.json").read_text())["traceEvents"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="dir_name"):
        vf.profiler.export_chrome_tracing(str(tmp_path / "file"))


def test_export_visualdl_to_a_logdir(tmp_path):
    from visualdl import LogReader

    step = _net_step()
    logdir = str(tmp_path / "run")
    with vf.profiler.Profiler(scheduler=(1, 3),
                              on_trace_ready=vf.profiler.export_visualdl(logdir)) as prof:
        for _ in range(4):
            step()
            prof.step()
    reader = LogReader(logdir)
    (run,) = reader.runs()
    (ref,) = reader.blobs(run, "profile", "worker0")
    assert (ref.step, ref.meta["end_step"]) == (1, 2)
    trace = json.loads(gzip.decompress(reader.load(ref).trace_gz))
    assert [e["name"] for e in _x(trace, "ProfileStep")] == ["ProfilerStep#1", "ProfilerStep#2"]
    with pytest.raises(TypeError, match="writer_or_logdir"):
        vf.profiler.export_visualdl(42)


def test_overview_parts_follow_the_innermost_phase():
    from visualdl.framework.profiler.summary import step_parts

    step = _net_step()
    with vf.profiler.Profiler() as prof:
        with RecordEvent("whole step", event_type=vf.profiler.TracerEventType.Forward):
            with RecordEvent("load", event_type="Dataloader"):
                x = vf.tensor(np.ones((4, 16), np.float32))
            step()
        prof.step()
    (s,) = step_parts([dict(e) for e in prof.trace()["traceEvents"]])
    parts = s["parts"]
    assert parts["Backward"] > 0 and parts["Optimizer"] > 0 and parts["Dataloader"] > 0
    assert parts["Forward"] > 0 and x.shape == (4, 16)
    assert sum(parts.values()) == pytest.approx(s["dur"], rel=1e-6)


def test_threads_are_os_thread_ids():
    import threading

    step = _net_step()
    other: dict[str, int] = {}

    def work():
        other["tid"] = threading.get_native_id()
        with RecordEvent("in a thread"):
            step()

    with vf.profiler.Profiler() as prof:
        step()
        th = threading.Thread(target=work)
        th.start()
        th.join()
        prof.step()
    trace = prof.trace()
    (span,) = _x(trace, "UserDefined", "in a thread")
    assert span["tid"] == other["tid"] != threading.get_native_id()
    assert {e["tid"] for e in _x(trace, "ProfileStep")} == {threading.get_native_id()}
    thread_ops = [e for e in _x(trace, "Operator") if e["tid"] == other["tid"]]
    assert thread_ops and all(_inside(e, span) for e in thread_ops)
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names[threading.get_native_id()] == "main thread"
    assert names[other["tid"]] == f"thread {other['tid']}"
