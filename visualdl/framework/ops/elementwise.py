"""Elementwise ops: unary math and activations, broadcasting binary arithmetic, comparisons,
casts. Binary inputs are promoted to one dtype (with a recorded ``cast``) before dispatch, so
kernels always see equal dtypes."""

from __future__ import annotations

from typing import Any

from .. import codes, dtypes
from ..codes import ADD, DIV, GE, LT, MUL, NEG, SUB
from ..dispatch import Op, apply, register
from ..tensor import Tensor, as_tensor
from .common import sum_to

# --------------------------------------------------------------------- cast


@register("cast")
class Cast(Op):
    def forward(self, x, dtype):
        if self.recording:
            self.saved = x.dtype
        return self.be.astype(x, dtype)

    def backward(self, g):
        return (self.be.astype(g, self.saved),)


def cast(x: Tensor, dtype: Any) -> Tensor:
    """Convert to ``dtype`` (gradient flows back between float types)."""
    dt = dtypes.as_dtype(dtype)
    if x.dtype == dt:
        return x
    if x.requires_grad and not dtypes.is_float(dt):
        from ..autograd import no_grad

        with no_grad():
            return apply("cast", x, dtype=dt)
    return apply("cast", x, dtype=dt)


# --------------------------------------------------------------------- unary

_SAVE_X = {codes.LOG, codes.LEAKY_RELU, codes.GELU, codes.POW_SCALAR, codes.ABS}


class _Unary(Op):
    code = 0

    def forward(self, x, alpha=0.0):
        y = self.be.unary(self.code, x, alpha)
        if self.recording:
            self.saved = x if self.code in _SAVE_X else y
        return y

    def backward(self, g):
        x = self.saved if self.code in _SAVE_X else None
        y = None if self.code in _SAVE_X else self.saved
        return (self.be.unary_grad(self.code, x, y, g, self.attrs.get("alpha", 0.0)),)


def _unary_op(name: str, code: int) -> type[Op]:
    return register(name)(type(f"Unary_{name}", (_Unary,), {"code": code, "__slots__": ()}))


for _name, _code in codes.UNARY.items():
    if _name not in ("scale", "add_scalar"):
        _unary_op(_name, _code)


def _float_input(x: Tensor) -> Tensor:
    """Integer and bool inputs of float-valued math are cast to float32 first."""
    if not dtypes.is_float(x.dtype):
        return cast(x, dtypes.float32)
    return x


def neg(x: Tensor) -> Tensor:
    return apply("neg", x)


def exp(x: Tensor) -> Tensor:
    return apply("exp", _float_input(x))


def log(x: Tensor) -> Tensor:
    return apply("log", _float_input(x))


def sqrt(x: Tensor) -> Tensor:
    return apply("sqrt", _float_input(x))


def tanh(x: Tensor) -> Tensor:
    return apply("tanh", _float_input(x))


def sigmoid(x: Tensor) -> Tensor:
    return apply("sigmoid", _float_input(x))


def relu(x: Tensor) -> Tensor:
    return apply("relu", x)


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    return apply("leaky_relu", x, alpha=float(negative_slope))


def gelu(x: Tensor) -> Tensor:
    """Exact (erf) GELU, as PyTorch's default."""
    return apply("gelu", _float_input(x))


def abs(x: Tensor) -> Tensor:  # noqa: A001 - mirrors torch.abs
    return apply("abs", x)


# --------------------------------------------------------------------- binary


class _Binary(Op):
    code = 0

    def forward(self, a, b):
        out = self.be.binary(self.code, a, b)
        if self.recording:
            self.saved = (a, b, out)
        return out

    def _grads(self, g, a, b, out):
        raise NotImplementedError

    def backward(self, g):
        a, b, out = self.saved
        ga, gb = self._grads(g, a, b, out)
        return (sum_to(self.be, ga, a.shape) if ga is not None and self.needs[0] else None,
                sum_to(self.be, gb, b.shape) if gb is not None and self.needs[1] else None)


@register("add")
class Add(_Binary):
    code = ADD

    def forward(self, a, b):
        if self.recording:
            self.saved = (a.shape, b.shape)  # the gradient needs only the shapes
        return self.be.binary(self.code, a, b)

    def backward(self, g):
        sa, sb = self.saved
        return (sum_to(self.be, g, sa) if self.needs[0] else None,
                sum_to(self.be, g, sb) if self.needs[1] else None)


@register("sub")
class Sub(Add):
    code = SUB

    def backward(self, g):
        sa, sb = self.saved
        return (sum_to(self.be, g, sa) if self.needs[0] else None,
                sum_to(self.be, self.be.unary(NEG, g), sb) if self.needs[1] else None)


@register("mul")
class Mul(_Binary):
    code = MUL

    def _grads(self, g, a, b, out):
        be = self.be
        return (be.binary(MUL, g, b) if self.needs[0] else None,
                be.binary(MUL, g, a) if self.needs[1] else None)


@register("div")
class Div(_Binary):
    code = DIV

    def _grads(self, g, a, b, out):
        be = self.be
        ga = be.binary(DIV, g, b)
        gb = be.unary(NEG, be.binary(MUL, ga, out)) if self.needs[1] else None
        return ga, gb


@register("pow")
class Pow(_Binary):
    code = codes.POW

    def _grads(self, g, a, b, out):
        be = self.be
        ga = gb = None
        if self.needs[0]:  # g * b * a^(b-1)
            bm1 = be.unary(codes.ADD_SCALAR, b, -1.0)
            ga = be.binary(MUL, g, be.binary(MUL, b, be.binary(codes.POW, a, bm1)))
        if self.needs[1]:  # g * out * log(a)
            gb = be.binary(MUL, be.binary(MUL, g, out), be.unary(codes.LOG, a))
        return ga, gb


class _MinMax(_Binary):
    def _grads(self, g, a, b, out):
        be = self.be
        first = be.astype(be.compare(GE if self.code == codes.MAXIMUM else codes.LE, a, b), g.dtype)
        second = be.astype(be.compare(LT if self.code == codes.MAXIMUM else codes.GT, a, b), g.dtype)
        return be.binary(MUL, g, first), be.binary(MUL, g, second)


register("maximum")(type("Maximum", (_MinMax,), {"code": codes.MAXIMUM, "__slots__": ()}))
register("minimum")(type("Minimum", (_MinMax,), {"code": codes.MINIMUM, "__slots__": ()}))


def _operands(a: Any, b: Any, to_float: bool = False) -> tuple[Tensor, Tensor]:
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    a = as_tensor(a, like=tb) if ta is None else a
    b = as_tensor(b, like=ta) if tb is None else b
    dt = dtypes.promote(a.dtype, b.dtype)
    if to_float:
        dt = dtypes.float_result(dt)
    return cast(a, dt), cast(b, dt)


def add(a: Any, b: Any) -> Tensor:
    return apply("add", *_operands(a, b))


def sub(a: Any, b: Any) -> Tensor:
    return apply("sub", *_operands(a, b))


def mul(a: Any, b: Any) -> Tensor:
    return apply("mul", *_operands(a, b))


def div(a: Any, b: Any) -> Tensor:
    """True division (integers give float32)."""
    return apply("div", *_operands(a, b, to_float=True))


def pow(a: Any, b: Any) -> Tensor:  # noqa: A001 - mirrors torch.pow
    if isinstance(a, Tensor) and isinstance(b, (int, float)) and dtypes.is_float(a.dtype):
        return apply("pow_scalar", a, alpha=float(b))
    return apply("pow", *_operands(a, b, to_float=True))


def maximum(a: Any, b: Any) -> Tensor:
    return apply("maximum", *_operands(a, b))


def minimum(a: Any, b: Any) -> Tensor:
    return apply("minimum", *_operands(a, b))


# --------------------------------------------------------------------- comparisons


class _Compare(Op):
    differentiable = False
    code = 0

    def forward(self, a, b):
        return self.be.compare(self.code, a, b)


for _name, _code in codes.COMPARE.items():
    register(_name)(type(f"Compare_{_name}", (_Compare,), {"code": _code, "__slots__": ()}))


def compare(name: str, a: Any, b: Any) -> Tensor:
    """Broadcasting comparison ``name`` in eq/ne/lt/le/gt/ge; a bool tensor, no gradient."""
    return apply(name, *_operands(a, b))


def equal(a: Any, b: Any) -> Tensor:
    return compare("eq", a, b)


