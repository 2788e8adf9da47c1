"""Histograms (every step's buckets) and distributions (percentile bands over steps).

Distributions are computed here from the stored buckets, at the percentiles TensorBoard
uses: min, the +-1.5, +-1 and +-0.5 sigma equivalents of a normal distribution, the
median, and max.
"""

from __future__ import annotations

import numpy as np
from flask import Blueprint, Response

from visualdl.kinds.histogram.read import HistogramEvent
from visualdl.api.common import read_events, run_tag_json
from visualdl.api.jsonio import float_list

__all__ = ["blueprint", "percentiles"]

KIND = "histogram"
PERCENTILES = (0.0, 6.68, 15.87, 30.85, 50.0, 69.15, 84.13, 93.32, 100.0)
blueprint = Blueprint("histograms", __name__)


def _events(run: str, tag: str) -> list[HistogramEvent]:
    return read_events(run, KIND, tag)


def percentiles(event: HistogramEvent, points: tuple[float, ...] = PERCENTILES) -> list[float]:
    """Values at ``points`` percent of the distribution, as TensorBoard's
    ``compress_histogram`` computes them, so the bands are the ones TensorBoard draws: a
    point that falls exactly between two buckets belongs to the next non-empty bucket and
    starts at its left edge; inside a bucket the value is interpolated, clipped to the min
    and max; 0 percent is the exact min. Single-precision buckets (another tool's, see
    ``HistogramEvent.single``) are summed in float32 as TensorBoard sums them, and 100 percent
    is found as TensorBoard finds it: where that sum ends past 10,000 basis points, inside the
    last bucket (1e-5 below the max, for one real torch tag). Our own buckets' 100 percent is
    the exact max."""
    # at the buckets' precision: where a point falls on an edge, the rounding decides
    counts = np.asarray(event.counts, dtype=np.float32 if event.single else np.float64)
    total = counts.sum()
    if total <= 0:
        return [0.0] * len(points)
    edges = np.asarray(event.edges, dtype=np.float64)
    weights = (counts * 10000 / total).cumsum()  # in basis points, as TensorBoard's
    bps = [round(p * 100) for p in points]
    starts = np.searchsorted(weights, bps, side="right").tolist()
    top = 10000 if not event.single else float("inf")
    return [event.min if bp <= 0 else event.max if bp >= top else
            _at(weights, edges, event.min, event.max, bp, i) for bp, i in zip(bps, starts)]


def _at(weights: np.ndarray, edges: np.ndarray, lo: float, hi: float, bp: int,
        i: int) -> float:
    """The value at ``bp`` basis points, from the bucket ``i`` where it is first passed
    (TensorBoard's loop for one point)."""
    while i < len(weights):
        prev = weights[i - 1] if i else 0.0
        if weights[i] != prev:  # an empty bucket holds no point
            left = lo if not i or not prev else max(float(edges[i]), lo)
            right = min(float(edges[i + 1]), hi)  # (Python floats: inf, no warning)
            frac, width = (bp - prev) / (weights[i] - prev), right - left
            if np.isfinite(width):
                return float(left + frac * width)
            return float(left * (1 - frac) + right * frac)  # edges near +-1e308
        i += 1
    return float(hi)


@blueprint.get("/api/histograms")
def histograms() -> Response:
    """``?run=&tag=``: every step's bucket edges and counts, with min/max/mean/std."""
    return run_tag_json("histograms", _histograms)


def _histograms(run: str, tag: str) -> dict:
    events = _events(run, tag)
    return {"run": run, "tag": tag, "total": len(events), "entries": [
        {
            "step": e.step,
            "wall_time": e.wall_time,
            "edges": float_list(np.asarray(e.edges)),
            "counts": float_list(np.asarray(e.counts)),
            "min": e.min, "max": e.max, "count": e.count, "nonfinite": e.nonfinite,
            "mean": e.mean, "std": e.std,
        }
        for e in events
    ]}


@blueprint.get("/api/distributions")
def distributions() -> Response:
    """``?run=&tag=``: per step, the values at ``PERCENTILES`` (one list per percentile)."""
    return run_tag_json("distributions", _distributions)


def _distributions(run: str, tag: str) -> dict:
    events = _events(run, tag)
    rows = np.array([percentiles(e) for e in events]).reshape(len(events), len(PERCENTILES))
    return {
        "run": run,
        "tag": tag,
        "steps": [e.step for e in events],
        "wall_times": [e.wall_time for e in events],
        "percentiles": list(PERCENTILES),
        "values": [float_list(rows[:, k]) for k in range(len(PERCENTILES))],
    }
