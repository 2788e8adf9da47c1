"""Losses: fused softmax cross-entropy with integer labels, and mean squared error."""

from __future__ import annotations

import math

from .. import dtypes
from ..codes import MUL, NEG, R_SUM, SCALE, SUB
from ..dispatch import Op, apply, register
from ..tensor import Tensor, as_tensor

_REDUCTIONS = ("mean", "sum", "none")


def _reduce(be, rows, reduction, count):
    if reduction == "none":
        return rows
    total = be.reduce(R_SUM, rows, tuple(range(len(rows.shape))))
    return be.unary(SCALE, total, 1.0 / max(count, 1)) if reduction == "mean" else total


@register("cross_entropy")
class CrossEntropy(Op):
    def forward(self, logits, labels, reduction, ignore_index):
        be = self.be
        # The labels are read on the host once (N integers; a copy from the GPU), for both
        # the range check and the mean's count. A device kernel cannot raise: an out-of-range
        # label would read past its row and give NaN silently.
        host = be.to_numpy(labels)
        n = host.shape[0]
        lo, hi = (int(host.min()), int(host.max())) if n else (0, -1)
        if ignore_index < lo or ignore_index > hi:  # the usual case: nothing is ignored
            used_count = n
            bad = n and (lo < 0 or hi >= logits.shape[1])
        else:
            used = host != ignore_index
            classes = host[used]
            used_count = int(classes.size)
            bad = classes.size and (classes.min() < 0 or classes.max() >= logits.shape[1])
        if bad:
            raise IndexError("cross_entropy: label out of range")
        rows, probs = be.cross_entropy(logits, labels, ignore_index, self.recording)
        # as PyTorch: the mean is over the labels not ignored
        count = used_count if reduction == "mean" else rows.shape[0]
        if self.recording:
            self.saved = (probs, labels, count)
        return _reduce(be, rows, reduction, count)

    def backward(self, g):
        probs, labels, count = self.saved
        scale = 1.0 / max(count, 1) if self.attrs["reduction"] == "mean" else 1.0
        return (self.be.cross_entropy_grad(probs, labels, self.attrs["ignore_index"], g, scale),
                None)


def cross_entropy(logits: Tensor, labels: Tensor, reduction: str = "mean",
                  ignore_index: int = -100) -> Tensor:
    """Softmax cross-entropy of (N, C) logits against (N,) int64 class indices."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}")
    labels = as_tensor(labels, like=None) if not isinstance(labels, Tensor) else labels
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels.reshape(-1)
    if logits.ndim != 2 or labels.shape != (logits.shape[0],):
        raise ValueError(f"cross_entropy expects logits (N, C) and labels (N,), got "
                         f"{logits.shape} and {labels.shape}")
    if labels.dtype != dtypes.int64:
        labels = labels.astype(dtypes.int64)
    return apply("cross_entropy", logits, labels, reduction=reduction,
                 ignore_index=int(ignore_index))


@register("mse_loss")
class MSELoss(Op):
    def forward(self, a, b, reduction):
        be = self.be
        d = be.binary(SUB, a, b)
        if self.recording:
            self.saved = d
        n = math.prod(d.shape)
        return _reduce(be, be.binary(MUL, d, d), reduction, n)

    def backward(self, g):
        be = self.be
        d = self.saved
        n = math.prod(d.shape)
        scale = 2.0 / max(n, 1) if self.attrs["reduction"] == "mean" else 2.0
        ga = be.unary(SCALE, be.binary(MUL, d, g), scale)
        gb = be.unary(NEG, ga) if self.needs[1] else None
        return (ga if self.needs[0] else None), gb


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}")
    from .elementwise import _operands

    a, b = _operands(input, target)
    if a.shape != b.shape:
        raise ValueError(f"mse_loss: input {a.shape} and target {b.shape} differ")
    return apply("mse_loss", a, b, reduction=reduction)
