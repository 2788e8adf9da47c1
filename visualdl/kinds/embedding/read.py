"""Embeddings, reader side: the index keeps the shape and metadata columns; the matrix is
loaded on demand."""

from __future__ import annotations

from typing import Any

import numpy as np


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    return len(msg.matrix), {"shape": tuple(msg.shape),
                             "metadata_header": tuple(msg.metadata_header)}


def load_embedding(message: Any) -> tuple[np.ndarray, list[str], list[list[str]]]:
    """An ``Embedding`` message as (float32 matrix, metadata header, metadata rows)."""
    matrix = np.frombuffer(message.matrix, dtype="<f4").reshape(tuple(message.shape))
    rows = [list(row.values) for row in message.metadata]
    return matrix, list(message.metadata_header), rows
