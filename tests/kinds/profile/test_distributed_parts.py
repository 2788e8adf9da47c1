"""The distributed view's arithmetic on a small GPU trace in PyTorch's vocabulary, numbers
worked out by hand: CPU ops and kernels compute, ``record_param_comms`` and NCCL kernels
communicate, and the collectives table reads ``record_param_comms``' sizes."""

from __future__ import annotations

import json

import pytest

from visualdl.kinds.profile.distributed import distributed
from visualdl.kinds.profile.model import TraceModel
from visualdl.kinds.profile.parse import parse_trace

COMMS_ARGS = {"Collective name": "allreduce", "In msg nelems": 1000, "dtype": "Float",
              "Group size": 2}


def model(events: list[dict], rank: int | None = 0) -> TraceModel:
    trace = {"traceEvents": events}
    if rank is not None:
        trace["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 2}
    return TraceModel(parse_trace(json.dumps(trace).encode()), "pytorch")


def X(name, cat, ts, dur, pid=1, tid=1, **args):
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": pid, "tid": tid,
            **({"args": args} if args else {})}


GPU_STEP = [
    X("ProfilerStep#1", "user_annotation", 0, 100),
    X("aten::mm", "cpu_op", 10, 20),                                  # computes 10-30
    X("record_param_comms", "cpu_op", 40, 5, **COMMS_ARGS),          # communicates 40-45
    X("sgemm", "kernel", 20, 30, pid=0, tid=7),                       # computes 20-50
    X("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "kernel", 45, 25, pid=0, tid=8),  # 45-70
]


def test_parts_of_a_gpu_step():
    body = distributed([("worker0", model(GPU_STEP))])
    [rank] = body["ranks"]
    # computation 10-50, communication 40-70: both 40-50, neither 0-10 and 70-100
    assert rank["steps"][0]["parts"] == pytest.approx(
        {"computation": 30, "overlap": 10, "communication": 20, "other": 40})
    assert body["has_comm"] and rank["backend"] == "nccl"
    assert rank["collectives"] == [{"op": "allreduce", "calls": 1, "bytes": 4000.0,
                                    "time": 5.0, "bandwidth": pytest.approx(4000 / 5e-6)}]


def test_an_op_waiting_inside_a_collective_is_not_computing():
    events = [X("ProfilerStep#1", "user_annotation", 0, 100),
              X("evaluate_function: AccumulateGrad", "cpu_op", 10, 60),  # waits in 20-60
              X("c10d::allreduce_", "cpu_op", 20, 40),
              X("aten::copy_", "cpu_op", 30, 5)]                        # inside the call
    [rank] = distributed([("w", model(events))])["ranks"]
    assert rank["steps"][0]["parts"] == pytest.approx(
        {"computation": 20, "overlap": 0, "communication": 40, "other": 40})
    assert rank["collectives"][0]["op"] == "allreduce"
    assert rank["collectives"][0]["bytes"] is None  # the trace gives no sizes


def test_the_straggler_is_the_rank_that_computes_most():
    fast = [X("ProfilerStep#1", "user_annotation", 0, 100), X("aten::mm", "cpu_op", 0, 20),
            X("gloo:all_reduce", "user_annotation", 20, 80, tid=2)]
    slow = [X("ProfilerStep#1", "user_annotation", 0, 100), X("aten::mm", "cpu_op", 0, 70),
            X("gloo:all_reduce", "user_annotation", 70, 30, tid=2)]
    body = distributed([("a", model(fast, 0)), ("b", model(slow, 1))])
    assert body["slowest"] == 1
    assert [r["totals"]["wait"] for r in body["ranks"]] == pytest.approx([50, 0])


def test_no_part_is_below_zero_when_times_do_not_add_up_exactly_in_floats():
    """Epoch-microsecond times with fractions: computation exactly inside communication,
    so overlap == computation; inclusion-exclusion in floats left -1e-12 (shown "-0.000")."""
    t0 = 1_733_300_000_000_000.1
    events = [X("ProfilerStep#1", "user_annotation", t0, 100.3),
              X("record_param_comms", "cpu_op", t0 + 0.7, 99.1, **COMMS_ARGS),
              X("aten::mm", "cpu_op", t0 + 10.3, 20.7, tid=2),
              X("aten::add", "cpu_op", t0 + 40.1, 0.3, tid=2)]
    [rank] = distributed([("w", model(events))])["ranks"]
    parts = rank["steps"][0]["parts"]
    assert min(parts.values()) >= 0.0, parts
    assert parts["computation"] == 0.0  # every computing microsecond is overlapped
    assert parts == pytest.approx({"computation": 0.0, "overlap": 21.0, "communication": 78.1,
                                   "other": 1.2}, abs=1e-3)
