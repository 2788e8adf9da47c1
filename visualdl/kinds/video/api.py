"""Videos: the index of every recorded step, and the file of one step."""

from __future__ import annotations

from flask import Blueprint, Response, request

from visualdl.api import blobs

__all__ = ["blueprint"]

KIND = "video"
blueprint = Blueprint("videos", __name__)


@blueprint.get("/api/videos")
def index() -> Response:
    """``?run=&tag=``: every step with its type, dimensions, frame count and rate."""
    return blobs.index_response(KIND, ("width", "height", "frames", "fps", "mime"))


@blueprint.get("/api/videos/data")
def data() -> Response:
    """``?run=&tag=&step=``: the video file as stored (MP4 or GIF), read by offset. Range
    requests are answered (206): a browser seeks in a video only when the server does."""
    _, _, _, ref = blobs.requested_ref(KIND)
    msg = blobs.load(ref)
    response = blobs.bytes_response(ref, msg.data, msg.mime)
    if response.status_code == 200:
        response.make_conditional(request, accept_ranges=True, complete_length=len(msg.data))
    return response
