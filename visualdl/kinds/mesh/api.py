"""Meshes: the index of every recorded step, and one step's arrays for drawing.

A point cloud larger than ``max_points`` is drawn from a subsample the server takes (the
same points every time: a fixed seed), so a million points reach the browser as a tenth;
``max_points=0`` sends them all. A mesh with triangles is sent whole (its faces index
every vertex). Arrays travel as base64 of their little-endian bytes: a typed array in the
page without parsing a million numbers.
"""

from __future__ import annotations

import base64
import json

import numpy as np
from flask import Blueprint, Response

from visualdl.api import blobs
from visualdl.api.common import arg_int, cached_json, not_modified
from visualdl.api.errors import ApiError
from visualdl.kinds.mesh.read import arrays

__all__ = ["blueprint", "DRAW_POINTS"]

KIND = "mesh"
#: The points drawn of a larger point cloud unless the request asks for more.
DRAW_POINTS = 100_000
blueprint = Blueprint("meshes", __name__)


@blueprint.get("/api/meshes")
def index() -> Response:
    """``?run=&tag=``: every step with its batch size, vertex and triangle counts."""
    return blobs.index_response(KIND, ("batch", "points", "triangles", "colors"))


def subsample(n: int, keep: int) -> np.ndarray | None:
    """Indices of ``keep`` of ``n`` points, sorted, the same for the same ``n`` and
    ``keep``; None when every point is kept."""
    if keep <= 0 or n <= keep:
        return None
    return np.sort(np.random.default_rng(0).choice(n, keep, replace=False))


def _b64(array: np.ndarray | None) -> str | None:
    if array is None:
        return None
    return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")


@blueprint.get("/api/meshes/data")
def data() -> Response:
    """``?run=&tag=&step=[&sample=0][&max_points=100000]``: vertices (float32), colours
    (uint8) and faces (int32) of one sample, base64; ``points`` counts them all,
    ``shown`` the vertices sent."""
    _, _, _, ref = blobs.requested_ref(KIND)
    batch = int(ref.meta.get("batch", 1))
    sample = arg_int("sample", 0, 0, 2**31 - 1)
    if sample >= batch:
        raise ApiError(404, f"mesh at step {ref.step} has {batch} sample(s), not {sample + 1}")
    keep = arg_int("max_points", DRAW_POINTS, 0, 2**40)
    etag = blobs.blob_etag(ref) + f"-{sample}-{keep}"
    cached = not_modified(etag)
    if cached is not None:
        return cached
    mesh = arrays(blobs.load(ref))
    vertices = mesh.vertices[sample]
    colors = None if mesh.colors is None else mesh.colors[sample]
    faces = None if mesh.faces is None else mesh.faces[sample]
    pick = subsample(len(vertices), keep) if faces is None else None
    if pick is not None:
        vertices = vertices[pick]
        colors = None if colors is None else colors[pick]
    return cached_json({
        "step": ref.step, "sample": sample, "batch": batch, "points": int(ref.meta["points"]),
        "shown": len(vertices), "triangles": 0 if faces is None else len(faces),
        "vertices": _b64(vertices), "colors": _b64(colors), "faces": _b64(faces),
        "config": _config(mesh.config),
    }, etag)


def _config(text: str) -> dict:
    """The scene configuration as a dict; another writer's "null" or bad JSON is none."""
    try:
        config = json.loads(text) if text else {}
    except ValueError:
        return {}
    return config if isinstance(config, dict) else {}
