"""Embeddings, writer side: an N x D float32 matrix with optional metadata rows."""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from visualdl.kinds.checks import check_size, check_utf8, require_finite, require_real, to_array
from visualdl.kinds.embedding.sprite import check_thumbnails, encode_sprite


def check(tag: str, mat: Any, metadata: Iterable | None,
          metadata_header: Iterable[str] | None, label_img: Any = None) -> tuple[tuple, int]:
    """The payload ``encode`` takes (matrix, header, rows, thumbnails), and its size in
    bytes. ``label_img`` (N x H x W x C or N x H x W, see :mod:`.sprite`) is one
    thumbnail a row."""
    matrix = to_array(tag, mat, "mat")
    require_real(tag, matrix, "mat")
    if matrix.ndim != 2 or 0 in matrix.shape:
        raise ValueError(f"{tag!r}: mat must be a non-empty 2-D array, got shape {matrix.shape}")
    require_finite(tag, matrix, "mat")
    matrix = matrix.astype("<f4")
    header = [str(h) for h in metadata_header] if metadata_header is not None else []
    rows: list[list[str]] = []
    if metadata is not None:
        rows = [
            [str(v) for v in row] if isinstance(row, (list, tuple)) else [str(row)]
            for row in metadata
        ]
        if len(rows) != matrix.shape[0]:
            raise ValueError(
                f"{tag!r}: metadata has {len(rows)} rows but mat has {matrix.shape[0]}"
            )
        width = len(header) if header else len(rows[0])
        if any(len(row) != width for row in rows):
            raise ValueError(f"{tag!r}: every metadata row must have {width} columns")
        if header and width != len(header):
            raise ValueError(f"{tag!r}: metadata_header has {len(header)} names, rows {width}")
    elif header:
        raise ValueError(f"{tag!r}: metadata_header given without metadata")
    for value in [*header, *(v for row in rows for v in row)]:
        check_utf8(tag, "metadata", value)
    text = sum(len(h) for h in header) + sum(len(v) + 2 for row in rows for v in row)
    check_size(tag, "mat with its metadata (UTF-8 at worst 4 bytes a character)",
               matrix.size * 4 + 4 * text)
    thumbs = None if label_img is None else check_thumbnails(tag, label_img, matrix.shape[0])
    extra = 0 if thumbs is None else thumbs.nbytes
    return (matrix, header, rows, thumbs), matrix.nbytes + extra


def encode(msg: Any, payload: tuple) -> None:
    matrix, header, rows, thumbs = payload
    if thumbs is not None:
        encode_sprite(msg, thumbs)
    msg.matrix = np.ascontiguousarray(matrix, dtype="<f4").tobytes()
    msg.shape.extend(matrix.shape)
    msg.metadata_header.extend(header)
    for row in rows:
        msg.metadata.add().values.extend(row)
