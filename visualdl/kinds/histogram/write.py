"""Histograms, writer side: checks in the caller's thread, buckets in the writer's thread."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from visualdl.kinds.checks import require_real, to_array
from visualdl.kinds.histogram.raw import check_raw, encode_raw


def check_buckets(tag: str, buckets: Any) -> int:
    if isinstance(buckets, bool) or not isinstance(buckets, (int, np.integer)):
        raise TypeError(f"{tag!r}: buckets must be an integer, got {buckets!r}")
    if not 1 <= buckets <= 10_000:
        raise ValueError(f"{tag!r}: buckets must be in 1..10000, got {buckets}")
    return int(buckets)


def check(tag: str, values: Any, buckets: Any = 30,
          raw: dict | None = None) -> tuple[Any, int]:
    """The payload ``encode`` takes, and its size in bytes. ``raw`` (the keyword arguments
    of :func:`~visualdl.kinds.histogram.raw.check_raw`) records buckets made by the caller,
    in place of ``values``."""
    if raw is not None:
        return check_raw(tag, **raw)
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

    Nothing here can overflow, whatever the finite values (see ``_bucket_index`` and
    ``_mean_std``); constant values get one bucket's width around them.
    """
    if isinstance(payload, dict):
        encode_raw(msg, payload)
        return
    values, buckets = payload
    v = values.astype(np.float64, copy=False)
    lo, hi = float(v.min()), float(v.max())
    nonfinite = 0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        finite = np.isfinite(v)
        nonfinite = v.size - int(np.count_nonzero(finite))
        v = v[finite]
        if v.size == 0:
            msg.edges.extend([0.0] * (buckets + 1))
            msg.counts.extend([0.0] * buckets)
            msg.nonfinite = float(nonfinite)
            msg.mean, msg.std = 0.0, 0.0
            return
        lo, hi = float(v.min()), float(v.max())
    first, last = _range(lo, hi)
    # Halving is exact (bar subnormals, which move no bucket) and keeps last - first finite
    # for values of both signs near 1e308.
    s = 1.0 if math.isfinite(last - first) else 0.5
    edges = np.linspace(first * s, last * s, buckets + 1)
    if s != 1.0:
        edges /= s
    idx = _bucket_index(v if s == 1.0 else v * s, first * s, last * s - first * s, buckets)
    counts = np.bincount(idx, minlength=buckets).astype(np.float64)
    msg.edges.extend(edges.tolist())
    msg.counts.extend(counts.tolist())
    msg.min, msg.max = lo, hi
    with np.errstate(over="ignore"):  # the plain sums may overflow: mean and std cannot
        msg.sum, msg.sum_squares = float(v.sum()), float(np.dot(v, v))
    msg.mean, msg.std = _mean_std(v, lo, hi, msg.sum, msg.sum_squares)
    msg.count, msg.nonfinite = float(v.size), float(nonfinite)


def _range(lo: float, hi: float) -> tuple[float, float]:
    """The buckets' span: [lo, hi], or for constant values a span around the value, half a
    unit wide each side or a millionth of the value where that is larger (1e16 - 0.5 is
    1e16), kept finite at the ends of the float range."""
    if lo != hi:
        return lo, hi
    pad = max(0.5, abs(lo) * 1e-6)
    first, last = lo - pad, hi + pad
    return (first if math.isfinite(first) else lo), (last if math.isfinite(last) else hi)


def _bucket_index(v: np.ndarray, first: float, width: float, buckets: int) -> np.ndarray:
    """Each value's bucket; ``width`` > 0 and finite. ``buckets / width`` overflows for a
    subnormal width, so such a range divides instead (rare: the multiply is faster)."""
    scale = buckets / width
    if math.isfinite(scale):
        idx = ((v - first) * scale).astype(np.intp)
    else:
        idx = ((v - first) / width * buckets).astype(np.intp)
    np.minimum(idx, buckets - 1, out=idx)
    return idx


def _mean_std(v: np.ndarray, lo: float, hi: float, total: float,
              sum_squares: float) -> tuple[float, float]:
    """Mean and standard deviation of finite ``v``, clamped to their mathematical bounds
    against rounding at 1e308.

    From the plain sums when they are finite and the variance is not lost to cancellation
    (it keeps at least 8 of its digits: the common case, and no extra pass over the
    values); else two-pass (so constant values give 0), with values scaled by a power of
    two (exact) when their squares could overflow."""
    n = v.size
    if math.isfinite(total) and math.isfinite(sum_squares):
        mean = total / n
        mean_square = sum_squares / n
        var = mean_square - mean * mean
        if var > 1e-8 * mean_square:
            return min(max(mean, lo), hi), min(math.sqrt(var), hi * 0.5 - lo * 0.5)
    k = max(0, math.frexp(max(-lo, hi))[1] - (1000 - n.bit_length()) // 2)
    if k == 0 and math.isfinite(sum_squares):
        w, unit = v, 1.0
    else:
        w, unit = v * math.ldexp(1.0, -k), math.ldexp(1.0, k)
    mean_w = float(w.sum()) / n
    d = w - mean_w
    std_w = math.sqrt(float(np.dot(d, d)) / n)
    with np.errstate(over="ignore"):
        mean = float(np.float64(mean_w) * unit)
        std = float(np.float64(std_w) * unit)
    return min(max(mean, lo), hi), min(std, hi * 0.5 - lo * 0.5)
