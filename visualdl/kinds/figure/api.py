"""Figures: plotly figures (served as their JSON, drawn interactive) and matplotlib PNGs."""

from __future__ import annotations

from flask import Blueprint, Response

from visualdl.server import blobs

__all__ = ["blueprint"]

KIND = "figure"
blueprint = Blueprint("figures", __name__)


@blueprint.get("/api/figures")
def index() -> Response:
    """``?run=&tag=``: every step with its format (``plotly`` or ``png``)."""
    return blobs.index_response(KIND, ("format",))


@blueprint.get("/api/figures/data")
def data() -> Response:
    """``?run=&tag=&step=``: plotly JSON (application/json) or a PNG (image/png)."""
    _, _, _, ref = blobs.requested_ref(KIND)
    message = blobs.load(ref)
    if message.WhichOneof("content") == "png":
        return blobs.bytes_response(ref, message.png, "image/png")
    return blobs.bytes_response(ref, message.plotly_json.encode("utf-8"), "application/json")
