"""Histograms already bucketed by the caller (torch's ``add_histogram_raw``): TensorBoard's
right bucket limits become our edges as TensorBoard reads them: the empty buckets at
either end are dropped and the outer edges are the recorded min and max."""

from __future__ import annotations

from typing import Any

import numpy as np

from visualdl.kinds.checks import require_real, to_array


def check_raw(tag: str, min: Any, max: Any, num: Any, sum: Any, sum_squares: Any,
              bucket_limits: Any, bucket_counts: Any) -> tuple[dict, int]:
    """The payload (edges, counts and statistics) and its size; errors name the argument."""
    limits = to_array(tag, bucket_limits, "bucket_limits").astype(np.float64).reshape(-1)
    counts = to_array(tag, bucket_counts, "bucket_counts").astype(np.float64).reshape(-1)
    require_real(tag, limits, "bucket_limits")
    if len(limits) != len(counts) or not len(counts):
        raise ValueError(f"{tag!r}: bucket_limits and bucket_counts must have the same "
                         f"non-zero length, got {len(limits)} and {len(counts)}")
    if not (np.isfinite(counts) & (counts >= 0)).all():
        raise ValueError(f"{tag!r}: bucket_counts must be finite and non-negative")
    stats = {}
    for name, value in (("min", min), ("max", max), ("num", num), ("sum", sum),
                        ("sum_squares", sum_squares)):
        array = to_array(tag, value, name)
        if array.size != 1 or not np.isfinite(array.astype(np.float64)).all():
            raise ValueError(f"{tag!r}: {name} must be one finite number, got {value!r}")
        stats[name] = float(array.reshape(-1)[0])
    if stats["min"] > stats["max"]:
        raise ValueError(f"{tag!r}: min {stats['min']:g} is above max {stats['max']:g}")
    full = np.flatnonzero(counts > 0)
    if not len(full):
        raise ValueError(f"{tag!r}: bucket_counts are all zero: a histogram of no values")
    first, last = int(full[0]), int(full[-1])
    inner = limits[first:last]
    if len(inner) and (np.diff(inner) < 0).any():
        raise ValueError(f"{tag!r}: bucket_limits must be increasing")
    lo = np.minimum(stats["min"], inner[0]) if len(inner) else stats["min"]
    hi = np.maximum(stats["max"], inner[-1]) if len(inner) else stats["max"]
    edges = np.concatenate([[lo], inner, [hi]])
    payload = {"edges": edges, "counts": counts[first:last + 1], **stats}
    return payload, edges.nbytes * 2


def encode_raw(msg: Any, payload: dict) -> None:
    msg.edges.extend(payload["edges"].tolist())
    msg.counts.extend(payload["counts"].tolist())
    msg.min, msg.max = payload["min"], payload["max"]
    msg.sum, msg.sum_squares = payload["sum"], payload["sum_squares"]
    msg.count = payload["num"]
    n = payload["num"]
    if n > 0:
        mean = payload["sum"] / n
        msg.mean, msg.std = mean, float(np.sqrt(max(payload["sum_squares"] / n - mean * mean, 0.0)))
