"""Meshes and point clouds (torch's ``add_mesh``): checked and copied in the caller's
thread, packed into little-endian arrays in the writer's.

Vertices are B x N x 3 (or N x 3 for one), colours B x N x 3 in [0, 255], faces B x F x 3
vertex indices (none: a point cloud); ``config_dict`` (torch's scene configuration) is kept
as JSON.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from visualdl.kinds.checks import check_size, require_real, to_array


def _batched(tag: str, name: str, data: Any) -> np.ndarray:
    array = to_array(tag, data, name)
    require_real(tag, array, name)
    if array.ndim == 2:
        array = array[None]
    if array.ndim != 3 or array.shape[2] != 3:
        raise ValueError(f"{tag!r}: {name} must have shape (B, N, 3) or (N, 3), got "
                         f"{np.shape(data)}")
    return array


def check_vertices(tag: str, vertices: Any) -> np.ndarray:
    array = _batched(tag, "vertices", vertices)
    if array.shape[1] == 0:
        raise ValueError(f"{tag!r}: vertices are empty, shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{tag!r}: vertices contain NaN or infinite values")
    return array.astype("<f4")


def check_colors(tag: str, colors: Any, shape: tuple[int, ...]) -> np.ndarray | None:
    if colors is None:
        return None
    array = _batched(tag, "colors", colors)
    if array.shape != shape:
        raise ValueError(f"{tag!r}: colors must have the vertices' shape {shape}, got "
                         f"{array.shape}")
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise ValueError(f"{tag!r}: colors contain NaN or infinite values")
    if array.min() < 0 or array.max() > 255:
        raise ValueError(f"{tag!r}: colors must lie in [0, 255], got values in "
                         f"[{array.min()}, {array.max()}]")
    return np.asarray(np.rint(array) if array.dtype.kind == "f" else array, dtype=np.uint8)


def check_faces(tag: str, faces: Any, batch: int, points: int) -> np.ndarray | None:
    if faces is None:
        return None
    array = _batched(tag, "faces", faces)
    if array.dtype.kind not in "iu":
        if array.dtype.kind != "f" or (array != np.floor(array)).any():
            raise TypeError(f"{tag!r}: faces must hold integer vertex indices, got dtype "
                            f"{array.dtype}")
    if array.shape[0] != batch:
        raise ValueError(f"{tag!r}: faces have batch {array.shape[0]}, vertices {batch}")
    if array.size and (array.min() < 0 or array.max() >= points):
        raise ValueError(f"{tag!r}: faces index vertices {int(array.min())}.."
                         f"{int(array.max())}, but there are only {points} vertices "
                         f"(0..{points - 1})")
    return array.astype("<i4")


def check_config(tag: str, config_dict: Any) -> str:
    if config_dict is None:
        return ""
    if not isinstance(config_dict, dict):
        raise TypeError(f"{tag!r}: config_dict must be a dict, got {type(config_dict).__name__}")
    try:
        return json.dumps(config_dict, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{tag!r}: config_dict is not JSON-serializable ({exc})") from None


def check(tag: str, vertices: Any, colors: Any = None, faces: Any = None,
          config_dict: Any = None) -> tuple[tuple, int]:
    """The payload ``encode`` takes, and its size in bytes."""
    v = check_vertices(tag, vertices)
    c = check_colors(tag, colors, v.shape)
    f = check_faces(tag, faces, v.shape[0], v.shape[1])
    config = check_config(tag, config_dict)
    nbytes = v.nbytes + (0 if c is None else c.nbytes) + (0 if f is None else f.nbytes)
    check_size(tag, "the mesh", nbytes + len(config))
    return (v, c, f, config), nbytes


def encode(msg: Any, payload: tuple) -> None:
    v, c, f, config = payload
    msg.batch, msg.points = v.shape[0], v.shape[1]
    msg.vertices = v.tobytes()
    if c is not None:
        msg.colors = c.tobytes()
    if f is not None:
        msg.faces = f.tobytes()
        msg.triangles = f.shape[1]
    msg.config_json = config
