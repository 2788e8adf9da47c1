"""The nesting sweep: one pass over a thread's events (sorted by start, longer first) that
finds each event's parent and depth, its self time, and optionally the "self segments":
the pieces of time during which each event is the innermost one running.

Self segments tile the covered time of a thread exactly once, which is what lets the
overview split a step's wall time into parts that add up to it. A child that outlives its
parent (bad nesting) is clipped to the parent's end, so nothing is counted twice.

Numba compiles it when installed (the ``framework`` extra); otherwise the same code runs as
plain Python (about a second per million events).
"""

from __future__ import annotations

import numpy as np

try:
    from numba import njit
except ImportError:  # pragma: no cover - numba is optional for the server
    njit = None


def _sweep(ts, end, want_segments):  # pragma: no cover - compiled; tested through callers
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


def _inherit(own, parent):  # pragma: no cover - compiled
    """phase[i] = own[i], or the parent's phase when the event has none of its own."""
    out = own.copy()
    for i in range(own.shape[0]):
        if out[i] < 0 and parent[i] >= 0:
            out[i] = out[parent[i]]
    return out


if njit is not None:
    _sweep = njit(cache=True, nogil=True)(_sweep)
    _inherit = njit(cache=True, nogil=True)(_inherit)


def sweep(ts: np.ndarray, end: np.ndarray, want_segments: bool = False):
    """``(parent, depth, self_time, seg_start, seg_end, seg_event)`` for one thread's
    events (``ts`` ascending, ties longest first); indexes are local to the slice."""
    return _sweep(np.ascontiguousarray(ts, np.float64), np.ascontiguousarray(end, np.float64),
                  bool(want_segments))


def inherit(own: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Each event's phase: its own, else its nearest ancestor's (parents come first)."""
    return _inherit(np.ascontiguousarray(own, np.int8), np.ascontiguousarray(parent, np.int64))
