"""What the two curve kinds (``pr_curve``, ``roc_curve``) share: the write-time checks and
counts, the event a reader hands out, and the JSON entry the API sends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from visualdl.kinds.consistency import finite_array, same_lengths
from visualdl.sources.values import readonly
from visualdl.kinds.checks import require_real, to_array

__all__ = ["CurveEvent", "area_under", "build_event", "check", "curve_counts", "encode",
           "entry_json", "safe_ratio"]


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


def check(tag: str, labels: Any, predictions: Any, num_thresholds: Any,
          weights: Any) -> tuple[tuple, int]:
    """The payload ``encode`` takes, and the bytes it holds (for the writer's memory bound)."""
    payload = check_curve_inputs(tag, labels, predictions, num_thresholds, weights)
    return payload, payload[0].nbytes * 3


def encode(msg: Any, payload: tuple) -> CurveCounts:
    """Fill the counts shared by both curve messages; the caller adds its own axes."""
    c = curve_counts(*payload)
    msg.thresholds.extend(c.thresholds.tolist())
    msg.tp.extend(c.tp.tolist())
    msg.fp.extend(c.fp.tolist())
    msg.tn.extend(c.tn.tolist())
    msg.fn.extend(c.fn.tolist())
    return c


@dataclass(frozen=True, slots=True)
class CurveEvent:
    """A PR curve (x=recall, y=precision) or a ROC curve (x=fpr, y=tpr) at one step."""

    step: int
    wall_time: float
    x: np.ndarray
    y: np.ndarray
    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    tn: np.ndarray
    fn: np.ndarray


def build_event(msg: Any, x: Any, y: Any) -> CurveEvent:
    """The event of a curve message; a ValueError (a bad record) when its columns differ in
    length, are empty or hold NaN or infinities."""
    columns = {"x": x, "y": y, "thresholds": msg.thresholds, "tp": msg.tp, "fp": msg.fp,
               "tn": msg.tn, "fn": msg.fn}
    if not same_lengths(type(msg).__name__, **columns):
        raise ValueError(f"{type(msg).__name__} has no points")
    arrays = {name: readonly(finite_array(f"{type(msg).__name__} {name}", values))
              for name, values in columns.items()}
    return CurveEvent(msg.step, msg.wall_time, **arrays)


def area_under(x: np.ndarray, y: np.ndarray) -> float:
    """Trapezoidal area under y(x), taking the highest y where thresholds share an x.

    Many thresholds can land on one x (a vertical run of points); the curve's upper
    envelope is what a reader sees, and it gives a perfect classifier an area of 1.
    """
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(xs) < 2:
        return 0.0
    ux, inverse = np.unique(xs, return_inverse=True)
    top = np.full(len(ux), -np.inf)
    np.maximum.at(top, inverse, ys)
    return float(np.sum(np.diff(ux) * (top[1:] + top[:-1]) / 2.0))


def entry_json(e: CurveEvent, x_name: str, y_name: str, auc: float) -> dict:
    """One step of a curve as the API sends it."""
    from visualdl.api.jsonio import float_list

    return {
        "step": e.step,
        "wall_time": e.wall_time,
        x_name: float_list(np.asarray(e.x)),
        y_name: float_list(np.asarray(e.y)),
        "thresholds": float_list(np.asarray(e.thresholds)),
        "tp": float_list(np.asarray(e.tp)),
        "fp": float_list(np.asarray(e.fp)),
        "tn": float_list(np.asarray(e.tn)),
        "fn": float_list(np.asarray(e.fn)),
        "auc": auc,
    }
