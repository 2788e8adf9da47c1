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
    if isinstance(walltime, bool) or not isinstance(walltime, (numbers.Real, np.number)):
        raise TypeError(f"{tag!r}: walltime must be a number of seconds, got {walltime!r}")
    value = float(walltime)
    if not math.isfinite(value):
        raise ValueError(f"{tag!r}: walltime must be finite, got {value}")
    return value


def scalar_value(tag: str, value: Any) -> float:
    """A float from a number, numpy scalar, 0-d or 1-element array, or tensor.

    NaN and infinities are valid data and pass through.
    """
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, (numbers.Real, np.integer, np.floating)):
        return float(value)
    if isinstance(value, (str, bytes, complex, np.complexfloating)):
        raise TypeError(f"{tag!r}: value must be a real number, got {type(value).__name__}")
    if hasattr(value, "item"):
        try:
            item = value.item()
        except (ValueError, RuntimeError) as exc:
            raise ValueError(
                f"{tag!r}: value must hold exactly one number ({exc})"
            ) from None
        return scalar_value(tag, item)
    raise TypeError(f"{tag!r}: value must be a real number, got {type(value).__name__}")


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
