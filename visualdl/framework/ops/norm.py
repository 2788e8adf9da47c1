"""batch_norm (train and eval, running statistics updated by the kernel) and layer_norm."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..dispatch import Op, apply, register
from ..tensor import Tensor


def _affine(be, w, b, n, dtype):
    w = be.full((n,), 1.0, dtype) if w is None else be.reshape(w, (n,))
    b = be.full((n,), 0.0, dtype) if b is None else be.reshape(b, (n,))
    return w, b


@register("batch_norm")
class BatchNorm(Op):
    def forward(self, x, weight, bias, running_mean, running_var, training, momentum, eps):
        be = self.be
        n, c = x.shape[0], x.shape[1]
        x3 = be.reshape(x, (n, c, -1))
        w, b = _affine(be, weight, bias, c, x.dtype)
        if training:
            y, mean, invstd = be.batch_norm_train(x3, w, b, running_mean, running_var,
                                                  momentum, eps)
        else:
            y, invstd = be.batch_norm_eval(x3, running_mean, running_var, w, b, eps)
            mean = running_mean
        if self.recording:
            self.saved = (x3, mean, invstd, w, x.shape)
        return be.reshape(y, x.shape)

    def backward(self, g):
        be = self.be
        x3, mean, invstd, w, xshape = self.saved
        dx, dw, db = be.batch_norm_grad(x3, be.reshape(g, x3.shape), mean, invstd, w,
                                        self.attrs["training"])
        return (be.reshape(dx, xshape) if self.needs[0] else None,
                dw if self.needs[1] else None, db if self.needs[2] else None, None, None)


def batch_norm(x: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, epsilon: float = 1e-5) -> Tensor:
    """Normalise over every axis but 1 (channels). In training, batch statistics are used and
    the running ones (if given) updated: new = (1 - momentum) * old + momentum * batch."""
    if x.ndim < 2:
        raise ValueError(f"batch_norm expects (N, C, ...) input, got {x.shape}")
    if not training and (running_mean is None or running_var is None):
        raise ValueError("batch_norm in eval mode needs running_mean and running_var")
    return apply("batch_norm", x, weight, bias, running_mean, running_var,
                 training=bool(training), momentum=float(momentum), eps=float(epsilon))


@register("layer_norm")
class LayerNorm(Op):
    def forward(self, x, weight, bias, normalized_shape, eps):
        be = self.be
        d = math.prod(normalized_shape)
        x2 = be.reshape(x, (-1, d))
        w, b = _affine(be, weight, bias, d, x.dtype)
        y, mean, rstd = be.layer_norm(x2, w, b, eps)
        if self.recording:
            self.saved = (x2, mean, rstd, w, x.shape)
        return be.reshape(y, x.shape)

    def backward(self, g):
        be = self.be
        x2, mean, rstd, w, xshape = self.saved
        dx, dw, db = be.layer_norm_grad(x2, be.reshape(g, x2.shape), mean, rstd, w)
        wshape = tuple(self.attrs["normalized_shape"])
        return (be.reshape(dx, xshape) if self.needs[0] else None,
                be.reshape(dw, wshape) if self.needs[1] else None,
                be.reshape(db, wshape) if self.needs[2] else None)


def layer_norm(x: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, epsilon: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` axes of each sample."""
    ns = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) \
        else tuple(int(v) for v in normalized_shape)
    if tuple(x.shape[x.ndim - len(ns):]) != ns:
        raise ValueError(f"layer_norm: trailing shape of {x.shape} is not {ns}")
    return apply("layer_norm", x, weight, bias, normalized_shape=ns, eps=float(epsilon))
