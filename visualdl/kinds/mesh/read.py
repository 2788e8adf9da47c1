"""Meshes, reader side: the index keeps the batch, vertex and triangle counts (an entry
whose arrays disagree with its counts is refused: a bad record); ``arrays`` unpacks one."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from visualdl.kinds.consistency import non_negative, positive_int


class MeshArrays(NamedTuple):
    """One stored mesh as arrays: vertices B x N x 3 float32, colours B x N x 3 uint8 or
    None, faces B x F x 3 int32 or None."""

    vertices: np.ndarray
    colors: np.ndarray | None
    faces: np.ndarray | None
    config: str


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    positive_int("mesh batch", msg.batch)
    positive_int("mesh vertices", msg.points, 2**40)
    non_negative("mesh triangles", msg.triangles)
    b, n, f = msg.batch, msg.points, msg.triangles
    if len(msg.vertices) != b * n * 12:
        raise ValueError(f"mesh has {len(msg.vertices)} bytes of vertices for {b} x {n}")
    if msg.colors and len(msg.colors) != b * n * 3:
        raise ValueError(f"mesh has {len(msg.colors)} bytes of colours for {b} x {n}")
    if len(msg.faces) != b * f * 12:
        raise ValueError(f"mesh has {len(msg.faces)} bytes of faces for {b} x {f}")
    size = len(msg.vertices) + len(msg.colors) + len(msg.faces)
    return size, {"batch": b, "points": n, "triangles": f, "colors": bool(msg.colors)}


def arrays(msg: Any) -> MeshArrays:
    """The message's arrays (read-only views of its bytes)."""
    b, n, f = msg.batch, msg.points, msg.triangles
    vertices = np.frombuffer(msg.vertices, "<f4").reshape(b, n, 3)
    colors = np.frombuffer(msg.colors, np.uint8).reshape(b, n, 3) if msg.colors else None
    faces = np.frombuffer(msg.faces, "<i4").reshape(b, f, 3) if msg.faces else None
    return MeshArrays(vertices, colors, faces, msg.config_json)
