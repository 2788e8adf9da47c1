"""Histograms, writer side: checks in the caller's thread, buckets in the writer's thread."""

from __future__ import annotations

from typing import Any

import numpy as np

from visualdl.writer.checks import require_real, to_array


def check_buckets(tag: str, buckets: Any) -> int:
    if isinstance(buckets, bool) or not isinstance(buckets, (int, np.integer)):
        raise TypeError(f"{tag!r}: buckets must be an integer, got {buckets!r}")
    if not 1 <= buckets <= 10_000:
        raise ValueError(f"{tag!r}: buckets must be in 1..10000, got {buckets}")
    return int(buckets)


def check(tag: str, values: Any, buckets: Any) -> tuple[tuple[np.ndarray, int], int]:
    """The payload ``encode`` takes, and its size in bytes."""
    buckets = check_buckets(tag, buckets)
    array = check_values(tag, values)
    return (array, buckets), array.nbytes


def check_values(tag: str, values: Any) -> np.ndarray:
    array = to_array(tag, values, "values")
    require_real(tag, array, "values")
    if array.size == 0:
        raise ValueError(f"{tag!r}: values must not be empty")
    return array.reshape(-1)


def encode(msg: Any, payload: tuple[np.ndarray, int]) -> None:
    """Equal-width buckets over the finite values; NaN and inf are counted apart.

    Buckets are ``np.histogram``'s with ``range=(min, max)``, computed the way its fast
    path does (scale to bucket index, the maximum into the last bucket) but without its
    range masks, chunking and edge re-checks: every value lies in range here, a value
    within rounding error of an edge may land in the neighbouring bucket, and this runs
    thousands of times per training run.
    """
    values, buckets = payload
    v = values.astype(np.float64, copy=False)
    lo, hi = float(v.min()), float(v.max())
    nonfinite = 0
    if not (np.isfinite(lo) and np.isfinite(hi)):
        finite = np.isfinite(v)
        nonfinite = v.size - int(np.count_nonzero(finite))
        v = v[finite]
        if v.size == 0:
            msg.edges.extend([0.0] * (buckets + 1))
            msg.counts.extend([0.0] * buckets)
            msg.nonfinite = float(nonfinite)
            return
        lo, hi = float(v.min()), float(v.max())
    first, last = (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)
    edges = np.linspace(first, last, buckets + 1)
    idx = ((v - first) * (buckets / (last - first))).astype(np.intp)
    np.minimum(idx, buckets - 1, out=idx)
    counts = np.bincount(idx, minlength=buckets).astype(np.float64)
    msg.edges.extend(edges.tolist())
    msg.counts.extend(counts.tolist())
    msg.min, msg.max = lo, hi
    msg.sum, msg.sum_squares = float(v.sum()), float(np.dot(v, v))
    msg.count, msg.nonfinite = float(v.size), float(nonfinite)


