"""Tables: the index of recorded steps, one step's cells (columnar JSON, as stored), and
the images and audio its cells name."""

from __future__ import annotations

import json

from flask import Blueprint, Response

from visualdl.api import blobs
from visualdl.api.common import app_cache, arg_int
from visualdl.api.errors import ApiError
from visualdl.kinds.table.read import columns_of

__all__ = ["blueprint"]

KIND = "table"
blueprint = Blueprint("tables", __name__)
_MIMES = ("image/png", "audio/wav")
_CHECKED_MAX = 4096  # tables whose stored JSON was found sound (path, offset, size)


@blueprint.get("/api/tables")
def index() -> Response:
    """``?run=&tag=``: every step with its row and column counts."""
    return blobs.index_response(KIND, ("rows", "columns"))


@blueprint.get("/api/tables/data")
def data() -> Response:
    """``?run=&tag=&step=``: the columns, one array of cells per column (numbers, str,
    null, ``{"n": "NaN"}`` for non-finite numbers, ``{"blob": i}`` for media), and the
    blobs' types and sizes. The stored JSON is checked, then passed on as it is."""
    run, tag, step, ref = blobs.requested_ref(KIND)
    msg = blobs.load(ref)
    checked = app_cache("tables checked", dict)
    key = (ref.path, ref.offset, len(msg.columns_json))
    if key not in checked:  # parsing 100,000 rows is most of this answer's cost: once
        try:
            columns_of(msg)
        except ValueError as err:
            raise ApiError(422, f"the table at step {step} cannot be read: {err}") from None
        if len(checked) >= _CHECKED_MAX:
            checked.clear()
        checked[key] = True
    head = {
        "run": run, "tag": tag, "step": ref.step, "wall_time": ref.wall_time,
        "columns": list(msg.columns), "rows": msg.rows,
        "blobs": [{"mime": b.mime, "width": b.width, "height": b.height, "size": len(b.data)}
                  for b in msg.blobs],
    }
    body = json.dumps(head, allow_nan=False).encode("utf-8")[:-1] + b', "data": ' + \
        msg.columns_json + b"}"
    return blobs.bytes_response(ref, body, "application/json")


@blueprint.get("/api/tables/blob")
def blob() -> Response:
    """``?run=&tag=&step=&blob=i``: the i-th image (PNG) or audio clip (WAV) of a table."""
    _, _, step, ref = blobs.requested_ref(KIND)
    index = arg_int("blob", 0, 0, 2**31 - 1)
    msg = blobs.load(ref)
    if index >= len(msg.blobs):
        raise ApiError(404, f"the table at step {step} has {len(msg.blobs)} blobs, "
                            f"no blob {index}")
    found = msg.blobs[index]
    if found.mime not in _MIMES:
        raise ApiError(404, f"blob {index} is {found.mime!r}, not an image or audio")
    return blobs.bytes_response(ref, found.data, found.mime)
