"""Adam (L2 weight decay added to the gradient) and AdamW (decoupled weight decay)."""

from __future__ import annotations

from typing import Any, Iterable

from ..tensor import Tensor
from .lr import LRScheduler
from .optimizer import Optimizer


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, parameters: Iterable[Tensor], learning_rate: float | LRScheduler = 0.001,
                 beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8,
                 weight_decay: float = 0.0, grad_clip: Any = None) -> None:
        super().__init__(parameters, learning_rate, weight_decay, grad_clip)
        self.beta1, self.beta2, self.epsilon = float(beta1), float(beta2), float(epsilon)

    def _update(self, p: Tensor, lr: float) -> None:
        be, p2, g2, rows = self._rows(p)
        m, v = self._state(p, "moment1", "moment2")
        t = self.step_count
        be.adam_update(p2, g2, rows, m, v, lr, self.beta1, self.beta2, self.epsilon,
                       self.weight_decay, self._decoupled, 1.0 - self.beta1 ** t,
                       1.0 - self.beta2 ** t)


class AdamW(Adam):
    """Adam with decoupled weight decay: p -= lr * weight_decay * p, then the Adam step."""

    _decoupled = True

    def __init__(self, parameters: Iterable[Tensor], learning_rate: float | LRScheduler = 0.001,
                 beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8,
                 weight_decay: float = 0.01, grad_clip: Any = None) -> None:
        super().__init__(parameters, learning_rate, beta1, beta2, epsilon, weight_decay, grad_clip)
