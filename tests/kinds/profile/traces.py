"""Traces for the profiler tests: one in our recorder's categories, made here with known
numbers, and helpers that recompute from a trace what the API must answer."""

from __future__ import annotations

import json
from decimal import Decimal
from collections import defaultdict

PID, MAIN, LOADER = 1, 10, 11


def ours(steps: int = 3, ops_per_phase: int = 4, first_step: int = 5) -> dict:
    """Steps of data loading, forward ops (with shapes), backward, optimizer, a compile span
    in the first step, memory events, and sub-microsecond ops for the timeline's merging."""
    events = [{"ph": "M", "name": "thread_name", "pid": PID, "tid": MAIN, "args": {"name": "main"}}]
    t = 1000.0
    allocated = 0
    for k in range(steps):
        number = first_step + k
        start = t
        t += 5.0  # step's own time before the first phase
        def span(cat, name, dur, **args):
            nonlocal t
            e = {"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": MAIN, "ts": t,
                 "dur": dur}
            if args:
                e["args"] = args
            events.append(e)
            return e
        span("Dataloader", "DataLoader.__next__", 40.0)
        t += 40.0
        if k == 0:
            span("Compile", "numba.compile", 300.0)
            t += 300.0
        fwd = span("Forward", "forward", ops_per_phase * 30.0 + 10.0)
        t += 5.0
        for i in range(ops_per_phase):
            span("Operator", "matmul" if i % 2 == 0 else "relu", 25.0,
                 **{"Input Dims": [[32, 64], [64, 16]] if i % 2 == 0 else [[32, 16]]})
            # a child inside the op (nesting: its self time excludes it)
            events.append({"ph": "X", "cat": "Operator", "name": "empty", "pid": PID,
                           "tid": MAIN, "ts": t + 2.0, "dur": 3.0})
            allocated += 4096
            events.append({"ph": "i", "cat": "Memory", "name": "[memory]", "s": "t", "pid": PID,
                           "tid": MAIN, "ts": t + 2.5,
                           "args": {"Bytes": 4096, "Total Allocated": allocated,
                                    "Device Type": 0, "Device Id": -1}})
            t += 30.0
        t = fwd["ts"] + fwd["dur"]
        bwd = span("Backward", "backward", ops_per_phase * 20.0 + 10.0)
        t += 5.0
        for i in range(ops_per_phase):
            span("Operator", "matmul_grad", 15.0)
            t += 20.0
        t = bwd["ts"] + bwd["dur"]
        span("Optimizer", "SGD.step", 50.0)
        t += 50.0
        for i in range(200):  # tiny ops: merged on a coarse timeline
            span("Operator", "tiny", 0.05)
            t += 0.1
        allocated -= 4096 * ops_per_phase
        events.append({"ph": "i", "cat": "Memory", "name": "[memory]", "s": "t", "pid": PID,
                       "tid": MAIN, "ts": t,
                       "args": {"Bytes": -4096 * ops_per_phase, "Total Allocated": allocated,
                                "Device Type": 0, "Device Id": -1}})
        t += 7.0  # the step's own time at the end
        events.append({"ph": "X", "cat": "ProfileStep", "name": f"ProfilerStep#{number}",
                       "pid": PID, "tid": MAIN, "ts": start, "dur": t - start})
        t += 3.0
    events.append({"ph": "X", "cat": "Dataloader", "name": "worker.fetch", "pid": PID,
                   "tid": LOADER, "ts": 1000.0, "dur": 100.0})
    return {"traceEvents": events, "env": {"framework": "visualdl", "device": "cpu",
                                           "threads": 1}}


def complete(trace: dict) -> list[dict]:
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    return [e for e in events if e.get("ph") == "X"]


def self_times(events: list[dict]) -> list[float]:
    """Self time per complete event: its duration minus its direct children's (same thread),
    recomputed here the plain way. A child that outlives its parent is clipped to the
    parent's end, as the server does (PyTorch rounds ns to three decimals of a us, so a
    child may end 0.001 us after its parent)."""
    out = [e["dur"] for e in events]
    by_thread = defaultdict(list)
    for i, e in enumerate(events):
        by_thread[(e["pid"], e["tid"])].append(i)
    for idx in by_thread.values():
        idx.sort(key=lambda i: (events[i]["ts"], -events[i]["dur"]))
        stack: list[tuple[int, float]] = []  # (event, its end clipped to its parent's)
        for i in idx:
            e = events[i]
            ts, end = e["ts"], e["ts"] + e["dur"]
            while stack and stack[-1][1] <= ts:
                stack.pop()
            if stack:
                end = min(end, stack[-1][1])
                out[stack[-1][0]] -= end - ts
            out[i] = end - ts
            stack.append((i, end))
    return out


def op_table(trace: dict, cats=("Operator", "cpu_op")) -> dict[str, dict]:
    events = complete(trace)
    selfs = self_times(events)
    table: dict[str, dict] = {}
    for e, s in zip(events, selfs):
        if e.get("cat") in cats:
            row = table.setdefault(e["name"], {"calls": 0, "total": 0.0, "self": 0.0})
            row["calls"] += 1
            row["total"] += e["dur"]
            row["self"] += s
    return table


def dump(trace: dict) -> bytes:
    return json.dumps(trace).encode()


def exact_op_table(trace: dict, cats: tuple[str, ...] = ("cpu_op",)) -> dict[str, dict]:
    """Per operator name: calls, total and self time, exact: ``trace`` loaded with
    ``parse_float=Decimal`` (a real trace's times are too far from zero for floats)."""
    threads: dict[tuple, list] = defaultdict(list)
    for k, e in enumerate(trace["traceEvents"]):
        if e.get("ph") == "X":
            threads[(e["pid"], e["tid"])].append((Decimal(e["ts"]), -Decimal(e["dur"]), k, e))
    table: dict[str, dict] = defaultdict(lambda: {"calls": 0, "total": Decimal(0),
                                                  "self": Decimal(0)})
    for events in threads.values():
        events.sort(key=lambda x: x[:3])
        selfs = _self_times([(ts, ts - neg) for ts, neg, _, _ in events])
        for (ts, neg, _, e), own in zip(events, selfs):
            if e.get("cat") in cats:
                row = table[e["name"]]
                row["calls"] += 1
                row["total"] += -neg
                row["self"] += own
    return dict(table)


def _self_times(spans: list[tuple[Decimal, Decimal]]) -> list[Decimal]:
    """nesting._stack_nesting's self times, in Decimals."""
    own = [Decimal(0)] * len(spans)
    stack: list[list] = []  # [index, end, covered-until]
    for i, (t, e) in enumerate(spans + [(Decimal("Infinity"), None)]):
        while stack and stack[-1][1] <= t:
            j, end, cur = stack.pop()
            own[j] += max(end - cur, Decimal(0))
            if stack and stack[-1][2] < end:
                stack[-1][2] = end
        if e is None:
            break
        if stack:
            top = stack[-1]
            if t > top[2]:
                own[top[0]] += t - top[2]
                top[2] = t
            e = min(e, top[1])
        stack.append([i, e, t])
    return own
