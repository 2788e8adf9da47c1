"""Images: the index of every recorded step, the PNG of one step, and its boxes."""

from __future__ import annotations

from flask import Blueprint, Response

from visualdl.api import blobs
from visualdl.api.common import etag_for, etag_json
from visualdl.kinds.image.boxes import load_boxes

__all__ = ["blueprint"]

KIND = "image"
blueprint = Blueprint("images", __name__)


@blueprint.get("/api/images")
def index() -> Response:
    """``?run=&tag=``: every step (no sampling), with wall time, size, dimensions and the
    number of boxes recorded over the image (``box_count``, 0 for none)."""
    return blobs.index_response(KIND, ("width", "height", "channels"), lambda found: {
        "box_count": [ref.meta.get("box_count", 0) for ref in found]})


@blueprint.get("/api/images/data")
def data() -> Response:
    """``?run=&tag=&step=``: the PNG, read from the record file by offset."""
    _, _, _, ref = blobs.requested_ref(KIND)
    return blobs.bytes_response(ref, blobs.load(ref).png, "image/png")


@blueprint.get("/api/images/boxes")
def boxes() -> Response:
    """``?run=&tag=&step=``: the boxes over that step's image, in its pixels: ``boxes``
    as [xmin, ymin, xmax, ymax] lists, ``labels`` and ``scores`` (empty when not given).
    Read on demand, like the pixels: the index holds only their count."""
    run, tag, step, ref = blobs.requested_ref(KIND)

    def body() -> dict:
        found = load_boxes(blobs.load(ref))
        return {"run": run, "tag": tag, "step": step, "width": ref.meta.get("width"),
                "height": ref.meta.get("height"),
                "boxes": [[float(v) for v in box] for box in found.boxes.tolist()],
                "labels": found.labels, "scores": [float(s) for s in found.scores.tolist()]}

    return etag_json(etag_for("image boxes", ref.path, ref.offset, ref.step), body)
