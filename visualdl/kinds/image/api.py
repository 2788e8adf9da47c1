"""Images: the index of every recorded step, and the PNG of one step."""

from __future__ import annotations

from flask import Blueprint, Response

from visualdl.api import blobs

__all__ = ["blueprint"]

KIND = "image"
blueprint = Blueprint("images", __name__)


@blueprint.get("/api/images")
def index() -> Response:
    """``?run=&tag=``: every step (no sampling), with wall time, size and dimensions."""
    return blobs.index_response(KIND, ("width", "height", "channels"))


@blueprint.get("/api/images/data")
def data() -> Response:
    """``?run=&tag=&step=``: the PNG, read from the record file by offset."""
    _, _, _, ref = blobs.requested_ref(KIND)
    return blobs.bytes_response(ref, blobs.load(ref).png, "image/png")
