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
    """Values at ``points`` percent of the distribution, interpolated inside buckets."""
    counts = np.asarray(event.counts, dtype=np.float64)
    total = counts.sum()
    if total <= 0:
        return [0.0] * len(points)
    cum = np.concatenate(([0.0], np.cumsum(counts)))
    edges = np.asarray(event.edges, dtype=np.float64)
    out = []
    for p in points:
        if p <= 0:
            out.append(event.min)
            continue
        if p >= 100:
            out.append(event.max)
            continue
        target = total * p / 100.0
        i = int(np.searchsorted(cum, target, side="left"))
        i = min(max(i, 1), len(counts))
        lo, hi = cum[i - 1], cum[i]
        frac = 0.0 if hi == lo else (target - lo) / (hi - lo)
        value = edges[i - 1] + frac * (edges[i] - edges[i - 1])
        out.append(float(min(max(value, event.min), event.max)))
    return out


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
