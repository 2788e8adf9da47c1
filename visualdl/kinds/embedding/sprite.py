"""Thumbnails of an embedding's rows (torch's ``label_img``), kept as one PNG sprite.

One image for all rows, as TensorBoard's projector keeps them: the browser fetches and
decodes it once, and a row's thumbnail is a crop of it. Row ``i`` sits at grid cell
``(i // cols, i % cols)`` with ``cols = ceil(sqrt(rows))``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from visualdl.kinds.checks import check_size, require_real, to_array

__all__ = ["check_thumbnails", "encode_sprite", "sprite_columns", "load_sprite"]

MAX_SIDE = 8192  # pixels of the sprite's side: TensorBoard's limit, and what browsers draw


def sprite_columns(rows: int) -> int:
    return max(1, math.ceil(math.sqrt(rows)))


def check_thumbnails(tag: str, label_img: Any, rows: int) -> np.ndarray:
    """``label_img`` as N x H x W x C uint8 (C = 1, 3 or 4): uint8 as it is, floats in
    [0, 1] scaled by 255. N must be the embedding's row count."""
    array = to_array(tag, label_img, "label_img")
    require_real(tag, array, "label_img")
    if array.ndim == 3:
        array = array[..., None]
    if array.ndim != 4 or array.shape[3] not in (1, 3, 4) or 0 in array.shape:
        raise ValueError(f"{tag!r}: label_img must have shape (N, H, W, C) with C = 1, 3 or 4 "
                         f"(or (N, H, W)), got {array.shape}")
    if array.shape[0] != rows:
        raise ValueError(f"{tag!r}: label_img has {array.shape[0]} images for the {rows} rows "
                         f"of mat")
    cols = sprite_columns(rows)
    height, width = array.shape[1] * math.ceil(rows / cols), array.shape[2] * cols
    if max(height, width) > MAX_SIDE:
        raise ValueError(f"{tag!r}: the sprite of {rows} label_img thumbnails of "
                         f"{array.shape[2]}x{array.shape[1]} would be {width}x{height} pixels, "
                         f"over {MAX_SIDE}: use smaller thumbnails")
    check_size(tag, "label_img", height * width * array.shape[3])
    if array.dtype == np.uint8:
        return array.copy()
    values = array.astype(np.float64)
    if not np.isfinite(values).all() or values.min() < 0 or values.max() > 1:
        raise ValueError(f"{tag!r}: label_img must be uint8, or floats in [0, 1]")
    return np.rint(values * 255).astype(np.uint8)


def encode_sprite(msg: Any, thumbs: np.ndarray) -> None:
    from visualdl.kinds.image.write import encode_png

    n, h, w, c = thumbs.shape
    cols = sprite_columns(n)
    grid = np.zeros((math.ceil(n / cols) * h, cols * w, c), np.uint8)
    for i in range(n):
        r, k = divmod(i, cols)
        grid[r * h:(r + 1) * h, k * w:(k + 1) * w] = thumbs[i]
    msg.sprite = encode_png(grid)
    msg.thumb_height, msg.thumb_width = h, w


def load_sprite(message: Any) -> np.ndarray | None:
    """The thumbnails of an ``Embedding`` message as N x H x W x C uint8; None without."""
    if not message.sprite:
        return None
    from visualdl.kinds.image.write import decode_png

    grid = decode_png(message.sprite)
    rows, h, w = message.shape[0], message.thumb_height, message.thumb_width
    cols = sprite_columns(rows)
    return np.stack([grid[(i // cols) * h:(i // cols + 1) * h, (i % cols) * w:(i % cols + 1) * w]
                     for i in range(rows)])
