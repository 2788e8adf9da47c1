"""Tensors: the index of recorded steps (dtype, shape), and one step's values: every value
of a small 1-D or 2-D tensor (a value table), else a histogram and summary statistics."""

from __future__ import annotations

from typing import Any

import numpy as np
from flask import Blueprint, Response

from visualdl.api import blobs
from visualdl.api.common import etag_for, etag_json
from visualdl.api.errors import ApiError
from visualdl.api.jsonio import float_list
from visualdl.kinds.tensor.read import array_of

__all__ = ["blueprint"]

KIND = "tensor"
blueprint = Blueprint("tensors", __name__)
#: The largest tensor sent value by value; larger ones (or of more than 2 dimensions) are
#: summarized as a histogram.
MAX_VALUES = 10_000
_BINS = 30


@blueprint.get("/api/tensors")
def index() -> Response:
    """``?run=&tag=``: every step with its dtype and shape."""
    return blobs.index_response(KIND, ("dtype", "shape"))


@blueprint.get("/api/tensors/data")
def data() -> Response:
    """``?run=&tag=&step=``: ``values`` (row major, with ``shape``) for a 0-, 1- or 2-D
    tensor of at most MAX_VALUES values, else ``histogram`` (edges, counts)."""
    run, tag, step, ref = blobs.requested_ref(KIND)

    def build() -> dict:
        try:
            array = array_of(blobs.load(ref))
        except ValueError as err:
            raise ApiError(422, f"the tensor at step {step} cannot be read: {err}") from None
        return {"run": run, "tag": tag, "step": ref.step, "wall_time": ref.wall_time,
                **summary(array)}

    return etag_json(etag_for("tensor", ref.path, ref.offset, ref.step), build)


def summary(array: np.ndarray) -> dict[str, Any]:
    """What the view draws: the values, or a histogram of the finite ones."""
    values = array.astype(np.float64).reshape(-1)
    body: dict[str, Any] = {"dtype": array.dtype.str, "shape": list(array.shape),
                            "size": int(values.size)}
    if array.ndim <= 2 and values.size <= MAX_VALUES:
        body["values"] = float_list(values)
        return body
    finite = values[np.isfinite(values)]
    counts, edges = np.histogram(finite, bins=_BINS) if finite.size else (np.zeros(0), [0.0])
    body["histogram"] = {"edges": float_list(np.asarray(edges, np.float64)),
                         "counts": [int(c) for c in counts]}
    body["stats"] = {"min": float(finite.min()) if finite.size else None,
                     "max": float(finite.max()) if finite.size else None,
                     "mean": float(finite.mean()) if finite.size else None,
                     "nonfinite": int(values.size - finite.size)}
    return body
