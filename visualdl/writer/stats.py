"""Numbers computed at write time (in the writer's thread): histograms and PR/ROC curves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from visualdl.writer.values import require_real, to_array


@dataclass
class HistogramData:
    edges: np.ndarray
    counts: np.ndarray
    min: float
    max: float
    sum: float
    sum_squares: float
    count: float
    nonfinite: float


def check_buckets(tag: str, buckets: Any) -> int:
    if isinstance(buckets, bool) or not isinstance(buckets, (int, np.integer)):
        raise TypeError(f"{tag!r}: buckets must be an integer, got {buckets!r}")
    if not 1 <= buckets <= 10_000:
        raise ValueError(f"{tag!r}: buckets must be in 1..10000, got {buckets}")
    return int(buckets)


def check_values(tag: str, values: Any) -> np.ndarray:
    array = to_array(tag, values, "values")
    require_real(tag, array, "values")
    if array.size == 0:
        raise ValueError(f"{tag!r}: values must not be empty")
    return array.reshape(-1)


def histogram(values: np.ndarray, buckets: int) -> HistogramData:
    """Equal-width buckets over the finite values; NaN and inf are counted apart.

    Buckets are ``np.histogram``'s with ``range=(min, max)``, computed the way its fast
    path does (scale to bucket index, the maximum into the last bucket) but without its
    range masks, chunking and edge re-checks: every value lies in range here, a value
    within rounding error of an edge may land in the neighbouring bucket, and this runs
    thousands of times per training run.
    """
    v = values.astype(np.float64, copy=False)
    lo, hi = float(v.min()), float(v.max())
    nonfinite = 0
    if not (np.isfinite(lo) and np.isfinite(hi)):
        finite = np.isfinite(v)
        nonfinite = v.size - int(np.count_nonzero(finite))
        v = v[finite]
        if v.size == 0:
            return HistogramData(np.zeros(buckets + 1), np.zeros(buckets), 0.0, 0.0, 0.0, 0.0,
                                 0.0, float(nonfinite))
        lo, hi = float(v.min()), float(v.max())
    first, last = (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)
    edges = np.linspace(first, last, buckets + 1)
    idx = ((v - first) * (buckets / (last - first))).astype(np.intp)
    np.minimum(idx, buckets - 1, out=idx)
    counts = np.bincount(idx, minlength=buckets).astype(np.float64)
    return HistogramData(
        edges=edges,
        counts=counts,
        min=lo,
        max=hi,
        sum=float(v.sum()),
        sum_squares=float(np.dot(v, v)),
        count=float(v.size),
        nonfinite=float(nonfinite),
    )


@dataclass
class CurveCounts:
    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    tn: np.ndarray
    fn: np.ndarray


def check_curve_inputs(
    tag: str, labels: Any, predictions: Any, num_thresholds: Any, weights: Any
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray | None]:
    """Labels are 0/1 (or bool), predictions are probabilities in [0, 1]."""
    if isinstance(num_thresholds, bool) or not isinstance(num_thresholds, (int, np.integer)):
        raise TypeError(f"{tag!r}: num_thresholds must be an integer, got {num_thresholds!r}")
    if not 2 <= num_thresholds <= 10_000:
        raise ValueError(f"{tag!r}: num_thresholds must be in 2..10000, got {num_thresholds}")
    lab = to_array(tag, labels, "labels").reshape(-1)
    pred = to_array(tag, predictions, "predictions").reshape(-1)
    require_real(tag, lab, "labels")
    require_real(tag, pred, "predictions")
    if lab.size != pred.size:
        raise ValueError(
            f"{tag!r}: labels and predictions must have the same length, "
            f"got {lab.size} and {pred.size}"
        )
    if lab.size == 0:
        raise ValueError(f"{tag!r}: labels and predictions must not be empty")
    if not np.isin(lab, (0, 1)).all():
        raise ValueError(f"{tag!r}: labels must be 0 or 1 (or bool)")
    if not np.isfinite(pred).all() or pred.min() < 0 or pred.max() > 1:
        raise ValueError(f"{tag!r}: predictions must be finite probabilities in [0, 1]")
    w = None
    if weights is not None:
        w = to_array(tag, weights, "weights").reshape(-1)
        require_real(tag, w, "weights")
        if w.size != lab.size:
            raise ValueError(
                f"{tag!r}: weights must have the same length as labels, "
                f"got {w.size} and {lab.size}"
            )
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError(f"{tag!r}: weights must be finite and non-negative")
    return lab, pred, int(num_thresholds), w


def curve_counts(
    labels: np.ndarray, predictions: np.ndarray, num_thresholds: int,
    weights: np.ndarray | None,
) -> CurveCounts:
    """Weighted TP/FP/TN/FN at ``num_thresholds`` evenly spaced thresholds in [0, 1].

    A prediction counts as positive at threshold t when prediction >= t.
    """
    w = np.ones(labels.size) if weights is None else weights.astype(np.float64)
    pos = labels.astype(np.float64)
    thresholds = np.linspace(0.0, 1.0, num_thresholds)
    # Bucket i holds predictions in [t_i, t_{i+1}); the last bucket holds exactly 1.0.
    idx = np.searchsorted(thresholds, predictions.astype(np.float64), side="right") - 1
    idx = np.clip(idx, 0, num_thresholds - 1)
    tp_hist = np.bincount(idx, weights=w * pos, minlength=num_thresholds)
    fp_hist = np.bincount(idx, weights=w * (1 - pos), minlength=num_thresholds)
    tp = np.cumsum(tp_hist[::-1])[::-1]
    fp = np.cumsum(fp_hist[::-1])[::-1]
    return CurveCounts(thresholds, tp, fp, fp[0] - fp, tp[0] - tp)


def safe_ratio(num: np.ndarray, den: np.ndarray, empty: float) -> np.ndarray:
    out = np.full(num.shape, empty, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out
