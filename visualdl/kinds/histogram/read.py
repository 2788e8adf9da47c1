"""Histograms, reader side: an entry whose buckets and statistics do not agree is refused
(``ValueError``: the reader counts a bad record) rather than handed to the server."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from visualdl.kinds.consistency import finite, finite_array, non_negative
from visualdl.sources.values import readonly


@dataclass(frozen=True, slots=True)
class HistogramEvent:
    step: int
    wall_time: float
    edges: np.ndarray   # len(counts) + 1
    counts: np.ndarray
    min: float
    max: float
    sum: float          # +-inf when it overflows (format 1.3): use mean
    sum_squares: float  # inf when it overflows (format 1.3): use std
    count: float
    nonfinite: float
    mean: float         # of the finite values; always finite
    std: float          # population standard deviation; always finite
    single: bool = False  # single-precision buckets (another tool's; format 1.6)


def build(msg: Any) -> HistogramEvent:
    edges = finite_array("histogram edges", msg.edges)
    counts = finite_array("histogram counts", msg.counts)
    if len(counts) == 0 or len(edges) != len(counts) + 1:
        raise ValueError(
            f"histogram has {len(edges)} edges for {len(counts)} buckets "
            "(needs one more edge than buckets, and a bucket)"
        )
    if (np.diff(edges) < 0).any():
        raise ValueError("histogram edges are not in increasing order")
    non_negative("a histogram count", counts.min())
    finite("histogram min/max/count/nonfinite", msg.min, msg.max, msg.count, msg.nonfinite)
    non_negative("histogram count", msg.count)
    non_negative("histogram nonfinite count", msg.nonfinite)
    if msg.count and msg.min > msg.max:
        raise ValueError(f"histogram min {msg.min} is above its max {msg.max}")
    mean, std = _mean_std(msg)
    return HistogramEvent(msg.step, msg.wall_time, readonly(edges), readonly(counts), msg.min,
                          msg.max, msg.sum, msg.sum_squares, msg.count, msg.nonfinite,
                          mean, std, msg.single_precision)


def _mean_std(msg: Any) -> tuple[float, float]:
    """Stored (format 1.3), or derived from the sums of an older file, which must then be
    finite and give a finite mean square."""
    if msg.HasField("mean") or msg.HasField("std"):
        finite("histogram mean/std", msg.mean, msg.std)
        non_negative("histogram std", msg.std)
        if math.isnan(msg.sum) or math.isnan(msg.sum_squares):
            raise ValueError("histogram sum is NaN")
        return msg.mean, msg.std
    finite("histogram sum", msg.sum)
    finite("histogram sum of squares", msg.sum_squares)
    non_negative("histogram sum of squares", msg.sum_squares)
    if not msg.count:
        return 0.0, 0.0
    mean = msg.sum / msg.count
    square = mean * mean
    finite("histogram mean squared", square)
    return mean, math.sqrt(max(msg.sum_squares / msg.count - square, 0.0))
