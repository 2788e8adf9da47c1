"""The scheduler state machine and the Profiler's windows (Paddle's semantics)."""

from __future__ import annotations

import numpy as np
import pytest

import visualdl.framework as vf
from visualdl.framework import autograd, dispatch
from visualdl.framework.profiler import ProfilerState, make_scheduler, recorder

S = ProfilerState


def test_make_scheduler_cycles():
    sched = make_scheduler(closed=1, ready=1, record=3, repeat=2)
    got = [sched(i) for i in range(12)]
    assert got == [S.CLOSED, S.READY, S.RECORD, S.RECORD, S.RECORD_AND_RETURN,
                   S.CLOSED, S.READY, S.RECORD, S.RECORD, S.RECORD_AND_RETURN,
                   S.CLOSED, S.CLOSED]


def test_make_scheduler_skip_first_and_forever():
    sched = make_scheduler(closed=0, ready=0, record=2, skip_first=3)
    assert [sched(i) for i in range(9)] == [S.CLOSED] * 3 + [
        S.RECORD, S.RECORD_AND_RETURN] * 3
    one = make_scheduler(closed=2, ready=0, record=1, repeat=1)
    assert [one(i) for i in range(5)] == [S.CLOSED, S.CLOSED, S.RECORD_AND_RETURN, S.CLOSED,
                                          S.CLOSED]


@pytest.mark.parametrize("kwargs,word", [
    ({"closed": 1, "ready": 0, "record": 0}, "record"),
    ({"closed": -1, "ready": 0, "record": 1}, "closed"),
    ({"closed": 0, "ready": 1.5, "record": 1}, "ready"),
    ({"closed": 0, "ready": 0, "record": 1, "repeat": -2}, "repeat"),
])
def test_make_scheduler_rejects_bad_counts(kwargs, word):
    with pytest.raises(ValueError, match=word):
        make_scheduler(**kwargs)


def _tiny():
    net = vf.nn.Linear(4, 3)
    x = vf.tensor(np.ones((2, 4), np.float32))

    def step():
        net(x).sum().backward()

    step()  # compile outside the windows
    return step


def _steps(trace):
    return [e["name"] for e in trace["traceEvents"] if e.get("cat") == "ProfileStep"]


def test_windows_go_to_on_trace_ready():
    step = _tiny()
    windows = []

    def ready(prof):
        windows.append((prof.profiled_steps, _steps(prof.trace())))

    prof = vf.profiler.Profiler(scheduler=make_scheduler(closed=1, ready=1, record=2, repeat=2),
                                on_trace_ready=ready)
    states = []
    with prof:
        for _ in range(10):
            states.append(prof.current_state)
            step()
            prof.step()
    assert states[:5] == [S.CLOSED, S.READY, S.RECORD, S.RECORD_AND_RETURN, S.CLOSED]
    assert windows == [((2, 3), ["ProfilerStep#2", "ProfilerStep#3"]),
                       ((6, 7), ["ProfilerStep#6", "ProfilerStep#7"])]


def test_tuple_scheduler_records_start_to_end_minus_one():
    step = _tiny()
    seen = []
    with vf.profiler.Profiler(scheduler=(2, 5), on_trace_ready=lambda p: seen.append(
            _steps(p.trace()))) as prof:
        for _ in range(8):
            step()
            prof.step()
    assert seen == [["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]]
    ops = [e for e in prof.trace()["traceEvents"] if e.get("cat") == "Operator"]
    assert len(ops) == 3 * 2  # linear + sum per step, three steps


def test_default_records_until_stop_and_hooks_are_removed():
    step = _tiny()
    ready = []
    prof = vf.profiler.Profiler(on_trace_ready=ready.append)
    prof.start()
    assert dispatch._profiler is not None and autograd._profile_backward is not None
    for _ in range(3):
        step()
        prof.step()
    step()
    prof.stop()
    assert ready == [prof]
    assert dispatch._profiler is None and autograd._profile_backward is None
    assert recorder.active is None
    assert _steps(prof.trace()) == [f"ProfilerStep#{i}" for i in range(4)]
    assert prof.profiled_steps == (0, 3)


def test_an_exception_in_the_block_still_stops_recording():
    step = _tiny()
    with pytest.raises(ZeroDivisionError):
        with vf.profiler.Profiler():
            step()
            1 / 0
    assert dispatch._profiler is None and recorder.active is None


def test_one_profiler_at_a_time():
    with vf.profiler.Profiler():
        with pytest.raises(RuntimeError, match="already recording"):
            vf.profiler.Profiler().start()
    assert recorder.active is None


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="end > start"):
        vf.profiler.Profiler(scheduler=(5, 2))
    with pytest.raises(TypeError, match="scheduler"):
        vf.profiler.Profiler(scheduler="2-5")
    with pytest.raises(TypeError, match="targets"):
        vf.profiler.Profiler(targets=["cpu"])
    with pytest.raises(TypeError, match="on_trace_ready"):
        vf.profiler.Profiler(on_trace_ready="dir")
    with pytest.raises(RuntimeError, match="before start"):
        vf.profiler.Profiler().step()
    with pytest.raises(RuntimeError, match="no profiled window"):
        vf.profiler.Profiler().summary()
    with pytest.raises(TypeError, match="ProfilerState"):
        with vf.profiler.Profiler(scheduler=lambda step: "record"):
            pass


def test_step_info_reports_throughput():
    step = _tiny()
    with vf.profiler.Profiler(timer_only=True) as prof:
        for _ in range(4):
            step()
            prof.step(num_samples=2)
    text = prof.step_info(unit="samples")
    assert text.startswith("batch_cost: ") and " ips: " in text
