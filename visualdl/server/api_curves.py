"""PR and ROC curves: every step's points with thresholds, counts and the area under it."""

from __future__ import annotations

import numpy as np
from flask import Blueprint, Response

from visualdl.reader.events import CurveEvent
from visualdl.server.api_common import read_tag, run_tag_json, service
from visualdl.server.jsonio import float_list

__all__ = ["blueprint", "area_under"]

blueprint = Blueprint("curves", __name__)
_AXES = {"pr_curve": ("recall", "precision"), "roc_curve": ("fpr", "tpr")}


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


def _entry(kind: str, e: CurveEvent) -> dict:
    x_name, y_name = _AXES[kind]
    x, y = np.asarray(e.x), np.asarray(e.y)
    if kind == "roc_curve":  # a ROC curve runs from (0, 0) to (1, 1)
        auc = area_under(np.concatenate((x, [0.0, 1.0])), np.concatenate((y, [0.0, 1.0])))
    else:
        auc = area_under(x, y)
    return {
        "step": e.step,
        "wall_time": e.wall_time,
        x_name: float_list(x),
        y_name: float_list(y),
        "thresholds": float_list(np.asarray(e.thresholds)),
        "tp": float_list(np.asarray(e.tp)),
        "fp": float_list(np.asarray(e.fp)),
        "tn": float_list(np.asarray(e.tn)),
        "fn": float_list(np.asarray(e.fn)),
        "auc": auc,
    }


def _curves(kind: str) -> Response:
    def build(run: str, tag: str) -> dict:
        reader = service().reader
        read = reader.pr_curves if kind == "pr_curve" else reader.roc_curves
        events = read_tag(run, kind, tag, read)
        return {"run": run, "tag": tag, "kind": kind, "total": len(events),
                "entries": [_entry(kind, e) for e in events]}

    return run_tag_json(kind, build)


@blueprint.get("/api/pr_curves")
def pr_curves() -> Response:
    """``?run=&tag=``: every step's precision/recall points."""
    return _curves("pr_curve")


@blueprint.get("/api/roc_curves")
def roc_curves() -> Response:
    """``?run=&tag=``: every step's TPR/FPR points."""
    return _curves("roc_curve")
