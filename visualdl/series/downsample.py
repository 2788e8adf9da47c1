"""Query-time downsampling of scalar series.

Series are kept at full resolution in memory; a chart only needs about as many points as it
is wide. Picking every k-th point (or a random sample, as the peers do) drops spikes, which
are often exactly what a user is looking for, so each bucket keeps its minimum *and* its
maximum instead. NaN never wins min/max against a finite value, but a bucket made only of
NaN keeps one NaN, so divergence stays visible.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

__all__ = ["minmax_indices", "MIN_POINTS", "window_indices", "smoothed_at", "select",
           "is_sorted"]

#: The smallest ``max_points`` accepted: first point, last point and one bucket's min/max.
MIN_POINTS = 4


def minmax_indices(values: np.ndarray, max_points: int) -> np.ndarray:
    """Return sorted indices into ``values`` of at most ``max_points`` points.

    All indices when the series already fits; otherwise the first and last point plus the
    index of the minimum and maximum of each of ``(max_points - 2) // 2`` equal-width
    buckets (by index, so restarts with repeated steps are handled like any other order).
    """
    n = int(values.shape[0])
    if max_points < MIN_POINTS:
        raise ValueError(f"max_points must be at least {MIN_POINTS}")
    if n <= max_points:
        return np.arange(n, dtype=np.int64)
    buckets = (max_points - 2) // 2
    width = -(-n // buckets)  # ceil: every bucket but the last is full
    rows = -(-n // width)
    padded = rows * width
    nan = np.isnan(values)
    low = np.full(padded, np.inf)
    low[:n] = np.where(nan, np.inf, values)
    high = np.full(padded, -np.inf)
    high[:n] = np.where(nan, -np.inf, values)
    base = np.arange(rows, dtype=np.int64) * width
    mins = low.reshape(rows, width).argmin(axis=1) + base
    maxs = high.reshape(rows, width).argmax(axis=1) + base
    picked = np.sort(np.concatenate(([0, n - 1], mins, maxs)))
    picked = picked[picked < n]
    # Sorted, so duplicates are neighbours. (np.unique would do, but it imports numpy.ma on
    # the first chart request: see the first-chart time of `python bench/server.py`.)
    keep = np.empty(picked.shape[0], dtype=bool)
    keep[:1] = True
    np.not_equal(picked[1:], picked[:-1], out=keep[1:])
    return picked[keep]


# -- windows: what a zoomed chart asks for ---------------------------------------------------
#: the skipped points of a smoothed window weigh less than this in its EMA
SMOOTH_TOLERANCE = 1e-17
#: a window wider than this gets no server smoothing (it would read that many points); the
#: chart smooths the points it has instead
SMOOTH_MAX_SPAN = 20_000_000
#: values gathered at once when smoothing point by point (memory: 8 bytes each)
_GATHER = 1 << 22


def is_sorted(column: np.ndarray) -> bool:
    """True when ``column`` never decreases (NaN anywhere: False)."""
    n = int(column.shape[0])
    if n < 2:
        return True
    return bool(np.all(column[1:] >= column[:-1]))


def select(column: np.ndarray, lo: float | None, hi: float | None,
           ordered: bool) -> "tuple[int, int] | np.ndarray":
    """The points whose ``column`` value lies in ``[lo, hi]`` (either end open when None):
    an index range by binary search when the column is ``ordered``, else the sorted indices
    of every match (a resumed run logs a step twice; a clock set back makes wall time go
    backwards: the points in the window are then not one run of indices)."""
    n = int(column.shape[0])
    if ordered:
        i0 = 0 if lo is None else int(np.searchsorted(column, lo, side="left"))
        i1 = n if hi is None else int(np.searchsorted(column, hi, side="right"))
        return (i0, max(i0, i1))
    mask = np.ones(n, dtype=bool)
    if lo is not None:
        mask &= column >= lo
    if hi is not None:
        mask &= column <= hi
    return np.flatnonzero(mask)


def intersect(a: "tuple[int, int] | np.ndarray",
              b: "tuple[int, int] | np.ndarray") -> "tuple[int, int] | np.ndarray":
    """The points in both selections (a range when both are ranges)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        i0, i1 = max(a[0], b[0]), min(a[1], b[1])
        return (i0, max(i0, i1))
    if isinstance(a, tuple):
        a, b = b, a
    if isinstance(b, tuple):
        return a[(a >= b[0]) & (a < b[1])]
    return np.intersect1d(a, b, assume_unique=True)


def window_indices(data, points: int, start_step: int | None = None,  # noqa: ANN001
                   end_step: int | None = None, wall_min: float | None = None,
                   wall_max: float | None = None) -> tuple[np.ndarray, int]:
    """Sorted indices into the series ``data`` (``Scalars``) of at most about ``points``
    points of the window, and how many points the window holds.

    The window is the points whose step lies in ``[start_step, end_step]`` and whose wall
    time lies in ``[wall_min, wall_max]`` (any end None: open): a chart zoomed on its Step,
    Relative or Wall axis. Wall time usually grows with the step but need not (a resumed
    run, a clock set back), so the wall window is the points whose own wall time is inside
    it, never the steps between the first and last such point. Within the window the same
    min/max buckets as the full view; every point once it holds no more than ``points``.
    A series kept on disk answers a contiguous window from its pyramid (``minmax_range``).
    """
    steps, walls = data.steps, data.wall_times
    pyramid = getattr(data, "minmax_window", None)
    if wall_min is None and wall_max is None:
        if pyramid is not None:
            return pyramid(start_step, end_step, points)
        if start_step is None and end_step is None:
            sel: "tuple[int, int] | np.ndarray" = (0, int(steps.shape[0]))
        else:
            sel = select(steps, start_step, end_step, _ordered(data, "steps"))
    else:
        sel = select(walls, wall_min, wall_max, _ordered(data, "wall_times"))
        if start_step is not None or end_step is not None:
            sel = intersect(sel, select(steps, start_step, end_step,
                                        _ordered(data, "steps")))
    if isinstance(sel, tuple):
        i0, i1 = sel
        by_range = getattr(data, "minmax_range", None)
        if by_range is not None:
            return by_range(i0, i1, points)
        return i0 + minmax_indices(np.asarray(data.values[i0:i1]), points), i1 - i0
    if not sel.shape[0]:
        return sel.astype(np.int64), 0
    return sel[minmax_indices(np.asarray(data.values[sel]), points)], int(sel.shape[0])


def _ordered(data, column: str) -> bool:  # noqa: ANN001 - Scalars or SpilledScalars
    """Whether a column of ``data`` never decreases: asked of a series on disk (it knows
    without reading its files), else checked (a pass over the column, far cheaper than the
    JSON of the answer)."""
    known = getattr(data, "ordered", None)
    if known is not None:
        return bool(known(column))
    return is_sorted(getattr(data, column))


def smoothed_at(values: np.ndarray, idx: np.ndarray, weight: float) -> np.ndarray | None:
    """The chart's debiased EMA (``groups.smooth``) of the *whole* series, at ``idx``.

    A zoomed chart that smoothed only the points of its window would start its EMA afresh
    at the window's left edge and draw another curve there than the full view (TensorBoard
    smooths the whole series). A point ``k`` places before weighs ``w**k``, so only the
    ``warm = log(1e-17) / log(w)`` points before each one count within a float's precision
    (77 at w = 0.6, 39,000 at 0.999): the EMA runs from ``warm`` points before the window
    (not from the series' start, which a window at the end of 10M points would read whole),
    or, when the points asked are few and the weight low, is summed at each point over its
    own ``warm`` predecessors. None when the window is too wide to read
    (``SMOOTH_MAX_SPAN``).
    """
    from visualdl.series.groups import smooth  # noqa: PLC0415 - groups imports numpy only

    if not idx.shape[0] or not weight > 0:
        return np.asarray(values[idx], dtype=np.float64)
    first, last = int(idx[0]), int(idx[-1])
    if last - first > SMOOTH_MAX_SPAN:
        return None
    warm = int(np.ceil(np.log(SMOOTH_TOLERANCE) / np.log(weight))) if weight < 1 else last + 1
    # a gathered value costs far less than a value of the pass (a Python step per block):
    # gather point by point unless that reads more than 8 times as many values
    if idx.shape[0] * warm <= 8 * (last - first + warm):
        found = _ema_at_points(values, idx, weight, warm)
        if found is not None:
            return found
    start = max(0, first - warm)
    ema = smooth(np.asarray(values[start:last + 1], dtype=np.float64), weight)
    return ema[idx - start]


def gather_back(values: np.ndarray, idx: np.ndarray,
                span: int) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """Blocks of ``idx`` with each point's ``span`` predecessors (itself last), as
    ``(start, at, got, inside)``: ``got`` the float64 rows, ``inside`` False where a row
    reaches before the series' start. Reads only those points, a bounded block at a time:
    a few points of a long window cost far less than a pass over all of it."""
    ago = np.arange(span - 1, -1, -1, dtype=np.int64)
    rows = max(1, _GATHER // span)
    for a in range(0, idx.shape[0], rows):
        at = idx[a:a + rows]
        pos = at[:, None] - ago[None, :]
        got = np.asarray(values[np.maximum(pos, 0).ravel()], dtype=np.float64)
        yield a, at, got.reshape(pos.shape), pos >= 0


def _ema_at_points(values: np.ndarray, idx: np.ndarray, w: float,
                   warm: int) -> np.ndarray | None:
    """The EMA at each of ``idx`` as the weighted sum of its ``warm`` predecessors (itself
    included): a few points of a long window without the pass over all of it. None when a
    non-finite value is among them (they do not count towards the debiasing: the pass
    handles that)."""
    ago = np.arange(warm - 1, -1, -1, dtype=np.float64)  # how many points before idx
    kernel = (1.0 - w) * np.power(w, ago)
    out = np.empty(idx.shape[0])
    for a, at, got, inside in gather_back(values, idx, warm):
        gathered = np.where(inside, got, 0.0)
        if not np.isfinite(gathered).all():
            return None
        last = gathered @ kernel
        # every point up to each one is finite and counted: n = index + 1 when the sum
        # reaches the series' start, else at least warm (w**n below the tolerance)
        with np.errstate(under="ignore"):
            debias = 1.0 - np.power(w, np.minimum(at + 1, warm).astype(np.float64))
        out[a:a + at.shape[0]] = last / debias
    return out
