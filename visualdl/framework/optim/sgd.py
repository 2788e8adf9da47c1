"""SGD with momentum, Nesterov and L2 weight decay (PyTorch semantics, dampening 0)."""

from __future__ import annotations

from typing import Any, Iterable

from ..tensor import Tensor
from .lr import LRScheduler
from .optimizer import Optimizer


class SGD(Optimizer):
    def __init__(self, parameters: Iterable[Tensor], learning_rate: float | LRScheduler = 0.01,
                 momentum: float = 0.0, nesterov: bool = False, weight_decay: float = 0.0,
                 grad_clip: Any = None) -> None:
        super().__init__(parameters, learning_rate, weight_decay, grad_clip)
        if nesterov and momentum <= 0:
            raise ValueError("Nesterov momentum needs momentum > 0")
        self.momentum, self.nesterov = float(momentum), bool(nesterov)

    def _update(self, p: Tensor, lr: float) -> None:
        be, p2, g2, rows = self._rows(p)
        buf = self._state(p, "momentum")[0] if self.momentum else p2
        be.sgd_update(p2, g2, rows, buf, lr, self.momentum, self.weight_decay, self.nesterov)
