"""Embeddings: the index of recorded matrices, and their projection to 2-D or 3-D.

Projections are computed on request (PCA in milliseconds, t-SNE and UMAP in seconds)
and cached. Large sets are sampled (the response says so), since a browser scatter of
hundreds of thousands of points helps nobody.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import partial
from typing import Callable

from flask import Blueprint, Response

from visualdl.kinds.embedding.projections import METHODS, MissingLibrary, project, sample_rows
from visualdl.kinds.embedding.read import load_embedding
from visualdl.server import blobs
from visualdl.server.api_common import app_cache, arg_choice, arg_int, etag_for, etag_json
from visualdl.server.errors import ApiError
from visualdl.server.jsonio import float_list

__all__ = ["blueprint"]

KIND = "embedding"
blueprint = Blueprint("embeddings", __name__)
_LIMITS = {"pca": 20000, "tsne": 3000, "umap": 10000}
_CACHE_SIZE = 32


class _Projections:
    """The app's recent projections (a small LRU): t-SNE and UMAP take seconds."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple, dict] = OrderedDict()


@blueprint.get("/api/embeddings")
def index() -> Response:
    """``?run=&tag=``: every recorded step with the matrix shape and metadata columns."""
    return blobs.index_response(KIND, ("shape", "metadata_header"))


@blueprint.get("/api/embeddings/projection")
def projection() -> Response:
    """``?run=&tag=&step=&method=pca|tsne|umap&dims=2|3[&max_points=N]``."""
    run, tag, step, ref = blobs.requested_ref(KIND)
    method = arg_choice("method", "pca", METHODS)
    dims = arg_int("dims", 2, 2, 3)
    limit = arg_int("max_points", _LIMITS[method], 10, _LIMITS[method])
    key = (ref.path, ref.offset, method, dims, limit)
    compute = partial(_compute, run, tag, step, ref, method, dims, limit)
    return etag_json(etag_for("projection", *key), lambda: _remembered(key, compute))


def _remembered(key: tuple, compute: Callable[[], dict]) -> dict:
    """The projection for ``key`` from the app's small LRU cache, computed on a miss."""
    cache = app_cache("embedding projections", _Projections)
    with cache.lock:
        body = cache.items.get(key)
    if body is None:
        body = compute()
        with cache.lock:
            cache.items[key] = body
            while len(cache.items) > _CACHE_SIZE:
                cache.items.popitem(last=False)
    return body


def _compute(run, tag, step, ref, method, dims, limit) -> dict:
    matrix, header, rows = load_embedding(blobs.load(ref))
    picked = sample_rows(matrix.shape[0], limit)
    try:
        coords, info = project(matrix[picked], method, dims)
    except MissingLibrary as err:
        raise ApiError(501, str(err)) from None
    return {
        "run": run, "tag": tag, "step": step, "method": method, "dims": dims,
        "total": int(matrix.shape[0]), "shown": int(len(picked)),
        "sampled": bool(len(picked) < matrix.shape[0]),
        "indices": picked.tolist(),
        "coords": [float_list(coords[:, k]) for k in range(dims)],
        "metadata_header": header,
        "metadata": [rows[i] for i in picked.tolist()] if rows else [],
        **info,
    }
