"""CPU elementwise kernels over flat contiguous arrays. The scalar bodies are
``kernels_shared.elementwise``; each kernel branches on the op code once, outside its loop
(``_*_by_code``), so that inside the loop the code is a constant, the body folds to the one op
and LLVM vectorises it.

The loops are inlined into the kernels at Numba's level (``inline="always"``); the scalar
bodies are plain ``njit`` functions that LLVM inlines into each loop and folds for its code.
Two things keep the first (cold) compile short, with the same machine code: inlining the
bodies at Numba's level too would type every branch of every body once per loop, and passing
the code on as a literal would compile each body once per code, so the loops pass it as a
plain int (``code + 0``). Either would make the first training step with a cold Numba cache
much slower (``python bench/framework.py`` times it)."""

from numba import njit

from ..codes import (
    ABS,
    ADD,
    ADD_SCALAR,
    DIV,
    EXP,
    GELU,
    LEAKY_RELU,
    LOG,
    MAXIMUM,
    MINIMUM,
    MUL,
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
from ..kernels_shared import elementwise as _shared

_unary = njit(_shared.unary)
_unary_grad = njit(_shared.unary_grad)
_binary = njit(_shared.binary)
_compare = njit(_shared.compare)


@njit(inline="always")
def _unary_loop(code, x, out, alpha):
    c = code + 0  # an int, not a literal: one compile of the body (see above)
    for i in range(out.size):
        out[i] = _unary(c, x[i], alpha)


@njit(inline="always")
def _unary_grad_loop(code, x, y, g, out, alpha):
    c = code + 0
    for i in range(out.size):
        out[i] = _unary_grad(c, x[i], y[i], g[i], alpha)


@njit(cache=True)
def unary_kernel(code, x, out, alpha):
    """out = f(x), one loop per unary code (each loop sees its code as a constant)."""
    if code == NEG:
        _unary_loop(NEG, x, out, alpha)
    elif code == EXP:
        _unary_loop(EXP, x, out, alpha)
    elif code == LOG:
        _unary_loop(LOG, x, out, alpha)
    elif code == SQRT:
        _unary_loop(SQRT, x, out, alpha)
    elif code == TANH:
        _unary_loop(TANH, x, out, alpha)
    elif code == SIGMOID:
        _unary_loop(SIGMOID, x, out, alpha)
    elif code == RELU:
        _unary_loop(RELU, x, out, alpha)
    elif code == LEAKY_RELU:
        _unary_loop(LEAKY_RELU, x, out, alpha)
    elif code == GELU:
        _unary_loop(GELU, x, out, alpha)
    elif code == POW_SCALAR:
        _unary_loop(POW_SCALAR, x, out, alpha)
    elif code == ABS:
        _unary_loop(ABS, x, out, alpha)
    elif code == SCALE:
        _unary_loop(SCALE, x, out, alpha)
    elif code == ADD_SCALAR:
        _unary_loop(ADD_SCALAR, x, out, alpha)


@njit(cache=True)
def unary_grad_kernel(code, x, y, g, out, alpha):
    """out = g * f'(x), using the saved output y where that is cheaper."""
    if code == NEG:
        _unary_grad_loop(NEG, x, y, g, out, alpha)
    elif code == EXP:
        _unary_grad_loop(EXP, x, y, g, out, alpha)
    elif code == LOG:
        _unary_grad_loop(LOG, x, y, g, out, alpha)
    elif code == SQRT:
        _unary_grad_loop(SQRT, x, y, g, out, alpha)
    elif code == TANH:
        _unary_grad_loop(TANH, x, y, g, out, alpha)
    elif code == SIGMOID:
        _unary_grad_loop(SIGMOID, x, y, g, out, alpha)
    elif code == RELU:
        _unary_grad_loop(RELU, x, y, g, out, alpha)
    elif code == LEAKY_RELU:
        _unary_grad_loop(LEAKY_RELU, x, y, g, out, alpha)
    elif code == GELU:
        _unary_grad_loop(GELU, x, y, g, out, alpha)
    elif code == POW_SCALAR:
        _unary_grad_loop(POW_SCALAR, x, y, g, out, alpha)
    elif code == ABS:
        _unary_grad_loop(ABS, x, y, g, out, alpha)
    elif code == SCALE:
        _unary_grad_loop(SCALE, x, y, g, out, alpha)
    elif code == ADD_SCALAR:
        _unary_grad_loop(ADD_SCALAR, x, y, g, out, alpha)


@njit(inline="always")
def _binary_loop(code, a, b, out, offa, offb, inner, ia, ib):
    """``len(offa)`` outer steps of an ``inner``-long strided loop (``shapes.binary_plan``);
    the two common strides get loops of their own."""
    c = code + 0  # an int, not a literal: one compile of the body
    o = 0
    for k in range(offa.size):
        pa = offa[k]
        pb = offb[k]
        if ia == 1 and ib == 1:
            for j in range(inner):
                out[o + j] = _binary(c, a[pa + j], b[pb + j])
        elif ib == 0:
            bv = b[pb]
            for j in range(inner):
                out[o + j] = _binary(c, a[pa + j * ia], bv)
        else:
            for j in range(inner):
                out[o + j] = _binary(c, a[pa + j * ia], b[pb + j * ib])
        o += inner


@njit(cache=True)
def binary_kernel(code, a, b, out, offa, offb, inner, ia, ib):
    """out = f(a, b) with broadcasting, one loop per binary code."""
    if code == ADD:
        _binary_loop(ADD, a, b, out, offa, offb, inner, ia, ib)
    elif code == SUB:
        _binary_loop(SUB, a, b, out, offa, offb, inner, ia, ib)
    elif code == MUL:
        _binary_loop(MUL, a, b, out, offa, offb, inner, ia, ib)
    elif code == DIV:
        _binary_loop(DIV, a, b, out, offa, offb, inner, ia, ib)
    elif code == POW:
        _binary_loop(POW, a, b, out, offa, offb, inner, ia, ib)
    elif code == MAXIMUM:
        _binary_loop(MAXIMUM, a, b, out, offa, offb, inner, ia, ib)
    elif code == MINIMUM:
        _binary_loop(MINIMUM, a, b, out, offa, offb, inner, ia, ib)


@njit(cache=True)
def compare_kernel(code, a, b, out, offa, offb, inner, ia, ib):
    """Like ``binary_kernel`` with a bool result; comparisons are rare and cheap, so one loop
    serves every code."""
    o = 0
    for k in range(offa.size):
        pa = offa[k]
        pb = offb[k]
        for j in range(inner):
            out[o + j] = _compare(code, a[pa + j * ia], b[pb + j * ib])
        o += inner
