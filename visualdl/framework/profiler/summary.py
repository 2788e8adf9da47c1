"""``Profiler.summary()``: text tables computed from the trace document itself.

Why from the trace and not from the recorder: the numbers a user reads in the terminal are
then exactly the sums a viewer (or a test) computes over the file's events. Self time is an
event's duration minus its direct children's on the same thread (a kernel compile nested in
an op is the compile's, not the op's).
"""

from __future__ import annotations

import enum
from collections import defaultdict
from typing import Any, Iterable

from .categories import (
    BACKWARD,
    COMPILE,
    DATALOADER,
    FORWARD,
    KERNEL,
    MEMORY,
    OPERATOR,
    OPTIMIZER,
    PROFILE_STEP,
    USER_DEFINED,
)
from .trace import is_op


class SortedKeys(enum.Enum):
    """How the operator and kernel tables are sorted (Paddle's names)."""

    CPUTotal = 0
    CPUAvg = 1
    CPUMax = 2
    CPUMin = 3
    GPUTotal = 4
    GPUAvg = 5
    GPUMax = 6
    GPUMin = 7
    CPUSelf = 8


class SummaryView(enum.Enum):
    """The tables ``summary(views=...)`` prints (Paddle's names)."""

    DeviceView = 0
    OverView = 1
    ModelView = 2
    DistributedView = 3
    KernelView = 4
    OperatorView = 5
    MemoryView = 6
    MemoryManipulationView = 7
    UDFView = 8


# the overview's parts, in the dashboard's order
PARTS = ("Dataloader", "Forward", "Backward", "Optimizer", "Compile", "Other")
_PHASES = {DATALOADER: "Dataloader", FORWARD: "Forward", BACKWARD: "Backward",
           OPTIMIZER: "Optimizer"}
_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0, "ns": 1e-3}


def annotate(events: list[dict[str, Any]]) -> None:
    """Add ``_self`` (µs) and ``_part`` (an entry of PARTS) to each complete host event.

    A part is Compile for compile spans; else the innermost phase span (Dataloader /
    Forward / Backward / Optimizer) around the event; a backward op is Backward, a forward
    op outside any phase span Forward; the rest is Other. Summed over a step's events,
    the parts give the step's wall time.
    """
    by_thread: dict[tuple, list] = defaultdict(list)
    for ev in events:
        if ev.get("ph") == "X" and ev.get("cat") != KERNEL:
            by_thread[(ev.get("pid"), ev.get("tid"))].append(ev)
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack: list[dict] = []
        for ev in evs:
            end = ev["ts"] + ev["dur"]
            while stack and stack[-1]["ts"] + stack[-1]["dur"] < end - 1e-3:
                stack.pop()
            parent = stack[-1] if stack else None
            ev["_self"] = ev["dur"]
            if parent is not None:
                parent["_self"] -= ev["dur"]
            cat = ev.get("cat")
            inherited = parent.get("_phase") if parent is not None else None
            if is_op(ev):  # a backward op is Backward; a forward op takes the phase around it
                ev["_phase"] = "Backward" if cat == BACKWARD else (inherited or "Forward")
            else:  # the innermost phase span wins (fit's backward inside a user span)
                ev["_phase"] = _PHASES.get(cat) or inherited
            ev["_part"] = "Compile" if cat == COMPILE else (ev["_phase"] or "Other")
            stack.append(ev)


def _steps(events: list[dict]) -> list[dict]:
    return [e for e in events if e.get("cat") == PROFILE_STEP and e.get("ph") == "X"]


def step_parts(events: list[dict]) -> list[dict[str, Any]]:
    """Per ProfilerStep: its name, wall time and the time of each of PARTS (µs)."""
    annotate(events)
    steps = _steps(events)
    out = []
    for st in steps:
        parts = dict.fromkeys(PARTS, 0.0)
        t0, t1 = st["ts"], st["ts"] + st["dur"]
        for ev in events:
            if (ev is not st and "_self" in ev and ev.get("tid") == st.get("tid")
                    and ev.get("pid") == st.get("pid") and t0 <= ev["ts"] and ev["ts"] < t1):
                parts[ev["_part"]] += ev["_self"]
        parts["Other"] += st["_self"]
        out.append({"name": st["name"], "dur": st["dur"], "parts": parts})
    return out


def operator_rows(events: Iterable[dict], group_by_shape: bool = False,
                  cats: tuple[str, ...] = (OPERATOR, BACKWARD)) -> list[dict[str, Any]]:
    """Operator table rows: name (and input shapes), calls, total, self, min, max (µs), and
    the GPU time of their kernels when there are any."""
    events = list(events)
    if not any("_self" in e for e in events):
        annotate(events)
    gpu: dict[Any, float] = defaultdict(float)
    for ev in events:
        if ev.get("cat") == KERNEL:
            gpu[(ev["name"], (ev.get("args") or {}).get("Sequence number"))] += ev["dur"]
    rows: dict[Any, dict] = {}
    for ev in events:
        if ev.get("cat") not in cats or not is_op(ev):
            continue
        args = ev.get("args") or {}
        key: Any = ev["name"]
        if group_by_shape:
            key = (ev["name"], str(args.get("Input Dims", "")))
        row = rows.get(key)
        if row is None:
            row = rows[key] = {"name": ev["name"], "category": ev["cat"], "calls": 0,
                               "total": 0.0, "self": 0.0, "min": float("inf"), "max": 0.0,
                               "gpu": 0.0, "gpu_min": float("inf"), "gpu_max": 0.0}
            if group_by_shape:
                row["input_dims"] = args.get("Input Dims", [])
        row["calls"] += 1
        row["total"] += ev["dur"]
        row["self"] += ev["_self"]
        row["min"] = min(row["min"], ev["dur"])
        row["max"] = max(row["max"], ev["dur"])
        g = gpu.get((ev["name"], args.get("Sequence number")))
        if g is not None:
            row["gpu"] += g
            row["gpu_min"] = min(row["gpu_min"], g)
            row["gpu_max"] = max(row["gpu_max"], g)
    return list(rows.values())


def _sort(rows: list[dict], key: SortedKeys) -> list[dict]:
    field = {SortedKeys.CPUTotal: lambda r: r["total"],
             SortedKeys.CPUAvg: lambda r: r["total"] / r["calls"],
             SortedKeys.CPUMax: lambda r: r["max"], SortedKeys.CPUMin: lambda r: r["min"],
             SortedKeys.CPUSelf: lambda r: r["self"],
             SortedKeys.GPUTotal: lambda r: r["gpu"],
             SortedKeys.GPUAvg: lambda r: r["gpu"] / r["calls"],
             SortedKeys.GPUMax: lambda r: r["gpu_max"],
             SortedKeys.GPUMin: lambda r: r["gpu_min"] if r["gpu"] else 0.0}[key]
    return sorted(rows, key=lambda r: (-field(r), r["name"]))


def _table(title: str, header: list[str], lines: list[list[str]]) -> str:
    widths = [max(len(h), *(len(ln[i]) for ln in lines)) if lines else len(h)
              for i, h in enumerate(header)]
    rule = "-" * (sum(widths) + 2 * (len(widths) - 1))

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))

    out = [title.center(len(rule), "-"), fmt(header), rule]
    out += [fmt(ln) for ln in lines]
    out.append(rule)
    return "\n".join(out)


def render(trace: dict[str, Any], sorted_by: SortedKeys = SortedKeys.CPUTotal,
           op_detail: bool = True, time_unit: str = "ms",
           views: SummaryView | list[SummaryView] | None = None) -> str:
    """The text of ``Profiler.summary``. ``op_detail``: with recorded shapes, also the table
    grouped by name and input shapes."""
    if time_unit not in _UNITS:
        raise ValueError(f"summary: time_unit must be one of {sorted(_UNITS)}, got {time_unit!r}")
    if isinstance(sorted_by, str):
        sorted_by = SortedKeys[sorted_by]
    if views is None:
        wanted = set(SummaryView)
    else:
        wanted = {views} if isinstance(views, SummaryView) else set(views)
    scale = _UNITS[time_unit]
    events = [dict(e) for e in trace.get("traceEvents", [])]
    annotate(events)

    def t(us: float) -> str:
        return f"{us / scale:.3f}"

    steps = step_parts(events)
    step_total = sum(s["dur"] for s in steps)
    if not step_total:
        host = [e for e in events if "_self" in e]
        step_total = (max((e["ts"] + e["dur"] for e in host), default=0.0)
                      - min((e["ts"] for e in host), default=0.0))
    out: list[str] = []
    env = trace.get("visualdl_env", {})
    if SummaryView.DeviceView in wanted and env:
        lines = [[k, str(v)] for k, v in env.items()]
        out.append(_table("Device Summary", ["Key", "Value"], lines))
    if SummaryView.OverView in wanted and steps:
        totals = dict.fromkeys(PARTS, 0.0)
        for s in steps:
            for k, v in s["parts"].items():
                totals[k] += v
        lines = [[k, t(v), t(v / len(steps)), f"{100 * v / step_total:.2f}"]
                 for k, v in totals.items()]
        lines.append(["Total (steps)", t(step_total), t(step_total / len(steps)), "100.00"])
        out.append(_table(f"Overview Summary ({len(steps)} steps)",
                          ["Part", f"Total({time_unit})", f"Per step({time_unit})", "Share(%)"],
                          lines))
    if SummaryView.ModelView in wanted and steps:
        lines = [[s["name"], t(s["dur"])] + [t(s["parts"][p]) for p in PARTS] for s in steps]
        out.append(_table("Model Summary (per step)",
                          ["Step", f"Wall({time_unit})"] + list(PARTS), lines))
    if SummaryView.OperatorView in wanted:
        shaped = op_detail and any("Input Dims" in (e.get("args") or {}) for e in events
                                   if is_op(e))
        for by_shape in (False, True) if shaped else (False,):
            out.append(_operator_table(events, by_shape, sorted_by, step_total, time_unit, t))
    if SummaryView.KernelView in wanted:
        kernels = [e for e in events if e.get("cat") == KERNEL]
        if kernels:
            krows: dict[str, list[float]] = defaultdict(list)
            for k in kernels:
                krows[k["name"]].append(k["dur"])
            ktotal = sum(k["dur"] for k in kernels) or 1.0
            lines = [[n, str(len(d)), t(sum(d)), t(sum(d) / len(d)), t(min(d)), t(max(d)),
                      f"{100 * sum(d) / ktotal:.2f}"]
                     for n, d in sorted(krows.items(), key=lambda kv: -sum(kv[1]))]
            out.append(_table("Kernel Summary", ["Name", "Calls", f"Total({time_unit})",
                                                 f"Avg({time_unit})", f"Min({time_unit})",
                                                 f"Max({time_unit})", "Share(%)"], lines))
    if SummaryView.UDFView in wanted:
        udf: dict[str, list[float]] = defaultdict(list)
        for e in events:
            if e.get("cat") == USER_DEFINED and e.get("ph") == "X":
                udf[e["name"]].append(e["dur"])
        if udf:
            lines = [[n, str(len(d)), t(sum(d)), t(sum(d) / len(d)), t(min(d)), t(max(d))]
                     for n, d in sorted(udf.items(), key=lambda kv: -sum(kv[1]))]
            out.append(_table("UserDefined Summary", ["Name", "Calls", f"Total({time_unit})",
                                                      f"Avg({time_unit})", f"Min({time_unit})",
                                                      f"Max({time_unit})"], lines))
    if SummaryView.MemoryView in wanted:
        mem = [e for e in events if e.get("cat") == MEMORY]
        if mem:
            peak: dict[str, int] = defaultdict(int)
            by_op: dict[str, int] = defaultdict(int)
            for e in mem:
                a = e.get("args", {})
                dev = "cpu" if a.get("Device Type", 0) == 0 else f"cuda:{a.get('Device Id', 0)}"
                peak[dev] = max(peak[dev], int(a.get("Total Allocated", 0)))
                if a.get("Bytes", 0) > 0:
                    by_op[a.get("Op") or "(outside ops)"] += int(a["Bytes"])
            lines = [[f"peak allocated on {d}", f"{v:,}"] for d, v in sorted(peak.items())]
            lines += [[f"allocated by {n}", f"{v:,}"]
                      for n, v in sorted(by_op.items(), key=lambda kv: -kv[1])[:10]]
            out.append(_table("Memory Summary", ["What", "Bytes"], lines))
    return "\n\n".join(out)


def _operator_table(events: list[dict], by_shape: bool, sorted_by: SortedKeys,
                    step_total: float, time_unit: str, t: Any) -> str:
    rows = _sort(operator_rows(events, group_by_shape=by_shape), sorted_by)
    has_gpu = any(r["gpu"] for r in rows)
    header = ["Name", "Calls", f"Total({time_unit})", f"Self({time_unit})",
              f"Avg({time_unit})", f"Min({time_unit})", f"Max({time_unit})", "Share(%)"]
    if by_shape:
        header.insert(1, "Input Dims")
    if has_gpu:
        header += [f"GPU Total({time_unit})", f"GPU Avg({time_unit})"]
    lines = []
    for r in rows:
        ln = [r["name"], str(r["calls"]), t(r["total"]), t(r["self"]), t(r["total"] / r["calls"]),
              t(r["min"]), t(r["max"]),
              f"{100 * r['total'] / step_total:.2f}" if step_total else "-"]
        if by_shape:
            ln.insert(1, str(r["input_dims"]))
        if has_gpu:
            ln += [t(r["gpu"]), t(r["gpu"] / r["calls"])]
        lines.append(ln)
    title = "Operator Summary (by input shapes)" if by_shape else "Operator Summary"
    return _table(title, header, lines)
