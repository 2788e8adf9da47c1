"""Nesting: for one thread's events (sorted by start, longer first) each event's
parent and depth, its self time, and optionally the "self segments": the pieces of time
during which each event is the innermost one running.

Self segments tile the covered time of a thread exactly once, which is what lets the
overview split a step's wall time into parts that add up to it. A child that outlives its
parent (bad nesting) is clipped to the parent's end, so nothing is counted twice.

The stack walk is sequential by nature (a stack), but its result has a closed form that numpy
computes in a few sorts and searches: the stack under event ``i`` is exactly the earlier
events whose (clipped) end is after ``ts[i]``, so ``depth[i]`` is a count (one
``searchsorted``), and the parent is the last earlier event one level up. Clipped ends
depend on parents, so that is iterated to a fixed point (one round for well-nested traces,
a few for PyTorch's odd overlaps). This spares a cold server Numba's import and compile
before the first timeline view. When the fixed point is not reached, the stack walk itself
runs: compiled by Numba when installed, else as plain Python.
"""

from __future__ import annotations

import numpy as np

#: Rounds of the clipped-end fixed point before handing over to the stack walk.
MAX_ROUNDS = 8
#: Ticks per microsecond tried for a trace's resolution, coarsest first: Kineto and our
#: recorder write nanoseconds (three decimals of a microsecond).
SCALES = (1e3, 1e6)
#: Tick counts below this are whole in a float64, and so are sums of a few of them: ticks
#: far past it could not tell two neighbouring times apart.
MAX_TICKS = float(2 ** 50)


def _stack_nesting(ts, end, want_segments):  # the reference; compiled when used
    n = ts.shape[0]
    parent = np.full(n, -1, np.int64)
    depth = np.zeros(n, np.int32)
    self_time = np.zeros(n, np.float64)
    cap = 2 * n + 1 if want_segments else 1
    seg_start = np.empty(cap, np.float64)
    seg_end = np.empty(cap, np.float64)
    seg_event = np.empty(cap, np.int64)
    nseg = 0
    stack_idx = np.empty(n + 1, np.int64)
    stack_end = np.empty(n + 1, np.float64)
    stack_cur = np.empty(n + 1, np.float64)
    sp = 0
    for i in range(n + 1):
        t = ts[i] if i < n else np.inf
        while sp > 0 and stack_end[sp - 1] <= t:
            j = stack_idx[sp - 1]
            e = stack_end[sp - 1]
            c = stack_cur[sp - 1]
            if e > c:
                self_time[j] += e - c
                if want_segments:
                    seg_start[nseg] = c
                    seg_end[nseg] = e
                    seg_event[nseg] = j
                    nseg += 1
            sp -= 1
            if sp > 0 and stack_cur[sp - 1] < e:
                stack_cur[sp - 1] = e
        if i == n:
            break
        e = end[i]
        if sp > 0:
            p = stack_idx[sp - 1]
            parent[i] = p
            c = stack_cur[sp - 1]
            if t > c:
                self_time[p] += t - c
                if want_segments:
                    seg_start[nseg] = c
                    seg_end[nseg] = t
                    seg_event[nseg] = p
                    nseg += 1
                stack_cur[sp - 1] = t
            if e > stack_end[sp - 1]:
                e = stack_end[sp - 1]
        depth[i] = sp
        stack_idx[sp] = i
        stack_end[sp] = e
        stack_cur[sp] = t
        sp += 1
    return parent, depth, self_time, seg_start[:nseg], seg_end[:nseg], seg_event[:nseg]


def _inherit_loop(own, parent):
    """phase[i] = own[i], or the parent's phase when the event has none of its own."""
    out = own.copy()
    for i in range(own.shape[0]):
        if out[i] < 0 and parent[i] >= 0:
            out[i] = out[parent[i]]
    return out



_compiled: dict = {}


def _kernel(name: str):
    """The stack walk (or the inherit loop), compiled by Numba on first use when it is
    installed: imported only here, so a server that never needs it never pays for it."""
    fn = _compiled.get(name)
    if fn is None:
        fn = {"stack": _stack_nesting, "inherit": _inherit_loop}[name]
        try:
            from numba import njit
        except ImportError:  # pragma: no cover - numba is optional for the server
            pass
        else:
            fn = njit(cache=True, nogil=True)(fn)
        _compiled[name] = fn
    return fn


def nest(ts: np.ndarray, end: np.ndarray, want_segments: bool = False):
    """``(parent, depth, self_time, seg_start, seg_end, seg_event)`` for one thread's
    events (``ts`` ascending, ties longest first); indexes are local to the slice."""
    ts = np.ascontiguousarray(ts, np.float64)
    end = np.ascontiguousarray(end, np.float64)
    found = closed_form(ts, end)
    if found is None:
        return nest_by_stack(ts, end, want_segments)
    parent, depth, clipped = found
    if not want_segments:  # self time: an event's clipped span less its children's
        span = clipped - ts
        has = parent >= 0
        self_time = span - np.bincount(parent[has], weights=span[has], minlength=len(ts))
        empty = np.zeros(0, np.float64)
        return parent, depth, self_time, empty, empty, np.zeros(0, np.int64)
    s, e, ev = _gaps(ts, clipped, parent)
    self_time = np.bincount(ev, weights=e - s, minlength=len(ts))
    order = np.argsort(s, kind="stable")
    return parent, depth, self_time, s[order], e[order], ev[order]


def resolution(ts: np.ndarray, dur: np.ndarray) -> float:
    """Ticks per microsecond at which every ``ts`` and ``dur`` is a whole number of ticks
    (0.0 when no scale of :data:`SCALES` fits): the trace's resolution, at which self times
    are exact (see :func:`nest_exact`)."""
    for scale in SCALES:
        if _whole(ts, scale) and _whole(dur, scale):
            return scale
    return 0.0


def _whole(x: np.ndarray, scale: float) -> bool:
    """Whether each ``x`` is a whole number of ticks: its tick count, divided back, gives
    the very same float (a float read from a decimal with at most that many places)."""
    ticks = x * scale
    return bool(np.all(np.abs(ticks) < MAX_TICKS)) and np.array_equal(np.rint(ticks) / scale, x)


def nest_exact(ts: np.ndarray, dur: np.ndarray, scale: float):
    """``(parent, depth, self_time)`` with self times that never exceed ``dur``.

    Self time is an event's (clipped) span less its children's, and ``ts + dur - ts`` in
    floats is not ``dur``: a leaf's self time came out a rounding above its total. So at a
    trace's resolution ``scale`` (:func:`resolution`) the nesting runs on whole ticks, where
    every difference and sum is exact: a leaf's self time is its ``dur`` to the bit and a
    parent's is exact to the tick. Without one (0), in floats, kept within [0, dur] and a
    leaf's (nothing inside it, not clipped) set to its ``dur``."""
    if scale:
        ticks = np.rint(ts * scale)
        parent, depth, own, *_ = nest(ticks, ticks + np.rint(dur * scale))
        return parent, depth, own / scale
    end = ts + dur
    parent, depth, own, *_ = nest(ts, end)
    return parent, depth, np.where(own >= end - ts, dur, np.clip(own, 0.0, dur))


def nest_by_stack(ts: np.ndarray, end: np.ndarray, want_segments: bool = False):
    """The same as :func:`nest`, by the sequential stack (the reference)."""
    return _kernel("stack")(np.ascontiguousarray(ts, np.float64),
                            np.ascontiguousarray(end, np.float64), bool(want_segments))


def inherit_by_loop(own: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """The same as :func:`inherit`, by the sequential loop (the reference)."""
    return _kernel("inherit")(np.ascontiguousarray(own, np.int8),
                              np.ascontiguousarray(parent, np.int64))


def closed_form(ts: np.ndarray, end: np.ndarray):
    """``(parent, depth, clipped_end)`` in closed form, or None when the clipped ends do not
    settle within ``MAX_ROUNDS`` (then the stack walk decides)."""
    n = len(ts)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float64)
    if not (np.all(end >= ts) and np.all(np.diff(ts) >= 0)):
        return None  # negative lengths, NaN or unsorted: the stack walk's own rules apply
    idx = np.arange(n, dtype=np.int64)
    # first index past ts[i]'s ties
    starts = np.flatnonzero(np.diff(ts)) + 1
    group_end = np.append(starts, n)[np.searchsorted(starts, idx, side="right")]
    clipped = end
    for _ in range(MAX_ROUNDS):
        # depth[i] = #{j < i: clipped[j] > ts[i]} = i - #{j < i: clipped[j] <= ts[i]};
        # the j >= i counted by the search are zero-length events tied at ts[i]
        zero = np.concatenate([np.cumsum((clipped == ts)[::-1])[::-1], [0]])
        before = np.searchsorted(np.sort(clipped), ts, side="right") - \
            (zero[idx] - zero[group_end])
        depth = idx - before
        if depth.min() < 0:
            return None
        parent = _parents(depth, idx)
        if parent is None:
            return None
        has = parent >= 0
        bound = np.where(has, clipped[np.maximum(parent, 0)], np.inf)
        settled = np.maximum(ts, np.minimum(end, bound))
        if np.array_equal(settled, clipped):
            return parent, depth.astype(np.int32), clipped
        clipped = settled
    return None


def _parents(depth: np.ndarray, idx: np.ndarray) -> np.ndarray | None:
    """Each event's parent: the last earlier event one level up (-1 at depth 0)."""
    n = len(depth)
    order = np.argsort(depth, kind="stable")  # by depth, then time
    keys = depth[order] * (n + 1) + order
    # the searches in key order: (depth - 1, i) rises with (depth, i), which keeps the
    # binary searches in cache
    pos = np.searchsorted(keys, keys - (n + 1), side="left") - 1
    cand = order[np.maximum(pos, 0)]
    d = depth[order]
    ok = (pos >= 0) & (depth[cand] == d - 1) & (cand < order)
    inner = d > 0
    if np.any(inner & ~ok):
        return None
    parent = np.empty(n, np.int64)
    parent[order] = np.where(inner, cand, -1)
    return parent


def _gaps(ts: np.ndarray, clipped: np.ndarray, parent: np.ndarray):
    """Self segments, unordered: each parent's time before each child (from the previous
    sibling's end, or its own start) and after its last child; empty pieces dropped."""
    n = len(ts)
    kids = np.flatnonzero(parent >= 0)
    kids = kids[np.argsort(parent[kids], kind="stable")]  # by parent, then time
    kp = parent[kids]
    first = np.ones(len(kids), bool)
    first[1:] = kp[1:] != kp[:-1]
    last = np.ones(len(kids), bool)
    last[:-1] = first[1:]
    prev_end = np.empty(len(kids), np.float64)
    prev_end[first] = ts[kp[first]]
    prev_end[1:][~first[1:]] = clipped[kids[:-1]][~first[1:]]
    after = ts.copy()  # each event's start, or its last child's (clipped) end
    after[kp[last]] = clipped[kids[last]]
    s = np.concatenate([prev_end, after])
    e = np.concatenate([ts[kids], clipped])
    ev = np.concatenate([kp, np.arange(n, dtype=np.int64)])
    keep = e > s
    return s[keep], e[keep], ev[keep]


def inherit(own: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Each event's phase: its own, else its nearest ancestor's (parents come first).

    Pointer doubling in numpy: each event points at itself when it has a phase (or no
    parent), else at its parent; following pointers of pointers reaches the nearest
    ancestor with a phase in log2(depth) rounds."""
    own = np.ascontiguousarray(own, np.int8)
    parent = np.ascontiguousarray(parent, np.int64)
    n = len(own)
    if n == 0:
        return own.copy()
    if np.any(parent >= np.arange(n)):
        return inherit_by_loop(own, parent)  # not parents-first: the loop's own rules
    target = np.where((own >= 0) | (parent < 0), np.arange(n, dtype=np.int64), parent)
    while True:
        nxt = target[target]
        if np.array_equal(nxt, target):
            break
        target = nxt
    return own[target]
