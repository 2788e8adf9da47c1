"""What a table cell may hold, and how each is checked in the caller's thread.

A cell is a number (int, float, bool, None, NaN), a str, an image (a numpy array H x W or
H x W x C, uint8 or float in [0, 1], or a PIL image) or audio (:class:`Audio`, or a dict
``{"audio": samples, "sample_rate": rate}``). Images and audio are copied here and encoded
later, in the writer's thread, so the caller pays only for the checks and the copy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from visualdl.kinds.checks import check_utf8

__all__ = ["Audio", "CellError", "check_cell", "ImageCell", "AudioCell"]


@dataclass(frozen=True)
class Audio:
    """An audio cell of a table: samples of shape (frames,) or (frames, channels), float
    in [-1, 1] or int16, and their sample rate (``visualdl.Audio(samples, 16000)``).
    ``caption`` is shown when it is logged on its own (``visualdl.log``), as wandb's."""

    samples: Any
    sample_rate: int = 8000
    caption: str | None = None


class CellError(Exception):
    """A cell that cannot be stored; the table's check raises ``kind`` (TypeError or
    ValueError, as the image and audio checks do) with the tag, row and column added."""

    def __init__(self, message: str, kind: type = TypeError) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class ImageCell:
    pixels: np.ndarray  # the caller's image, copied and checked
    fmt: str            # "HW" or "HWC"


@dataclass(frozen=True)
class AudioCell:
    samples: np.ndarray
    sample_rate: int


_NUMBERS = (int, float, bool)


def check_cell(value: Any) -> tuple[Any, int]:
    """``(the value to keep, its approximate size in bytes)``; CellError when it cannot be
    a cell."""
    if value is None or isinstance(value, _NUMBERS):
        return value, 8
    if isinstance(value, str):
        if not value.isascii():
            _check_unicode(value)
        return value, len(value)
    if isinstance(value, np.generic):
        return _numpy_scalar(value), 8
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return _numpy_scalar(value[()]), 8
        return _image(value), value.nbytes
    if isinstance(value, Audio):
        return _audio(value.samples, value.sample_rate)
    if isinstance(value, dict) and "audio" in value:
        return _audio(value["audio"], value.get("sample_rate", 8000))
    if _is_pil(value):
        return _image(_pil_pixels(value)), value.width * value.height * 4
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        return check_cell(value.detach().cpu().numpy())
    raise CellError(
        f"a cell of type {type(value).__name__} cannot be stored; cells are numbers, str, "
        "images (numpy arrays or PIL images) or visualdl.Audio")


def _check_unicode(text: str) -> None:
    """Records hold UTF-8: a str with lone surrogates cannot be stored (nor read back)."""
    try:
        check_utf8("", "the text", text)
    except ValueError as err:
        raise CellError(_unprefixed(err), ValueError) from None


def _numpy_scalar(value: Any) -> Any:
    if isinstance(value, (np.bool_, np.integer, np.floating)):
        return value.item()
    if isinstance(value, np.str_):
        return check_cell(str(value))[0]
    raise CellError(f"a numpy {value.dtype} value cannot be a cell")


def _image(array: np.ndarray) -> ImageCell:
    from visualdl.kinds.image.write import check_image

    if array.ndim not in (2, 3):
        raise CellError(f"an array cell is an image, H x W or H x W x C; got shape "
                        f"{array.shape}", ValueError)
    fmt = "HW" if array.ndim == 2 else "HWC"
    try:
        pixels, fmt = check_image("", array, fmt)
    except (TypeError, ValueError) as err:
        raise CellError(_unprefixed(err), type(err)) from None
    return ImageCell(pixels, fmt)


def _audio(samples: Any, rate: Any) -> tuple[AudioCell, int]:
    from visualdl.kinds.audio.write import check_audio

    try:
        array = check_audio("", samples, rate)
    except (TypeError, ValueError) as err:
        raise CellError(_unprefixed(err), type(err)) from None
    return AudioCell(array, int(rate)), array.size * 2


def _unprefixed(err: Exception) -> str:
    """The kind checks' message without its ``'tag': `` prefix (empty here)."""
    text = str(err)
    return text[4:] if text.startswith("'': ") else text


def _is_pil(value: Any) -> bool:
    return hasattr(value, "getim") and hasattr(value, "mode") and hasattr(value, "size")


def _pil_pixels(image: Any) -> np.ndarray:
    if image.mode not in ("L", "RGB", "RGBA"):
        alpha = "A" in image.mode or "transparency" in image.info
        image = image.convert("RGBA" if alpha else "RGB")
    return np.asarray(image)


def json_number(value: Any) -> Any:
    """A number cell as JSON holds it: NaN and infinities as ``{"n": "NaN"}`` (the API's
    spelling, which JavaScript's ``Number()`` reads), so they differ from text cells."""
    if isinstance(value, float) and not math.isfinite(value):
        return {"n": "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")}
    return value
