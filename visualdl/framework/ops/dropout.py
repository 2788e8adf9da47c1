"""Inverted dropout."""

from __future__ import annotations

from .. import random as _random
from ..dispatch import Op, apply, register
from ..tensor import Tensor


@register("dropout")
class Dropout(Op):
    def forward(self, x, p, seed):
        y, mask = self.be.dropout(x, p, _scale(p), seed)
        if self.recording:
            self.saved = mask
        return y

    def backward(self, g):
        return (self.be.dropout_grad(g, self.saved, _scale(self.attrs["p"])),)


def _scale(p: float) -> float:
    """Survivors' scale 1/(1-p); p = 1 keeps nothing, so any scale (0) serves."""
    return 0.0 if p >= 1.0 else 1.0 / (1.0 - p)


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Inverted dropout: zero with probability p, scale survivors by 1/(1-p); identity when
    not training."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return x
    return apply("dropout", x, p=float(p), seed=_random.next_seed())
