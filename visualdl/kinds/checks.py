"""Turning what users pass into checked numpy values, without importing their frameworks.

Anything with ``.numpy()`` (framework tensors, torch tensors after ``.detach().cpu()``)
or ``.item()`` works. Errors name the tag and the problem, so that a bad call deep in a
training loop is easy to find.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

#: The most bytes one entry's payload may hold. Protobuf cannot serialize (or parse) a
#: message of 2 GiB or more, and a small entry may share its record with up to 1 MiB of
#: others: anything larger is refused at the call, never dropped in the writer thread.
MAX_PAYLOAD_BYTES = 2**31 - (4 << 20)


def check_tag(tag: Any) -> str:
    if not isinstance(tag, str):
        raise TypeError(f"tag must be a str, got {type(tag).__name__}")
    if not tag:
        raise ValueError("tag must not be empty")
    if "\x00" in tag:
        raise ValueError(f"tag {tag!r} must not contain NUL characters")
    check_utf8(tag, "tag", tag)
    return tag


def check_utf8(tag: str, what: str, text: str) -> None:
    """Records hold UTF-8: a str with lone surrogates cannot be written."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{tag!r}: {what} is not valid Unicode (lone surrogates)") from None


def check_step(tag: str, step: Any) -> int:
    """Steps are integers: Python ints, numpy integers, or 0-d integer tensors."""
    if isinstance(step, bool) or isinstance(step, (float, np.floating)):
        raise TypeError(f"{tag!r}: step must be an integer, got {step!r}")
    try:
        value = int(step.__index__())
    except (AttributeError, TypeError):
        raise TypeError(
            f"{tag!r}: step must be an integer, got {type(step).__name__}"
        ) from None
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"{tag!r}: step {value} does not fit in int64")
    return value


def check_walltime(tag: str, walltime: Any) -> float:
    """Seconds since the epoch: any finite real number (NaN and infinities are refused,
    whatever their type: a Python float, a numpy scalar or an int too large for a float)."""
    if isinstance(walltime, bool) or not isinstance(walltime, (numbers.Real, np.number)):
        raise TypeError(f"{tag!r}: walltime must be a number of seconds, got {walltime!r}")
    try:
        value = float(walltime)
    except OverflowError:
        raise ValueError(f"{tag!r}: walltime {walltime} is too large for a float") from None
    if not math.isfinite(value):
        raise ValueError(f"{tag!r}: walltime must be finite, got {value}")
    return value


def scalar_value(tag: str, value: Any) -> float:
    """A float from a number, numpy scalar, 0-d or 1-element array, or tensor.

    NaN and infinities are valid data and pass through; an integer too large for a float
    is refused (it would overflow, not become infinity). ``.item()`` is followed once: a
    tensor's item is a Python number, and an object whose item is not is refused.
    """
    number = _real(tag, value)
    if number is None and hasattr(value, "item"):
        try:
            item = value.item()
        except (ValueError, RuntimeError) as exc:
            raise ValueError(
                f"{tag!r}: value must hold exactly one number ({exc})"
            ) from None
        number = _real(tag, item)
        if number is None:
            raise TypeError(
                f"{tag!r}: value.item() must give a real number, got {type(item).__name__}"
            )
    if number is None:
        raise TypeError(f"{tag!r}: value must be a real number, got {type(value).__name__}")
    return number


def _real(tag: str, value: Any) -> float | None:
    """``value`` as a float when it is a real number, else None (a TypeError for text)."""
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, (numbers.Real, np.integer, np.floating)):
        try:
            return float(value)
        except OverflowError:
            raise ValueError(f"{tag!r}: value {value} is too large for a float") from None
    if isinstance(value, (str, bytes, complex, np.complexfloating)):
        raise TypeError(f"{tag!r}: value must be a real number, got {type(value).__name__}")
    return None


def check_size(tag: str, what: str, nbytes: int) -> None:
    """Refuse a payload too large for one record (see ``MAX_PAYLOAD_BYTES``)."""
    if nbytes > MAX_PAYLOAD_BYTES:
        raise ValueError(
            f"{tag!r}: {what} is {nbytes / 2**30:.2f} GiB; one entry holds at most "
            f"{MAX_PAYLOAD_BYTES / 2**30:.2f} GiB"
        )


def check_text_size(tag: str, what: str, text: str) -> None:
    """Refuse a str whose UTF-8 form is too large for one record; it is encoded to measure
    only when it could be (UTF-8 takes at most 4 bytes a character)."""
    if 4 * len(text) > MAX_PAYLOAD_BYTES:
        check_size(tag, what, len(text.encode("utf-8", "surrogatepass")))


def to_array(tag: str, data: Any, what: str = "value") -> np.ndarray:
    """A private numpy copy of ``data``: the caller may change theirs afterwards."""
    if hasattr(data, "detach"):  # torch-like: leave the autograd graph
        data = data.detach()
    if hasattr(data, "cpu") and not isinstance(data, np.ndarray):
        data = data.cpu()
    if hasattr(data, "numpy") and not isinstance(data, np.ndarray):
        data = data.numpy()
    try:
        array = np.array(data, copy=True)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{tag!r}: {what} is not array-like ({exc})") from None
    if array.dtype == object:
        raise TypeError(f"{tag!r}: {what} must be numeric, got an object array")
    return array


def require_real(tag: str, array: np.ndarray, what: str) -> None:
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
        raise TypeError(f"{tag!r}: {what} must be numeric, got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.complexfloating):
        raise TypeError(f"{tag!r}: {what} must be real, got dtype {array.dtype}")


def require_finite(tag: str, array: np.ndarray, what: str) -> None:
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise ValueError(f"{tag!r}: {what} contains NaN or infinite values")


def check_pixel_range(tag: str, array: np.ndarray, what: str) -> None:
    """Pixels (of an image or video, ``what``) are uint8, or floats in [0, 1], or integers
    in [0, 255]: anything else would be clipped into a picture that silently lies."""
    kind = array.dtype.kind
    if kind == "b":
        raise TypeError(f"{tag!r}: {what} must be uint8 or float, got dtype bool")
    if kind == "f":
        require_finite(tag, array, what)
        lo, hi = array.min(), array.max()
        if lo < -1e-6 or hi > 1 + 1e-6:
            raise ValueError(
                f"{tag!r}: float {what}s must lie in [0, 1], got values in [{lo:g}, {hi:g}]")
    elif array.dtype != np.uint8:
        lo, hi = array.min(), array.max()
        if lo < 0 or hi > 255:
            raise ValueError(
                f"{tag!r}: integer {what}s must lie in [0, 255], got values in [{lo}, {hi}]")


def pixels_uint8(array: np.ndarray) -> np.ndarray:
    """Pixels that passed ``check_pixel_range`` as uint8: floats in [0, 1] scaled by 255
    and rounded, integers as they are."""
    if array.dtype.kind == "f":
        array = np.rint(np.clip(array, 0.0, 1.0) * 255.0)
    return np.asarray(array, dtype=np.uint8)
