"""The distributed view: the traces of every rank of one run side by side.

Each rank's steps are split, as the TensorBoard profiler plugin's distributed view did,
into four parts that add up to the step: computation only, communication overlapped with
computation, communication only, and other (neither). Computation is the time some thread
or stream of the rank runs an operator or GPU kernel as its innermost event, one that is not
communication nor inside it (an op that only waits for the all-reduce it called is not
computing); communication is the union of the rank's collective events
(``record_param_comms``, ``nccl*``, ``gloo:*``, ``c10d::*``; vf.profiler's ``Communication``
spans). Unions, not sums: threads and streams that run at once count once.

Step times of synchronised ranks come out alike (the all-reduce waits for the slowest), so
the straggler is found by computation: the slowest rank is the one that computes longest,
and each other rank waits, per step, the difference (see docs/distributed_profile.md).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from visualdl.kinds.profile import nesting as _nesting
from visualdl.kinds.profile.model import TraceModel
from visualdl.kinds.profile.views import coverage

__all__ = ["PARTS", "PART_LABELS", "is_comm_name", "distributed", "rank_of", "comm_mask",
           "compute_mask", "collective_events", "collectives"]

#: The parts of a step, in the order the stacked bars draw them.
PARTS = ("computation", "overlap", "communication", "other")
PART_LABELS = {"computation": "Computation", "overlap": "Communication overlapped",
               "communication": "Communication", "other": "Other (waiting, idle)"}
_DTYPE_BYTES = {"float": 4, "float32": 4, "int": 4, "int32": 4, "double": 8, "float64": 8,
                "long": 8, "int64": 8, "half": 2, "float16": 2, "bfloat16": 2, "short": 2,
                "int16": 2, "char": 1, "int8": 1, "byte": 1, "uint8": 1, "bool": 1}


def is_comm_name(name: str) -> bool:
    """Whether an event of this name is communication (PyTorch's and NCCL's names)."""
    return (name == "record_param_comms" or name.startswith(("gloo:", "c10d::"))
            or name.lower().startswith("nccl"))


def _name_mask(model: TraceModel, test: Callable[[str], bool]) -> np.ndarray:
    """Complete events whose name passes ``test``: asked once per distinct name, not per
    event (a trace repeats a few names many times)."""
    flags = np.array([bool(test(n)) for n in model.names] or [False])
    return flags[model.name] & model.complete


#: The category of vf.profiler's collectives (and Paddle's ``TracerEventType.Communication``).
COMM_CAT = "Communication"


def _comm_cat_mask(model: TraceModel) -> np.ndarray:
    flags = np.array([c == COMM_CAT for c in model.cats] or [False])
    return flags[model.cat] & model.complete


def comm_mask(model: TraceModel) -> np.ndarray:
    """The rank's communication events: by PyTorch's and NCCL's names, or by category."""
    return _name_mask(model, is_comm_name) | _comm_cat_mask(model)


def compute_mask(model: TraceModel, comm: np.ndarray | None = None) -> np.ndarray:
    """Operators and GPU kernels that are not communication nor run inside it (``comm``:
    comm_mask's answer, when the caller has it)."""
    comm = comm_mask(model) if comm is None else comm
    inside = _nesting.inherit(np.where(comm, 0, -1).astype(np.int8), model.parent) >= 0
    return (model.is_op | model.is_kernel) & ~inside


def _compute_segments(model: TraceModel, comm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The self segments (start, end) of every thread whose innermost event computes."""
    comp = compute_mask(model, comm)
    starts, ends = [np.zeros(0)], [np.zeros(0)]
    for track in range(len(model.track_slices)):
        s, e, ev = model.segments(track)
        keep = comp[ev]
        starts.append(s[keep])
        ends.append(e[keep])
    return np.concatenate(starts), np.concatenate(ends)


def rank_of(model: TraceModel) -> tuple[int | None, int | None, str | None]:
    """``(rank, world_size, backend)`` from the trace's ``distributedInfo`` (None: absent)."""
    info = model.meta.get("distributedInfo")
    if not isinstance(info, dict):
        return None, None, None
    rank, world = info.get("rank"), info.get("world_size")
    return (rank if isinstance(rank, int) else None, world if isinstance(world, int) else None,
            str(info["backend"]) if info.get("backend") is not None else None)


def _split_steps(model: TraceModel, numbers: Sequence[int], comm: np.ndarray
                 ) -> list[dict[str, Any]]:
    """Each step of ``numbers``: its duration and PARTS (microseconds); ``comm``: the
    rank's communication events (comm_mask)."""
    a_start, a_end = _compute_segments(model, comm)
    b_start, b_end = model.ts[comm], model.end[comm]
    cover_a, cover_b = coverage(a_start, a_end), coverage(b_start, b_end)
    cover_u = coverage(np.concatenate([a_start, b_start]), np.concatenate([a_end, b_end]))
    by_number = {s.number: s for s in model.steps}
    out = []
    for number in numbers:
        step = by_number[number]
        edges = np.array([step.ts, step.ts + step.dur])
        a, b, u = (float(np.diff(c(edges))[0]) for c in (cover_a, cover_b, cover_u))
        # inclusion-exclusion in floats: a part that is empty comes out as -1e-12 or so
        # (shown as "-0.000"), so each part is held within what it can be
        both = min(max(a + b - u, 0.0), a, b)
        parts = {"computation": a - both, "overlap": both, "communication": b - both,
                 "other": max(step.dur - u, 0.0)}
        out.append({"step": number, "ts": step.ts, "dur": step.dur, "parts": parts})
    return out


def _op_of(name: str, args: dict) -> str:
    for key in ("Collective name", "collective_name"):
        if isinstance(args.get(key), str) and args[key]:
            return args[key]
    if name.startswith("c10d::"):
        return name[len("c10d::"):].rstrip("_")
    return name.split(":", 1)[1] if ":" in name else name


def _bytes_of(args: dict) -> float | None:
    """Bytes of one call: ``In msg nelems`` x dtype (record_param_comms), else the first
    input's dims x its type."""
    nelems, dtype = args.get("In msg nelems"), args.get("dtype")
    if nelems is None:
        dims, types = args.get("Input Dims") or [], args.get("Input type") or []
        first = dims[0] if dims else None
        while isinstance(first, list) and first and isinstance(first[0], list):
            first = first[0]  # a TensorList: its first tensor
        if isinstance(first, list) and all(isinstance(d, int) for d in first):
            nelems = math.prod(first)
        dtype = types[0] if types else None
    size = _DTYPE_BYTES.get(str(dtype).lower().replace("torch.", "")) if dtype else None
    if not isinstance(nelems, (int, float)) or size is None:
        return None
    return float(nelems) * size


def collective_events(model: TraceModel) -> np.ndarray:
    """The events that count calls: ``record_param_comms`` where the trace has them, else
    the backend's (``nccl*``/``gloo:*``), else ``c10d::*`` ops (one per call, not three),
    else the ``Communication`` spans of vf.profiler."""
    for test in (lambda n: n == "record_param_comms",
                 lambda n: n.startswith("gloo:") or n.lower().startswith("nccl"),
                 lambda n: n.startswith("c10d::")):
        mask = _name_mask(model, test)
        if mask.any():
            return np.flatnonzero(mask)
    return np.flatnonzero(_comm_cat_mask(model))


def collectives(model: TraceModel) -> list[dict[str, Any]]:
    """Per collective op: calls, bytes (None when the trace does not say), total time."""
    rows: dict[str, dict[str, Any]] = {}
    for i in collective_events(model):
        args = model.args(int(i)) or {}
        args = args if isinstance(args, dict) else {}
        op = _op_of(model.names[model.name[i]], args)
        row = rows.setdefault(op, {"op": op, "calls": 0, "bytes": 0.0, "time": 0.0})
        row["calls"] += 1
        row["time"] += float(model.dur[i])
        size = _bytes_of(args)
        row["bytes"] = None if size is None or row["bytes"] is None else row["bytes"] + size
    for row in rows.values():
        t, b = row["time"], row["bytes"]
        row["bandwidth"] = b / (t * 1e-6) if b is not None and t > 0 else None
    return sorted(rows.values(), key=lambda r: -r["time"])


def distributed(workers: Sequence[tuple[str, TraceModel]],
                missing: Sequence[tuple[str, str]] = ()
                ) -> dict[str, Any]:
    """The view of ``workers`` (tag, model), ordered by rank; ``missing``: workers whose
    trace could not be had (named in the warnings)."""
    warnings = [f"worker {w}: {why}" for w, why in missing]
    ranked = []
    for k, (tag, model) in enumerate(workers):
        rank, world, backend = rank_of(model)
        if rank is None:
            warnings.append(f"worker {tag}: the trace has no distributedInfo; "
                            f"its rank is taken from the workers' order ({k})")
        ranked.append((rank if rank is not None else k, tag, model, world, backend))
    ranked.sort(key=lambda r: (r[0], r[1]))
    worlds = {r[3] for r in ranked if r[3] is not None}
    world = max(worlds) if worlds else len(ranked)
    seen = {r[0] for r in ranked}
    for rank in sorted(seen):
        same = [r[1] for r in ranked if r[0] == rank]
        if len(same) > 1:
            warnings.append(f"workers {', '.join(same)} all say they are rank {rank}")
    absent = [r for r in range(world) if r not in seen]
    if absent:
        warnings.append(f"the traces say world size {world}, but the trace of rank(s) "
                        f"{', '.join(map(str, absent))} is not in this run")
    common = _common_steps(ranked, warnings)
    ranks = [_rank_row(r, common) for r in ranked]
    has_comm = any(r["comm_events"] for r in ranks)
    _stragglers(ranks)
    return {"parts": list(PARTS), "labels": PART_LABELS, "steps": common, "ranks": ranks,
            "world_size": world, "has_comm": has_comm, "warnings": warnings,
            "slowest": max(ranks, key=lambda r: r["totals"]["compute"])["rank"] if ranks else None}


def _common_steps(ranked: list, warnings: list[str]) -> list[int]:
    sets = [{s.number for s in r[2].steps} for r in ranked]
    common = sorted(set.intersection(*sets)) if sets else []
    for (rank, tag, *_), numbers in zip(ranked, sets):
        extra = sorted(numbers - set(common))
        if extra:
            warnings.append(f"worker {tag} (rank {rank}): steps {_ranges(extra)} are not in "
                            f"every rank's trace and are left out")
    if sets and not common:
        raise ValueError("the workers' traces share no step: " + "; ".join(
            f"worker {r[1]} has steps {_ranges(sorted(s)) or 'none'}"
            for r, s in zip(ranked, sets)))
    return common


def _ranges(numbers: list[int]) -> str:
    if not numbers:
        return ""
    out, lo, prev = [], numbers[0], numbers[0]
    for n in numbers[1:] + [None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(lo) if lo == prev else f"{lo}-{prev}")
        if n is not None:
            lo = prev = n
    return ", ".join(out)


def _rank_row(ranked: tuple, common: list[int]) -> dict[str, Any]:
    rank, tag, model, world, backend = ranked
    comm = comm_mask(model)
    steps = _split_steps(model, common, comm)
    totals = {p: sum(s["parts"][p] for s in steps) for p in PARTS}
    totals["step"] = sum(s["dur"] for s in steps)
    totals["compute"] = totals["computation"] + totals["overlap"]
    return {"rank": rank, "worker": tag, "backend": backend, "steps": steps, "totals": totals,
            "comm_events": int(comm.sum()), "collectives": collectives(model)}


def _stragglers(ranks: list[dict[str, Any]]) -> None:
    """Per step, each rank's wait for the one that computes longest (``wait``)."""
    for k in range(len(ranks[0]["steps"]) if ranks else 0):
        compute = [r["steps"][k]["parts"]["computation"] + r["steps"][k]["parts"]["overlap"]
                   for r in ranks]
        top = max(compute)
        for r, c in zip(ranks, compute):
            r["steps"][k]["wait"] = top - c
    for r in ranks:
        r["totals"]["wait"] = sum(s["wait"] for s in r["steps"])
