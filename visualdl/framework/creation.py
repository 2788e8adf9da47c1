"""Tensor factories (zeros, ones, full, arange, rand, randn, ..._like)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import device as _device
from . import dtypes
from . import random as _random
from .tensor import Tensor


def _shape(shape: Sequence[int] | int) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _wrap(host: np.ndarray, device: Any, requires_grad: bool) -> Tensor:
    dev = _device.normalize(device)
    t = Tensor.wrap(_device.backend(dev).asarray(host), dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def full(shape: Sequence[int] | int, fill_value: float, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
    return _wrap(np.full(_shape(shape), fill_value, dt), device, requires_grad)


def zeros(shape: Sequence[int] | int, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    return full(shape, 0, dtype, device, requires_grad)


def ones(shape: Sequence[int] | int, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    return full(shape, 1, dtype, device, requires_grad)


def zeros_like(x: Tensor, dtype: Any = None) -> Tensor:
    return zeros(x.shape, dtype or x.dtype, x.device)


def ones_like(x: Tensor, dtype: Any = None) -> Tensor:
    return ones(x.shape, dtype or x.dtype, x.device)


def arange(start: int, stop: int | None = None, step: int = 1, dtype: Any = None,
           device: Any = None) -> Tensor:
    if stop is None:
        start, stop = 0, start
    host = np.arange(start, stop, step)
    if dtype is not None:
        host = host.astype(dtypes.as_dtype(dtype))
    elif host.dtype.kind == "f":
        host = host.astype(np.float32)
    return _wrap(host, device, False)


def rand(shape: Sequence[int] | int, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform [0, 1) from the global seeded generator (``vf.seed``)."""
    dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
    return _wrap(_random.generator().random(_shape(shape)).astype(dt), device, requires_grad)


def randn(shape: Sequence[int] | int, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal from the global seeded generator (``vf.seed``)."""
    dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
    return _wrap(_random.generator().standard_normal(_shape(shape)).astype(dt), device,
                 requires_grad)


def randint(low: int, high: int, shape: Sequence[int] | int, device: Any = None) -> Tensor:
    return _wrap(_random.generator().integers(low, high, _shape(shape), dtype=np.int64), device,
                 False)
