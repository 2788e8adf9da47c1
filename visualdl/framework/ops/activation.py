"""softmax and log_softmax along an axis."""

from __future__ import annotations

from ..dispatch import Op, apply, register
from ..tensor import Tensor


class _Softmax(Op):
    log = False

    def forward(self, x, axis):
        y = self.be.softmax(x, axis, self.log)
        if self.recording:
            self.saved = y
        return y

    def backward(self, g):
        return (self.be.softmax_grad(self.saved, g, self.attrs["axis"], self.log),)


register("softmax")(type("Softmax", (_Softmax,), {"log": False}))
register("log_softmax")(type("LogSoftmax", (_Softmax,), {"log": True}))


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    return apply("softmax", x, axis=axis % x.ndim)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    return apply("log_softmax", x, axis=axis % x.ndim)
