"""CPU elementwise kernels: one generic unary, unary-gradient, binary and compare kernel, each
switching on an op code from ``codes.py`` outside its loops (so LLVM vectorises each branch)."""

import math

import numpy as np
from numba import njit

from ..codes import (
    ABS,
    ADD,
    ADD_SCALAR,
    DIV,
    EQ,
    EXP,
    GELU,
    GT,
    LE,
    LEAKY_RELU,
    LOG,
    LT,
    MAXIMUM,
    MUL,
    NE,
    NEG,
    POW,
    POW_SCALAR,
    RELU,
    SCALE,
    SIGMOID,
    SQRT,
    SUB,
    TANH,
)

_INV_SQRT2 = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327


@njit(cache=True, inline="always")
def _sigmoid(v):
    if v >= 0:
        return 1.0 / (1.0 + math.exp(-v))
    e = math.exp(v)
    return e / (1.0 + e)


@njit(cache=True)
def unary_kernel(code, x, out, alpha):
    """out = f(x) over flat contiguous arrays."""
    n = x.size
    if code == NEG:
        for i in range(n):
            out[i] = -x[i]
    elif code == EXP:
        for i in range(n):
            out[i] = np.exp(x[i])
    elif code == LOG:
        for i in range(n):
            out[i] = np.log(x[i])
    elif code == SQRT:
        for i in range(n):
            out[i] = np.sqrt(x[i])
    elif code == TANH:
        for i in range(n):
            out[i] = np.tanh(x[i])
    elif code == SIGMOID:
        for i in range(n):
            out[i] = _sigmoid(x[i])
    elif code == RELU:
        zero = x.dtype.type(0)
        for i in range(n):
            v = x[i]
            out[i] = v if v > zero else zero
    elif code == LEAKY_RELU:
        zero = x.dtype.type(0)
        for i in range(n):
            v = x[i]
            out[i] = v if v > zero else v * alpha
    elif code == GELU:
        for i in range(n):
            v = x[i]
            out[i] = 0.5 * v * (1.0 + math.erf(v * _INV_SQRT2))
    elif code == POW_SCALAR:
        for i in range(n):
            out[i] = x[i] ** alpha
    elif code == ABS:
        for i in range(n):
            out[i] = abs(x[i])
    elif code == SCALE:
        for i in range(n):
            out[i] = x[i] * alpha
    elif code == ADD_SCALAR:
        for i in range(n):
            out[i] = x[i] + alpha


@njit(cache=True)
def unary_grad_kernel(code, x, y, g, out, alpha):
    """out = g * f'(x), using the saved output y where that is cheaper."""
    n = g.size
    if code == NEG:
        for i in range(n):
            out[i] = -g[i]
    elif code == EXP:
        for i in range(n):
            out[i] = g[i] * y[i]
    elif code == LOG:
        for i in range(n):
            out[i] = g[i] / x[i]
    elif code == SQRT:
        for i in range(n):
            out[i] = g[i] * 0.5 / y[i]
    elif code == TANH:
        for i in range(n):
            out[i] = g[i] * (1 - y[i] * y[i])
    elif code == SIGMOID:
        for i in range(n):
            out[i] = g[i] * y[i] * (1 - y[i])
    elif code == RELU:
        zero = g.dtype.type(0)
        for i in range(n):
            out[i] = g[i] if y[i] > zero else zero
    elif code == LEAKY_RELU:
        for i in range(n):
            out[i] = g[i] if x[i] > 0 else g[i] * alpha
    elif code == GELU:
        for i in range(n):
            v = x[i]
            cdf = 0.5 * (1.0 + math.erf(v * _INV_SQRT2))
            pdf = _INV_SQRT_2PI * math.exp(-0.5 * v * v)
            out[i] = g[i] * (cdf + v * pdf)
    elif code == POW_SCALAR:
        for i in range(n):
            out[i] = g[i] * alpha * x[i] ** (alpha - 1)
    elif code == ABS:
        for i in range(n):
            v = x[i]
            out[i] = g[i] if v > 0 else (-g[i] if v < 0 else 0)
    elif code == SCALE:
        for i in range(n):
            out[i] = g[i] * alpha
    elif code == ADD_SCALAR:
        for i in range(n):
            out[i] = g[i]


@njit(cache=True, inline="always")
def _binop(code, a, b):
    if code == ADD:
        return a + b
    if code == SUB:
        return a - b
    if code == MUL:
        return a * b
    if code == DIV:
        return a / b
    if code == POW:
        return a ** b
    if code == MAXIMUM:
        return a if a >= b else b
    return a if a <= b else b  # MINIMUM


@njit(cache=True, inline="always")
def _cmp(code, a, b):
    if code == EQ:
        return a == b
    if code == NE:
        return a != b
    if code == LT:
        return a < b
    if code == LE:
        return a <= b
    if code == GT:
        return a > b
    return a >= b


@njit(cache=True)
def binary_kernel(code, a, b, out, offa, offb, inner, ia, ib):
    """Broadcasting binary op: ``len(offa)`` outer steps of an ``inner``-long strided loop
    (plan from ``shapes.binary_plan``)."""
    o = 0
    for k in range(offa.size):
        pa = offa[k]
        pb = offb[k]
        if ia == 1 and ib == 1:
            for j in range(inner):
                out[o + j] = _binop(code, a[pa + j], b[pb + j])
        elif ib == 0:
            bv = b[pb]
            for j in range(inner):
                out[o + j] = _binop(code, a[pa + j * ia], bv)
        else:
            for j in range(inner):
                out[o + j] = _binop(code, a[pa + j * ia], b[pb + j * ib])
        o += inner


@njit(cache=True)
def compare_kernel(code, a, b, out, offa, offb, inner, ia, ib):
    """Like ``binary_kernel`` with a bool result."""
    o = 0
    for k in range(offa.size):
        pa = offa[k]
        pb = offb[k]
        for j in range(inner):
            out[o + j] = _cmp(code, a[pa + j * ia], b[pb + j * ib])
        o += inner
