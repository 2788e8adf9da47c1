"""Gradient clipping by global norm (sum of squares on device, one host sync per step)."""

from __future__ import annotations

import math
from typing import Iterable

from .. import device as _device
from ..sparse import RowSparseGrad
from ..tensor import Tensor


def _grad_arrays(p: Tensor):
    g = p.grad
    if g is None:
        return None
    if isinstance(g, RowSparseGrad):
        g.coalesce()
        return g.be, g.values
    return _device.backend(g.device), g._data


def clip_grad_norm_(parameters: Iterable[Tensor], max_norm: float) -> float:
    """Scale all gradients so that their joint L2 norm is at most ``max_norm``; returns the
    norm before clipping (PyTorch semantics: coefficient max_norm / (norm + 1e-6))."""
    arrays = [a for a in (_grad_arrays(p) for p in parameters) if a is not None]
    total = math.sqrt(sum(be.sum_squares(g) for be, g in arrays))
    coef = float(max_norm) / (total + 1e-6)
    if coef < 1.0:
        for be, g in arrays:
            be.scale_(g, coef)
    return total


class ClipGradByGlobalNorm:
    """PaddlePaddle-style clip object: ``SGD(..., grad_clip=ClipGradByGlobalNorm(1.0))``."""

    def __init__(self, clip_norm: float) -> None:
        self.clip_norm = float(clip_norm)

    def __call__(self, parameters: Iterable[Tensor]) -> float:
        return clip_grad_norm_(parameters, self.clip_norm)
