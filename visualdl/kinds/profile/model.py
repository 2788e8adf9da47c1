"""A loaded trace: its events as sorted numpy columns plus what every view needs (nesting,
self time, the phase each event's time belongs to, the profiled steps).

Both vocabularies are read through one small table: our recorder's categories
(``ProfileStep``, ``Operator``, ``Forward``, ``Backward``, ``Optimizer``, ``Dataloader``,
``Compile``, ``Memory``, ``Kernel``, ``Memcpy``, ``Runtime``) and PyTorch's (``cpu_op``,
``user_annotation``, ``kernel``, ``gpu_memcpy``, ``gpu_memset``, ``cuda_runtime``,
``cuda_driver``, ``cpu_instant_event``), where PyTorch marks phases by name instead
(``ProfilerStep#N``, ``enumerate(DataLoader)...``, ``Optimizer.step#...``,
``autograd::engine::evaluate_function: ...``).

Newer Kineto (ROCm's, and CUDA's since about 2023) marks each ``ProfilerStep#N`` twice: on
the CPU thread that ran it, and as a ``gpu_user_annotation`` on each GPU stream the step
used. A step is counted once, from its host span; its GPU span stays an event of its
stream (drawn on the timeline, and the stream is a GPU one even when it holds nothing
else yet).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from visualdl.kinds.profile import nesting as _nesting
from visualdl.kinds.profile.parse import PH_COMPLETE, PH_INSTANT, Columns, msgspec
from visualdl.kinds.profile.shallow import CUT, LEVELS, shallow

__all__ = ["PHASES", "PHASE_LABELS", "TraceModel", "Step"]

#: Overview parts, in the order the stacked bars draw them.
PHASES = ("data", "forward", "backward", "optimizer", "compile", "kernel", "memcpy", "runtime",
          "other")
PHASE_LABELS = {"data": "Data loading", "forward": "Forward", "backward": "Backward",
                "optimizer": "Optimizer", "compile": "Compilation", "kernel": "GPU kernel",
                "memcpy": "GPU memcpy/memset", "runtime": "GPU runtime", "other": "Other"}
_P = {name: i for i, name in enumerate(PHASES)}

CAT_PHASE = {
    "Dataloader": "data", "Forward": "forward", "Backward": "backward",
    "Optimizer": "optimizer", "Compile": "compile",
    "Kernel": "kernel", "kernel": "kernel",
    "Memcpy": "memcpy", "gpu_memcpy": "memcpy", "gpu_memset": "memcpy", "Memset": "memcpy",
    "Runtime": "runtime", "cuda_runtime": "runtime", "cuda_driver": "runtime",
}
NAME_PHASE = (  # PyTorch marks phases by the annotation's name
    ("enumerate(DataLoader)", "data"),
    ("Optimizer.", "optimizer"),
    ("autograd::engine::evaluate_function", "backward"),
    ("torch/_dynamo", "compile"),
    ("TorchDynamo", "compile"),
    ("Torch-Compiled Region", "compile"),
)
OP_CATS = frozenset({"cpu_op", "Operator"})
#: vf.profiler's "Backward" is both Model.fit's backward phase span and each backward op,
#: named "<op>_grad": those are operator rows (and mark their own time as backward).
BACKWARD_OP_CAT, BACKWARD_OP_SUFFIX = "Backward", "_grad"
KERNEL_CATS = frozenset({"kernel", "Kernel"})
MEMCPY_CATS = frozenset({"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"})
GPU_CATS = KERNEL_CATS | MEMCPY_CATS
STEP_CATS = frozenset({"ProfileStep"})
#: Kineto's spans of user annotations (ProfilerStep#N among them) on a GPU stream.
GPU_ANNOTATION_CATS = frozenset({"gpu_user_annotation"})
MEMORY_NAMES = frozenset({"[memory]"})
#: A step marker's number fits an int64 (more digits: an ordinary event's name).
_STEP_NAME = re.compile(r"^ProfilerStep#(\d{1,18})$")


@dataclass(frozen=True)
class Step:
    number: int
    ts: float
    dur: float
    track: int
    index: int  # the step's event (sorted position)


class TraceModel:
    """Sorted columns (by track, then start, longer first) and derived per-event data."""

    def __init__(self, cols: Columns, source: str = "") -> None:
        order = np.lexsort((-cols.dur, cols.ts, cols.track))
        self.n = n = len(order)

        def take(column: np.ndarray) -> np.ndarray:
            return np.take(column, order, mode="clip")  # (a permutation: no bounds to check)

        self.ts = take(cols.ts)
        self.dur = take(cols.dur)
        self.end = self.ts + self.dur
        self.name = take(cols.name)
        self.cat = take(cols.cat)
        self.track = take(cols.track)
        self.ph = take(cols.ph)
        self.args_start = take(cols.args_start)
        self.args_len = take(cols.args_len)
        self.args_blob = cols.args_blob
        self.names = cols.names
        self.cats = cols.cats
        self.meta = shallow(cols.meta)
        self.warnings = list(cols.warnings)
        self.source = source
        #: whole microseconds that every time above is after (see parse.time_base)
        self.base = int(cols.base)
        # per-track contiguous slices
        bounds = np.searchsorted(self.track, np.arange(len(cols.tracks) + 1))
        self.track_slices = [(int(bounds[i]), int(bounds[i + 1])) for i in range(len(cols.tracks))]
        self.complete = self.ph == PH_COMPLETE
        self.parent = np.full(n, -1, np.int64)
        self.depth = np.zeros(n, np.int32)
        self.self_time = np.zeros(n, np.float64)
        self._nest()
        self._classify()
        self.tracks = self._describe_tracks(cols)
        self.t0 = float(self.ts.min()) if self.n else 0.0
        self.t1 = float(self.end.max()) if self.n else 0.0
        self._segments: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._shape_ids: np.ndarray | None = None
        self.shape_names: list[str] = []

    # -- building -------------------------------------------------------------------
    def _nest(self) -> None:
        """Parent, depth and self time per complete event, one thread at a time; self
        times exact at the trace's resolution (:attr:`scale`, see nesting.nest_exact)."""
        self._complete_idx = []
        self.scale = _nesting.resolution(self.ts[self.complete], self.dur[self.complete])
        for lo, hi in self.track_slices:
            idx = lo + np.flatnonzero(self.complete[lo:hi])
            self._complete_idx.append(idx)
            if not len(idx):
                continue
            parent, depth, self_time = _nesting.nest_exact(self.ts[idx], self.dur[idx],
                                                           self.scale)
            self.parent[idx] = np.where(parent >= 0, idx[np.maximum(parent, 0)], -1)
            self.depth[idx] = depth
            self.self_time[idx] = self_time

    def _classify(self) -> None:
        cats, names = self.cats, self.names
        cat_phase = np.array([_P.get(CAT_PHASE.get(c, ""), -1) for c in cats] or [-1], np.int8)
        name_phase = np.full(max(len(names), 1), -1, np.int8)
        name_step = np.full(max(len(names), 1), -1, np.int64)
        for i, name in enumerate(names):
            for prefix, phase in NAME_PHASE:
                if name.startswith(prefix):
                    name_phase[i] = _P[phase]
                    break
            match = _STEP_NAME.match(name)
            if match:
                name_step[i] = int(match.group(1))
        self.is_op_cat = np.array([c in OP_CATS for c in cats] or [False])
        backward_cat = np.array([c == BACKWARD_OP_CAT for c in cats] or [False])
        grad_name = np.array([n.endswith(BACKWARD_OP_SUFFIX) for n in names] or [False])
        self.is_op = (self.is_op_cat[self.cat] | (backward_cat[self.cat] & grad_name[self.name])) \
            & self.complete
        is_kernel = np.array([c in KERNEL_CATS for c in cats] or [False])
        is_gpu = np.array([c in GPU_CATS for c in cats] or [False])
        step_cat = np.array([c in STEP_CATS for c in cats] or [False])
        self.is_kernel = is_kernel[self.cat] & self.complete
        self.is_gpu = is_gpu[self.cat] & self.complete
        own = np.where(name_phase[self.name] >= 0, name_phase[self.name], cat_phase[self.cat])
        own = np.where(self.complete, own, -1).astype(np.int8)
        marked = self.complete & ((name_step[self.name] >= 0) | step_cat[self.cat])
        on_gpu = np.array([c in GPU_ANNOTATION_CATS for c in cats] or [False])[self.cat]
        # a step's GPU span is no step of its own, unless the trace marks no other
        self.is_step = marked & ~on_gpu if (marked & ~on_gpu).any() else marked
        own[self.is_step] = -1  # a step's own time, in no phase: "other" below
        phase = _nesting.inherit(own, self.parent)
        # PyTorch marks no forward pass: there, ops outside any marked phase run forward;
        # a trace that marks its forward spans (ours) leaves the rest as "other"
        if not any(CAT_PHASE.get(c) == "forward" for c in cats):
            phase = np.where((phase < 0) & self.is_op, _P["forward"], phase)
        self.phase = np.where(phase < 0, _P["other"], phase).astype(np.int8)
        steps = []
        for k, i in enumerate(np.flatnonzero(self.is_step)):
            number = int(name_step[self.name[i]])
            steps.append(Step(number if number >= 0 else k, float(self.ts[i]),
                              float(self.dur[i]), int(self.track[i]), int(i)))
        steps.sort(key=lambda s: s.ts)
        self.steps = steps
        self.is_memory = (self.ph == PH_INSTANT) & np.isin(
            self.name, [i for i, n in enumerate(names) if n in MEMORY_NAMES])

    def _describe_tracks(self, cols: Columns) -> list[dict[str, Any]]:
        out = []
        for i, (pid, tid) in enumerate(cols.tracks):
            lo, hi = self.track_slices[i]
            gpu = bool(self.is_gpu[lo:hi].any()) or bool(self._gpu_marks(lo, hi))
            thread = cols.thread_names.get((pid, tid))
            process = cols.process_names.get(pid)
            if gpu:
                label = f"GPU {pid} stream {tid}"
            elif thread:
                label = thread
            elif isinstance(pid, str) or isinstance(tid, str):
                label = f"{pid} {tid}".strip() or "(unnamed)"
            else:
                label = f"{process or 'process ' + str(pid)} / thread {tid}"
            out.append({"id": i, "pid": pid, "tid": tid, "label": label, "gpu": gpu,
                        "events": int(self.complete[lo:hi].sum()),
                        "depth": int(self.depth[lo:hi].max()) + 1 if hi > lo else 0})
        # host threads first, then GPU streams; within each, by pid and tid as written
        order = sorted(range(len(out)), key=lambda i: (out[i]["gpu"], str(out[i]["pid"]),
                                                        str(out[i]["tid"])))
        for rank, i in enumerate(order):
            out[i]["order"] = rank
        return out

    def _gpu_marks(self, lo: int, hi: int) -> int:
        """How many of the track's events are user annotations on a GPU stream."""
        ids = [i for i, c in enumerate(self.cats) if c in GPU_ANNOTATION_CATS]
        return int(np.isin(self.cat[lo:hi], ids).sum()) if ids else 0

    # -- saving (visualdl.kinds.profile.store) ---------------------------------------
    #: The per-event columns a saved model keeps; the rest is small (names, tracks, steps).
    SAVED = ("ts", "dur", "end", "name", "cat", "track", "ph", "args_start", "args_len",
             "complete", "parent", "depth", "self_time", "is_op", "is_kernel", "is_gpu",
             "is_step", "phase", "is_memory")

    def state(self) -> tuple[dict[str, np.ndarray], bytes, dict[str, Any]]:
        """What :meth:`from_state` needs: the columns, the args bytes, and the rest as
        JSON-friendly values."""
        info = {"n": self.n, "names": self.names, "cats": self.cats, "meta": self.meta,
                "warnings": self.warnings, "source": self.source,
                "track_slices": self.track_slices, "tracks": self.tracks,
                "t0": self.t0, "t1": self.t1, "base": self.base, "scale": self.scale,
                "steps": [[s.number, s.ts, s.dur, s.track, s.index] for s in self.steps]}
        return {k: getattr(self, k) for k in self.SAVED}, self.args_blob, info

    @classmethod
    def from_state(cls, arrays: dict[str, np.ndarray], args_blob: Any,
                   info: dict[str, Any]) -> "TraceModel":
        """A model from :meth:`state`'s parts (``args_blob``: anything whose slices are
        bytes, e.g. an ``mmap``), without parsing or nesting anything again."""
        self = cls.__new__(cls)
        for key in cls.SAVED:
            setattr(self, key, arrays[key])
        self.args_blob = args_blob
        for key in ("n", "names", "cats", "meta", "warnings", "source", "t0", "t1"):
            setattr(self, key, info[key])
        self.base = int(info.get("base", 0))
        self.scale = float(info.get("scale", 0.0))
        self.track_slices = [(int(lo), int(hi)) for lo, hi in info["track_slices"]]
        self.tracks = info["tracks"]
        self.steps = [Step(int(a), float(b), float(c), int(d), int(e))
                      for a, b, c, d, e in info["steps"]]
        self._complete_idx = [lo + np.flatnonzero(self.complete[lo:hi])
                              for lo, hi in self.track_slices]
        self._segments = {}
        self._shape_ids = None
        self.shape_names = []
        return self

    # -- lookups --------------------------------------------------------------------
    def args(self, i: int) -> Any:
        """One event's args, decoded (None when it has none)."""
        n = int(self.args_len[i])
        if not n:
            return None
        import json
        start = int(self.args_start[i])
        try:
            return shallow(json.loads(self.args_blob[start:start + n]))
        except ValueError:
            return None
        except RecursionError:  # (parsed once, but from a shallower stack)
            return {"args": CUT}

    def segments(self, track: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Self segments of one thread (start, end, event index), in time order."""
        found = self._segments.get(track)
        if found is None:
            idx = self._complete_idx[track]
            *_, s, e, ev = _nesting.nest(self.ts[idx], self.end[idx], True)
            found = self._segments[track] = (s, e, idx[ev])
        return found

    def shape_ids(self) -> np.ndarray:
        """Per event, an id into ``shape_names`` of its input shapes ("" when unrecorded)."""
        if self._shape_ids is None:
            ids = np.zeros(self.n, np.int32)
            found: dict[str, int] = {"": 0}
            cand = np.flatnonzero(self.is_op & (self.args_len > 0))
            for i, args in zip(cand, self._args_many(cand)):
                dims = args.get("Input Dims", args.get("input_shapes"))
                if dims is not None:
                    ids[i] = found.setdefault(_shape_text(dims), len(found))
            self.shape_names = list(found)
            self._shape_ids = ids
        return self._shape_ids

    def window_mask(self, start: float | None, end: float | None) -> np.ndarray:
        """Complete events that start inside [start, end)."""
        mask = self.complete.copy()
        if start is not None:
            mask &= self.ts >= start
        if end is not None:
            mask &= self.ts < end
        return mask

    @cached_property
    def memory_events(self) -> dict[str, np.ndarray]:
        """``[memory]`` instants: ts, bytes, total allocated, device (label index)."""
        idx = np.flatnonzero(self.is_memory)
        idx = idx[np.argsort(self.ts[idx], kind="stable")]
        nbytes = np.zeros(len(idx), np.float64)
        total = np.full(len(idx), np.nan)
        device = np.zeros(len(idx), np.int32)
        labels: dict[str, int] = {}
        for k, a in enumerate(self._args_many(idx)):
            nbytes[k] = _num(a.get("Bytes", a.get("bytes", 0)))
            total[k] = _num(a.get("Total Allocated", a.get("total_allocated", np.nan)))
            device[k] = labels.setdefault(_device_label(a), len(labels))
        return {"index": idx, "bytes": nbytes, "total": total, "device": device,
                "labels": np.array(list(labels) or [""], dtype=object)}

    def args_many(self, idx: np.ndarray) -> list[dict]:
        """The args of the events ``idx`` (``{}`` where none), decoded in batches: for a
        caller that reads many (the graph view's profiler time per node)."""
        return list(self._args_many(np.asarray(idx)))

    def _args_many(self, idx: np.ndarray):
        """The args of many events, decoded in batches by msgspec (json when absent)."""
        slices = [self.args_blob[int(self.args_start[i]):int(self.args_start[i] +
                                                               self.args_len[i])] or b"{}"
                  for i in idx]
        if msgspec is not None:
            decode = msgspec.json.Decoder(list[dict[str, Any]]).decode
            for start in range(0, len(slices), 50_000):
                try:
                    yield from decode(b"[" + b",".join(slices[start:start + 50_000]) + b"]")
                    continue
                except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                    pass
                for raw in slices[start:start + 50_000]:
                    yield _loads(raw)
        else:
            for raw in slices:
                yield _loads(raw)

    def enclosing_op(self, idx: np.ndarray) -> np.ndarray:
        """For instants ``idx``, the innermost operator running on the same thread at that
        time (-1 when none)."""
        out = np.full(len(idx), -1, np.int64)
        for track, (lo, hi) in enumerate(self.track_slices):
            sel = np.flatnonzero(self.track[idx] == track)
            comp = self._complete_idx[track]
            if not len(sel) or not len(comp):
                continue
            t = self.ts[idx[sel]]
            pos = np.searchsorted(self.ts[comp], t, side="right") - 1
            cand = np.where(pos >= 0, comp[np.maximum(pos, 0)], -1)
            for _ in range(256):  # walk up until an op that covers t
                bad = (cand >= 0) & ((self.end[np.maximum(cand, 0)] < t) |
                                     ~self.is_op[np.maximum(cand, 0)])
                if not bad.any():
                    break
                cand[bad] = self.parent[cand[bad]]
            out[sel] = cand
        return out


def _loads(raw: bytes) -> dict:
    import json
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _num(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):  # (an integer past a float's range)
        return float("nan")


def _device_label(args: dict) -> str:
    if "device" in args and isinstance(args["device"], str):
        return args["device"]
    kind = args.get("Device Type", 0)
    index = args.get("Device Id", -1)
    if kind in (0, "cpu", "CPU"):
        return "CPU"
    name = {1: "CUDA", 2: "MKLDNN", 3: "OPENGL", 4: "OPENCL", 5: "IDEEP", 6: "HIP",
            8: "XLA", 13: "MPS", 20: "XPU"}.get(kind, str(kind))
    return f"{name}:{index}" if isinstance(index, int) and index >= 0 else name


def _shape_text(dims: Any, depth: int = 0) -> str:
    """``[[32, 64], [64]]``; lists nested ``LEVELS`` deep shown as
    :data:`~visualdl.kinds.profile.shallow.CUT` (the recursion stays short)."""
    if isinstance(dims, list):
        if depth >= LEVELS:
            return CUT
        return "[" + ", ".join(_shape_text(d, depth + 1) for d in dims) + "]"
    return str(dims)
