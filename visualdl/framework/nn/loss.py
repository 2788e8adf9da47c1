"""Loss layers: thin ``Layer`` wrappers over the fused loss ops, so that a loss can be handed
to ``Model.prepare`` (and shows up in ``repr``) like any other layer."""

from __future__ import annotations

from ..ops.loss import cross_entropy, mse_loss
from ..tensor import Tensor
from .layer import Layer


class CrossEntropyLoss(Layer):
    """Softmax cross-entropy of (N, C) logits against (N,) or (N, 1) integer labels."""

    def __init__(self, reduction: str = "mean", ignore_index: int = -100) -> None:
        super().__init__()
        self.reduction, self.ignore_index = reduction, int(ignore_index)

    def forward(self, logits: Tensor, labels: Tensor) -> Tensor:
        return cross_entropy(logits, labels, self.reduction, self.ignore_index)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class MSELoss(Layer):
    """Mean (or summed) squared error between equally shaped tensors."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return mse_loss(input, target, self.reduction)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"
