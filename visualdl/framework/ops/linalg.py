"""Matrix products: batched ``matmul`` and the fused ``linear`` (x @ W^T + b)."""

from __future__ import annotations

from ..codes import R_SUM
from ..dispatch import Op, apply, register
from ..tensor import Tensor, as_tensor
from .common import sum_to


@register("matmul")
class MatMul(Op):
    def forward(self, a, b):
        if self.recording:
            self.saved = (a, b)
        return self.be.matmul(a, b)

    def backward(self, g):
        a, b = self.saved
        be = self.be
        ga = sum_to(be, be.matmul(g, b, tb=True), a.shape) if self.needs[0] else None
        gb = sum_to(be, be.matmul(a, g, ta=True), b.shape) if self.needs[1] else None
        return ga, gb


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """numpy-style matmul: 1-D operands are promoted and the added axis removed again;
    leading (batch) axes broadcast."""
    from .elementwise import _operands
    from .shape import reshape

    a, b = _operands(as_tensor(a), as_tensor(b))
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul needs at least 1-d operands")
    squeeze_a = a.ndim == 1
    squeeze_b = b.ndim == 1
    if squeeze_a:
        a = reshape(a, (1, a.shape[0]))
    if squeeze_b:
        b = reshape(b, (b.shape[0], 1))
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not align")
    out = apply("matmul", a, b)
    if squeeze_a or squeeze_b:
        shape = out.shape[:-2] + ((out.shape[-2],) if not squeeze_a else ()) + \
            ((out.shape[-1],) if not squeeze_b else ())
        out = reshape(out, shape)
    return out


@register("linear")
class Linear(Op):
    """y = x @ weight^T + bias with weight (out, in), bias fused into the GEMM output."""

    def forward(self, x, w, b):
        be = self.be
        xshape = tuple(x.shape)
        flat = len(xshape) == 2  # (batch, features): no reshapes (the usual case)
        x2 = x if flat else be.reshape(x, (-1, xshape[-1]))
        y = be.matmul(x2, w, tb=True)
        if b is not None:
            be.bias_add_(y, b, 1)
        if self.recording:
            self.saved = (x2, w, None if flat else xshape)
        return y if flat else be.reshape(y, xshape[:-1] + (w.shape[0],))

    def backward(self, g):
        x2, w, xshape = self.saved
        be = self.be
        g2 = g if xshape is None else be.reshape(g, (-1, w.shape[0]))
        if self.needs[0]:
            gx = be.matmul(g2, w)
            if xshape is not None:
                gx = be.reshape(gx, xshape)
        else:
            gx = None
        gw = be.matmul(g2, x2, ta=True) if self.needs[1] else None
        gb = be.reduce(R_SUM, g2, (0,)) if len(self.needs) > 2 and self.needs[2] else None
        return gx, gw, gb


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear: input features {x.shape[-1]} != weight in_features "
                         f"{weight.shape[1]}")
    return apply("linear", x, weight, bias)
