"""Tensors, reader side: the index keeps dtype and shape; the values are loaded on demand.
An entry whose dtype is not numeric or whose bytes do not fill its shape is refused
(``ValueError``: the reader counts a bad record)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["meta", "decode", "TensorEvent"]

_KINDS = "biuf"  # bool, signed, unsigned, float


@dataclass(frozen=True)
class TensorEvent:
    """One step's tensor: ``value`` is a read-only numpy array of the logged dtype."""

    step: int
    wall_time: float
    value: np.ndarray


def _dtype(msg: Any) -> np.dtype:
    try:
        dtype = np.dtype(msg.dtype)
    except TypeError:
        raise ValueError(f"tensor dtype {msg.dtype!r} is not a numpy dtype") from None
    if dtype.kind not in _KINDS:
        raise ValueError(f"tensor dtype {msg.dtype!r} is not numeric")
    return dtype


def _checked(msg: Any) -> tuple[np.dtype, tuple[int, ...]]:
    dtype, shape = _dtype(msg), tuple(msg.shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"tensor shape {list(shape)} has a negative dimension")
    need = math.prod(shape) * dtype.itemsize
    if len(msg.data) != need:
        raise ValueError(f"tensor of shape {list(shape)} and dtype {dtype.str} needs {need} "
                         f"bytes, has {len(msg.data)}")
    return dtype, shape


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    dtype, shape = _checked(msg)
    return len(msg.data), {"dtype": dtype.str, "shape": list(shape)}


def array_of(msg: Any) -> np.ndarray:
    """The stored values as a read-only array of their dtype and shape."""
    dtype, shape = _checked(msg)
    return np.frombuffer(msg.data, dtype=dtype).reshape(shape)


def decode(msg: Any) -> TensorEvent:
    return TensorEvent(msg.step, msg.wall_time, array_of(msg))
