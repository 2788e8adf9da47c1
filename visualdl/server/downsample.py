"""Query-time downsampling of scalar series.

Series are kept at full resolution in memory; a chart only needs about as many points as it
is wide. Picking every k-th point (or a random sample, as the peers do) drops spikes, which
are often exactly what a user is looking for, so each bucket keeps its minimum *and* its
maximum instead. NaN never wins min/max against a finite value, but a bucket made only of
NaN keeps one NaN, so divergence stays visible.
"""

from __future__ import annotations

import numpy as np

__all__ = ["minmax_indices", "MIN_POINTS"]

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
