"""PR curves: every step's precision/recall points with thresholds, counts and the area."""

from __future__ import annotations

from flask import Blueprint, Response

from visualdl.kinds.curves import area_under, entry_json
from visualdl.api.common import read_events, run_tag_json

__all__ = ["blueprint"]

KIND = "pr_curve"
blueprint = Blueprint("pr_curves", __name__)


def _curves(run: str, tag: str) -> dict:
    events = read_events(run, KIND, tag)
    return {"run": run, "tag": tag, "kind": KIND, "total": len(events),
            "entries": [entry_json(e, "recall", "precision", area_under(e.x, e.y))
                        for e in events]}


@blueprint.get("/api/pr_curves")
def pr_curves() -> Response:
    """``?run=&tag=``: every step's precision/recall points."""
    return run_tag_json(KIND, _curves)
