"""ROC curves: every step's TPR/FPR points with thresholds, counts and the area."""

from __future__ import annotations

import numpy as np
from flask import Blueprint, Response

from visualdl.kinds.curves import area_under, entry_json
from visualdl.api.common import read_events, run_tag_json

__all__ = ["blueprint"]

KIND = "roc_curve"
blueprint = Blueprint("roc_curves", __name__)


def _auc(x: np.ndarray, y: np.ndarray) -> float:
    # a ROC curve runs from (0, 0) to (1, 1)
    return area_under(np.concatenate((x, [0.0, 1.0])), np.concatenate((y, [0.0, 1.0])))


def _curves(run: str, tag: str) -> dict:
    events = read_events(run, KIND, tag)
    return {"run": run, "tag": tag, "kind": KIND, "total": len(events),
            "entries": [entry_json(e, "fpr", "tpr", _auc(e.x, e.y)) for e in events]}


@blueprint.get("/api/roc_curves")
def roc_curves() -> Response:
    """``?run=&tag=``: every step's TPR/FPR points."""
    return run_tag_json(KIND, _curves)
