"""Data types: numpy dtypes, so that ``tensor.dtype`` prints and compares like numpy's.

The framework computes in float32 (default) or float64, indexes with int64 and masks with bool.
"""

from __future__ import annotations

from typing import Any

import numpy as np

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
bool_ = np.dtype(np.bool_)
uint8 = np.dtype(np.uint8)

SUPPORTED = (float32, float64, int32, int64, bool_, uint8)
FLOATS = (float32, float64)

_ALIASES = {
    "float": float32, "float32": float32, "fp32": float32,
    "double": float64, "float64": float64, "fp64": float64,
    "int": int64, "long": int64, "int64": int64, "int32": int32,
    "bool": bool_, "uint8": uint8,
}


def as_dtype(dtype: Any) -> np.dtype:
    """Normalise a user-supplied dtype (string, numpy dtype, python type) to a numpy dtype."""
    if isinstance(dtype, str):
        if dtype not in _ALIASES:
            raise TypeError(f"unsupported dtype {dtype!r}; use one of {sorted(_ALIASES)}")
        return _ALIASES[dtype]
    if dtype is float:
        return float32
    if dtype is int:
        return int64
    if dtype is bool:
        return bool_
    dt = np.dtype(dtype)
    if dt not in SUPPORTED:
        raise TypeError(f"unsupported dtype {dt}; supported: {[str(d) for d in SUPPORTED]}")
    return dt


def is_float(dtype: np.dtype) -> bool:
    return dtype in FLOATS


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """Result dtype of a binary op: float64 > float32 > int64 > int32 > uint8 > bool."""
    if a == b:
        return a
    order = (bool_, uint8, int32, int64, float32, float64)
    return order[max(order.index(a), order.index(b))]


def float_result(dtype: np.dtype) -> np.dtype:
    """Dtype of a math result (exp, div, mean) on ``dtype``: integers become float32."""
    return dtype if dtype in FLOATS else float32
