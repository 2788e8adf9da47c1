"""Embeddings: the index of recorded matrices, and their projection to 2-D or 3-D.

A projection answers at once: PCA (milliseconds) is final; t-SNE and UMAP (seconds to a
minute) answer PCA first with ``progress`` 0 and ``final: false``, and are refined in the
background (see :class:`~visualdl.kinds.embedding.refine.Refinements`); the view asks again
until ``final``. Large sets are sampled (the response says so), since a browser scatter of
hundreds of thousands of points helps nobody.
"""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np
from flask import Blueprint, Response

from visualdl.api import blobs
from visualdl.api.common import app_cache, arg_choice, arg_int, etag_for, etag_json
from visualdl.api.errors import ApiError
from visualdl.api.jsonio import float_list
from visualdl.kinds.embedding.projections import (
    METHODS, MissingLibrary, frames, normalised, pca, require, sample_rows)
from visualdl.kinds.embedding.read import load_embedding
from visualdl.kinds.embedding.refine import Refinements

__all__ = ["blueprint"]

KIND = "embedding"
blueprint = Blueprint("embeddings", __name__)
_LIMITS = {"pca": 20000, "tsne": 10000, "umap": 10000}


@blueprint.get("/api/embeddings")
def index() -> Response:
    """``?run=&tag=``: every recorded step with the matrix shape, metadata columns and
    the [height, width] of its rows' thumbnails (null without)."""
    return blobs.index_response(KIND, ("shape", "metadata_header", "thumbnail"))


@blueprint.get("/api/embeddings/sprite")
def sprite() -> Response:
    """``?run=&tag=&step=``: the PNG sprite of the rows' thumbnails (``label_img``); row
    ``i`` at cell ``(i // cols, i % cols)``, ``cols = ceil(sqrt(rows))``. 404 without."""
    _, _, step, ref = blobs.requested_ref(KIND)
    png = blobs.load(ref).sprite
    if not png:
        raise ApiError(404, f"the embedding at step {step} has no thumbnails (label_img)")
    return blobs.bytes_response(ref, png, "image/png")


@blueprint.get("/api/embeddings/projection")
def projection() -> Response:
    """``?run=&tag=&step=&method=pca|tsne|umap&dims=2|3[&max_points=N]``."""
    run, tag, step, ref = blobs.requested_ref(KIND)
    method = arg_choice("method", "pca", METHODS)
    dims = arg_int("dims", 2, 2, 3)
    limit = arg_int("max_points", _LIMITS[method], 10, _LIMITS[method])
    key = (ref.path, ref.offset, method, dims, limit)
    store = app_cache("embedding projections", Refinements)
    body, version = store.get(key, lambda: _start(run, tag, step, ref, method, dims, limit))
    return etag_json(etag_for("projection", store.token, *key, version), lambda: body)


def _start(run, tag, step, ref, method, dims, limit) -> tuple[dict, Callable | None]:
    """The first body (PCA's coordinates) and, for t-SNE and UMAP, their refinement."""
    try:
        require(method)
    except MissingLibrary as err:
        raise ApiError(501, str(err)) from None
    matrix, header, rows = load_embedding(blobs.load(ref))
    picked = sample_rows(matrix.shape[0], limit)
    sample = np.ascontiguousarray(matrix[picked])
    coords, share = pca(sample, dims)
    body = {
        "run": run, "tag": tag, "step": step, "method": method, "dims": dims,
        "total": int(matrix.shape[0]), "shown": int(len(picked)),
        "sampled": bool(len(picked) < matrix.shape[0]),
        "indices": picked.tolist(),
        "metadata_header": header,
        "metadata": [rows[i] for i in picked.tolist()] if rows else [],
        "frame": "pca",
    }
    if method == "pca":
        return {**body, "coords": _lists(coords), "explained_variance": share}, None
    return {**body, "coords": _lists(normalised(coords))}, lambda: _refined(sample, method, dims)


def _refined(sample: np.ndarray, method: str, dims: int) -> Iterator[tuple[dict, float]]:
    """The refinement's frames; a library that fails to import here (the request only
    looked it up) is the next poll's 501, as a missing one is the first request's."""
    try:
        for coords, progress in frames(sample, method, dims):
            yield {"coords": _lists(coords), "frame": method}, progress
    except MissingLibrary as err:
        raise ApiError(501, str(err)) from None


def _lists(coords: np.ndarray) -> list[list]:
    return [float_list(coords[:, k]) for k in range(coords.shape[1])]
