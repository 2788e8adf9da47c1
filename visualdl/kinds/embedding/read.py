"""Embeddings, reader side: the index keeps the shape and metadata columns; the matrix is
loaded on demand. An entry whose shape, bytes and metadata disagree is refused
(``ValueError``: the reader counts a bad record)."""

from __future__ import annotations

from typing import Any

import numpy as np


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    shape = _checked(msg)
    thumbnail = None
    if msg.sprite:
        if msg.thumb_height < 1 or msg.thumb_width < 1:
            raise ValueError(f"embedding sprite has thumbnails of "
                             f"{msg.thumb_width}x{msg.thumb_height} pixels")
        thumbnail = (msg.thumb_height, msg.thumb_width)
    return len(msg.matrix) + len(msg.sprite), {
        "shape": shape, "metadata_header": tuple(msg.metadata_header), "thumbnail": thumbnail}


def _checked(msg: Any) -> tuple[int, int]:
    shape = tuple(msg.shape)
    if len(shape) != 2 or min(shape) < 1:
        raise ValueError(f"embedding shape {list(shape)} is not [rows >= 1, dims >= 1]")
    rows, dims = shape
    if len(msg.matrix) != rows * dims * 4:
        raise ValueError(
            f"embedding of shape {list(shape)} needs {rows * dims * 4} bytes of float32, "
            f"has {len(msg.matrix)}"
        )
    if not np.isfinite(np.frombuffer(msg.matrix, dtype="<f4")).all():
        raise ValueError("embedding matrix holds NaN or infinite values")
    if msg.metadata and len(msg.metadata) != rows:
        raise ValueError(f"embedding has {len(msg.metadata)} metadata rows for {rows} rows")
    width = len(msg.metadata_header) or (len(msg.metadata[0].values) if msg.metadata else 0)
    if any(len(row.values) != width for row in msg.metadata):
        raise ValueError(f"embedding metadata rows do not all have {width} columns")
    return rows, dims


def load_embedding(message: Any) -> tuple[np.ndarray, list[str], list[list[str]]]:
    """An ``Embedding`` message as (float32 matrix, metadata header, metadata rows)."""
    shape = _checked(message)
    matrix = np.frombuffer(message.matrix, dtype="<f4").reshape(shape)
    rows = [list(row.values) for row in message.metadata]
    return matrix, list(message.metadata_header), rows
