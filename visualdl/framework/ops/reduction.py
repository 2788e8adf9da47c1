"""Reductions: sum, mean, max, min (with axis and keepdim) and argmax."""

from __future__ import annotations

import builtins
import math
from typing import Any

from .. import dtypes, shapes
from ..codes import DIV, EQ, MUL, R_MAX, R_MIN, R_SUM, SCALE
from ..dispatch import Op, apply, register
from ..tensor import Tensor


class _Reduce(Op):
    def _expand_grad(self, g, shape, axes):
        be = self.be
        keep = shapes.reduced_shape(shape, axes, True)
        return be.expand(be.reshape(g, keep), shape)


@register("sum")
class Sum(_Reduce):
    def forward(self, x, axis, keepdim):
        if self.recording:
            self.saved = x.shape
        return self.be.reduce(R_SUM, x, axis, keepdim)

    def backward(self, g):
        return (self._expand_grad(g, self.saved, self.attrs["axis"]),)


@register("mean")
class Mean(_Reduce):
    def forward(self, x, axis, keepdim):
        if self.recording:
            self.saved = x.shape
        n = math.prod([x.shape[a] for a in axis])
        return self.be.unary(SCALE, self.be.reduce(R_SUM, x, axis, keepdim), 1.0 / builtins.max(n, 1))

    def backward(self, g):
        shape = self.saved
        axis = self.attrs["axis"]
        n = math.prod([shape[a] for a in axis])
        return (self.be.unary(SCALE, self._expand_grad(g, shape, axis), 1.0 / builtins.max(n, 1)),)


class _Extreme(_Reduce):
    code = R_MAX

    def forward(self, x, axis, keepdim):
        if x.size == 0:
            raise ValueError("max/min of an empty tensor")
        y = self.be.reduce(self.code, x, axis, keepdim)
        if self.recording:
            self.saved = (x, y)
        return y

    def backward(self, g):
        """The gradient is shared evenly between tied extremes (like ``amax``)."""
        be = self.be
        x, y = self.saved
        axis = self.attrs["axis"]
        keep = shapes.reduced_shape(x.shape, axis, True)
        mask = be.astype(be.compare(EQ, x, be.reshape(y, keep)), g.dtype)
        count = be.reduce(R_SUM, mask, axis, True)
        share = be.binary(DIV, be.reshape(g, keep), count)
        return (be.binary(MUL, mask, share),)


register("max")(type("Max", (_Extreme,), {"code": R_MAX}))
register("min")(type("Min", (_Extreme,), {"code": R_MIN}))


@register("argmax")
class ArgMax(Op):
    differentiable = False

    def forward(self, x, axis, keepdim):
        return self.be.argmax(x, axis, keepdim)


def _axes(x: Tensor, axis: Any) -> tuple[int, ...]:
    return shapes.normalize_axes(axis, x.ndim)


def sum(x: Tensor, axis: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    if x.dtype == dtypes.bool_:
        from .elementwise import cast

        x = cast(x, dtypes.int64)
    return apply("sum", x, axis=_axes(x, axis), keepdim=bool(keepdim))


def mean(x: Tensor, axis: Any = None, keepdim: bool = False) -> Tensor:
    if not dtypes.is_float(x.dtype):
        from .elementwise import cast

        x = cast(x, dtypes.float32)
    return apply("mean", x, axis=_axes(x, axis), keepdim=bool(keepdim))


def max(x: Tensor, axis: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    return apply("max", x, axis=_axes(x, axis), keepdim=bool(keepdim))


def min(x: Tensor, axis: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    return apply("min", x, axis=_axes(x, axis), keepdim=bool(keepdim))


def argmax(x: Tensor, axis: int | None = None, keepdim: bool = False) -> Tensor:
    ax = None if axis is None else _axes(x, axis)[0]
    return apply("argmax", x, axis=ax, keepdim=bool(keepdim))
