"""Images: checked in the caller's thread, laid out and PNG-encoded in the writer's."""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

from visualdl.kinds.checks import (
    check_pixel_range, check_size, pixels_uint8, require_real, to_array)
from visualdl.kinds.image.boxes import check_boxes, encode_boxes, image_size

FORMATS = ("HWC", "CHW", "HW", "NCHW", "NHWC")
_CHANNELS = (1, 3, 4)
_GRID_PAD = 2


def check_image(tag: str, img: Any, dataformats: str) -> tuple[np.ndarray, str]:
    """Copy and check an image; returns the copy and its normalized format."""
    if not isinstance(dataformats, str) or dataformats.upper() not in FORMATS:
        raise ValueError(
            f"{tag!r}: dataformats must be one of {', '.join(FORMATS)}, got {dataformats!r}"
        )
    fmt = dataformats.upper()
    array = to_array(tag, img, "image")
    require_real(tag, array, "image")
    if array.ndim != len(fmt):
        raise ValueError(
            f"{tag!r}: image with dataformats={fmt} must have {len(fmt)} dimensions, "
            f"got shape {array.shape}"
        )
    if "C" in fmt and array.shape[fmt.index("C")] not in _CHANNELS:
        raise ValueError(
            f"{tag!r}: image must have 1, 3 or 4 channels, got shape {array.shape} "
            f"for dataformats={fmt}"
        )
    if array.size == 0:
        raise ValueError(f"{tag!r}: image is empty, shape {array.shape}")
    check_pixel_range(tag, array, "image")
    check_size(tag, "the image (as uint8 pixels)", _laid_out_size(array.shape, fmt))
    return array, fmt


def _laid_out_size(shape: tuple[int, ...], fmt: str) -> int:
    """Bytes of the uint8 image ``to_hwc_uint8`` makes (grid gaps included): its PNG is
    about as large at worst (incompressible pixels)."""
    if fmt in ("NCHW", "NHWC"):
        n = shape[0]
        c = shape[fmt.index("C")]
        h, w = (shape[2], shape[3]) if fmt == "NCHW" else (shape[1], shape[2])
        cols = math.ceil(math.sqrt(n))
        rows = math.ceil(n / cols)
        return (rows * h + (rows - 1) * _GRID_PAD) * (cols * w + (cols - 1) * _GRID_PAD) * c
    return math.prod(shape)  # HW, HWC, CHW: one byte a value


def to_hwc_uint8(array: np.ndarray, fmt: str) -> np.ndarray:
    """Lay the image out as height x width x channels uint8; a batch becomes a grid."""
    if fmt == "HW":
        array = array[:, :, None]
    elif fmt == "CHW":
        array = array.transpose(1, 2, 0)
    elif fmt == "NCHW":
        array = make_grid(array.transpose(0, 2, 3, 1))
    elif fmt == "NHWC":
        array = make_grid(array)
    return np.ascontiguousarray(pixels_uint8(array))


def make_grid(batch: np.ndarray) -> np.ndarray:
    """Tile N x H x W x C images into a near-square grid with a small gap between them."""
    n, h, w, c = batch.shape
    cols = math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    grid = np.zeros(
        (rows * h + (rows - 1) * _GRID_PAD, cols * w + (cols - 1) * _GRID_PAD, c),
        dtype=batch.dtype,
    )
    for i in range(n):
        r, col = divmod(i, cols)
        y, x = r * (h + _GRID_PAD), col * (w + _GRID_PAD)
        grid[y : y + h, x : x + w] = batch[i]
    return grid


def encode_png(hwc: np.ndarray) -> bytes:
    from PIL import Image  # imported when first needed: servers and readers never are

    # Pillow infers L / RGB / RGBA from a uint8 array's shape.
    pixels = hwc[:, :, 0] if hwc.shape[2] == 1 else hwc
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG", compress_level=3)
    return out.getvalue()


def decode_png(data: bytes) -> np.ndarray:
    """PNG bytes to an H x W x C uint8 array (for readers and tests)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        pixels = np.asarray(im)
    return pixels[:, :, None] if pixels.ndim == 2 else pixels


def check(tag: str, img: Any, dataformats: str, boxes: Any = None, labels: Any = None,
          scores: Any = None) -> tuple[tuple, int]:
    """The payload ``encode`` takes, and its size in bytes. ``boxes`` (N x 4 pixels, see
    :mod:`visualdl.kinds.image.boxes`) belong to one image, not to a batch's grid."""
    array, fmt = check_image(tag, img, dataformats)
    checked = None
    if boxes is not None:
        if fmt not in ("HW", "HWC", "CHW"):
            raise ValueError(f"{tag!r}: boxes belong to one image; got a batch "
                             f"(dataformats={fmt})")
        checked = check_boxes(tag, boxes, labels, scores, *image_size(array.shape, fmt))
    elif labels is not None or scores is not None:
        raise ValueError(f"{tag!r}: labels and scores describe boxes; no boxes were given")
    return (array, fmt, checked), array.nbytes


def encode(msg: Any, payload: tuple) -> None:
    array, fmt, boxes = payload
    hwc = to_hwc_uint8(array, fmt)
    msg.png = encode_png(hwc)
    msg.height, msg.width, msg.channels = hwc.shape
    if boxes is not None:
        encode_boxes(msg, boxes)
