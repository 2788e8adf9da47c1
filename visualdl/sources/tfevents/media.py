"""TensorBoard's video and 3-D summaries as our entries.

torch's and tensorboardX's ``add_video`` write an image summary whose encoded image is an
animated GIF: it becomes a ``Video`` (served as the GIF it is). The mesh plugin writes one
tensor summary per part of a mesh (``<name>_VERTEX``, ``_FACE``, ``_COLOR``, or tensorboardX's
``<name>_1``, ``_2``, ``_3``), each with ``MeshPluginData`` naming the mesh and the part; the
parts of one event are put together into one ``Mesh`` named after the mesh.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np

from visualdl.format import record_pb2
from visualdl.sources.tfevents import event_pb2

__all__ = ["MeshPart", "is_gif", "gif_video", "mesh_part", "merge_meshes"]

_VERTEX, _FACE, _COLOR = 1, 2, 3


def is_gif(data: bytes) -> bool:
    return data[:6] in (b"GIF87a", b"GIF89a")


def gif_video(tag: str, step: int, wall: float, gif: bytes, height: int, width: int) -> Any:
    """A ``Video`` entry of an animated GIF: its frame count and rate read by Pillow."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(gif)) as im:
            frames = getattr(im, "n_frames", 1)
            duration = im.info.get("duration") or 0
            width, height = width or im.width, height or im.height
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ValueError(f"video GIF cannot be read: {exc}") from None
    fps = 1000.0 / duration if duration else 0.0
    return record_pb2.Entry(video=record_pb2.Video(
        tag=tag, step=step, wall_time=wall, data=gif, mime="image/gif", width=width,
        height=height, frames=frames, fps=fps))


@dataclass(frozen=True)
class MeshPart:
    """One tensor of a mesh, until the event's other parts join it."""

    name: str
    content_type: int
    array: np.ndarray
    config: str


def mesh_part(content: bytes, array: np.ndarray) -> MeshPart:
    data = event_pb2.MeshPluginData.FromString(content)
    if data.content_type not in (_VERTEX, _FACE, _COLOR):
        raise ValueError(f"mesh part of content type {data.content_type}")
    if array.ndim != 3 or array.shape[2] != 3:
        raise ValueError(f"mesh tensor of shape {array.shape}, not B x N x 3")
    return MeshPart(data.name, data.content_type, array, data.json_config)


def merge_meshes(items: list, step: int, wall: float) -> list:
    """``items`` with the mesh parts of each name replaced by one ``Mesh`` entry (placed
    where its first part was)."""
    parts: dict[str, dict[int, MeshPart]] = {}
    out: list = []
    for item in items:
        if isinstance(item, MeshPart):
            if item.name not in parts:
                parts[item.name] = {}
                out.append(item.name)
            parts[item.name][item.content_type] = item
        else:
            out.append(item)
    return [_mesh(x, parts[x], step, wall) if isinstance(x, str) else x for x in out]


def _mesh(name: str, parts: dict[int, MeshPart], step: int, wall: float) -> Any:
    if _VERTEX not in parts:
        raise ValueError(f"mesh {name!r} has no vertices")
    vertices = parts[_VERTEX].array
    b, n, _ = vertices.shape
    if n == 0 or not np.isfinite(vertices).all():
        raise ValueError(f"mesh {name!r}: no vertices, or vertices that are not finite")
    msg = record_pb2.Mesh(tag=name, step=step, wall_time=wall, batch=b, points=n,
                          vertices=vertices.astype("<f4").tobytes(),
                          config_json=parts[_VERTEX].config)
    if _COLOR in parts:
        colors = parts[_COLOR].array
        if colors.shape != vertices.shape:
            raise ValueError(f"mesh {name!r}: colours of shape {colors.shape} for vertices "
                             f"of shape {vertices.shape}")
        msg.colors = np.clip(np.nan_to_num(colors), 0, 255).astype(np.uint8).tobytes()
    if _FACE in parts:
        faces = parts[_FACE].array
        if faces.shape[0] != b or (faces.size and (faces.min() < 0 or faces.max() >= n)):
            raise ValueError(f"mesh {name!r}: faces of shape {faces.shape} index past its "
                             f"{n} vertices")
        msg.faces = faces.astype("<i4").tobytes()
        msg.triangles = faces.shape[1]
    return record_pb2.Entry(mesh=msg)
