"""Figures: plotly figures (served as their JSON, drawn interactive) and matplotlib PNGs."""

from __future__ import annotations

from flask import Blueprint, Response

from visualdl.api import blobs
from visualdl.api.errors import ApiError
from visualdl.api.jsonio import strict_json_bytes

__all__ = ["blueprint"]

KIND = "figure"
blueprint = Blueprint("figures", __name__)


@blueprint.get("/api/figures")
def index() -> Response:
    """``?run=&tag=``: every step with its format (``plotly`` or ``png``)."""
    return blobs.index_response(KIND, ("format",))


@blueprint.get("/api/figures/data")
def data() -> Response:
    """``?run=&tag=&step=``: plotly JSON (application/json, strict) or a PNG (image/png)."""
    _, _, _, ref = blobs.requested_ref(KIND)
    message = blobs.load(ref)
    if message.WhichOneof("content") == "png":
        return blobs.bytes_response(ref, message.png, "image/png")
    # Stored as the writer's json.dumps wrote it, which spells NaN as a bare NaN: served
    # as strict JSON with the API's convention for non-finite numbers.
    try:
        body = strict_json_bytes(message.plotly_json.encode("utf-8"))
    except ValueError as err:
        raise ApiError(422, f"the figure at step {ref.step} is not valid JSON: {err}") from None
    return blobs.bytes_response(ref, body, "application/json")
