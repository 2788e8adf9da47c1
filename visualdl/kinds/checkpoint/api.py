"""Checkpoint routes: one run's checkpoints (``/api/checkpoints``)."""

from __future__ import annotations

from flask import Blueprint, Response

from visualdl.api.common import arg_str, etag_for, etag_json, provider, require_run

__all__ = ["blueprint"]

blueprint = Blueprint("checkpoint", __name__)
KIND = TAG = "checkpoint"  # the kind's one tag: checkpoints belong to the run


@blueprint.get("/api/checkpoints")
def checkpoints() -> Response:
    """``?run=``: the run's checkpoints in the order they were saved: ``{"run",
    "checkpoints": [{"step", "path", "rank", "wall_time"}]}`` ([] when it has none)."""
    run = require_run(arg_str("run"))
    data = provider()

    def build() -> dict:
        try:
            events = data.events(run, KIND, TAG)
        except KeyError:
            events = []
        return {"run": run, "checkpoints": [
            {"step": e.step, "path": e.path, "rank": e.rank, "wall_time": e.wall_time}
            for e in events]}

    return etag_json(etag_for("checkpoints", data.version, run), build)
