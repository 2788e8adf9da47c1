"""CPU elementwise kernels over flat contiguous arrays. The scalar bodies are
``kernels_shared.elementwise``; each kernel branches on the op code once, outside its loop
(``_by_code``), so that inside the loop the code is a constant, the body folds to the one op
and LLVM vectorises it."""

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

_unary = njit(inline="always")(_shared.unary)
_unary_grad = njit(inline="always")(_shared.unary_grad)
_binary = njit(inline="always")(_shared.binary)
_compare = njit(inline="always")(_shared.compare)


@njit(inline="always")
def _unary_loop(code, grad, x, y, g, out, alpha):
    if grad:
        for i in range(out.size):
            out[i] = _unary_grad(code, x[i], y[i], g[i], alpha)
    else:
        for i in range(out.size):
            out[i] = _unary(code, x[i], alpha)


@njit(inline="always")
def _unary_by_code(code, grad, x, y, g, out, alpha):
    """One loop per unary code (each loop sees its code as a constant)."""
    if code == NEG:
        _unary_loop(NEG, grad, x, y, g, out, alpha)
    elif code == EXP:
        _unary_loop(EXP, grad, x, y, g, out, alpha)
    elif code == LOG:
        _unary_loop(LOG, grad, x, y, g, out, alpha)
    elif code == SQRT:
        _unary_loop(SQRT, grad, x, y, g, out, alpha)
    elif code == TANH:
        _unary_loop(TANH, grad, x, y, g, out, alpha)
    elif code == SIGMOID:
        _unary_loop(SIGMOID, grad, x, y, g, out, alpha)
    elif code == RELU:
        _unary_loop(RELU, grad, x, y, g, out, alpha)
    elif code == LEAKY_RELU:
        _unary_loop(LEAKY_RELU, grad, x, y, g, out, alpha)
    elif code == GELU:
        _unary_loop(GELU, grad, x, y, g, out, alpha)
    elif code == POW_SCALAR:
        _unary_loop(POW_SCALAR, grad, x, y, g, out, alpha)
    elif code == ABS:
        _unary_loop(ABS, grad, x, y, g, out, alpha)
    elif code == SCALE:
        _unary_loop(SCALE, grad, x, y, g, out, alpha)
    elif code == ADD_SCALAR:
        _unary_loop(ADD_SCALAR, grad, x, y, g, out, alpha)


@njit(cache=True)
def unary_kernel(code, x, out, alpha):
    """out = f(x)."""
    _unary_by_code(code, False, x, x, x, out, alpha)


@njit(cache=True)
def unary_grad_kernel(code, x, y, g, out, alpha):
    """out = g * f'(x), using the saved output y where that is cheaper."""
    _unary_by_code(code, True, x, y, g, out, alpha)


@njit(inline="always")
def _binary_loop(code, cmp, a, b, out, offa, offb, inner, ia, ib):
    """``len(offa)`` outer steps of an ``inner``-long strided loop (``shapes.binary_plan``);
    the two common strides get loops of their own."""
    o = 0
    for k in range(offa.size):
        pa = offa[k]
        pb = offb[k]
        if cmp:
            for j in range(inner):
                out[o + j] = _compare(code, a[pa + j * ia], b[pb + j * ib])
        elif ia == 1 and ib == 1:
            for j in range(inner):
                out[o + j] = _binary(code, a[pa + j], b[pb + j])
        elif ib == 0:
            bv = b[pb]
            for j in range(inner):
                out[o + j] = _binary(code, a[pa + j * ia], bv)
        else:
            for j in range(inner):
                out[o + j] = _binary(code, a[pa + j * ia], b[pb + j * ib])
        o += inner


@njit(inline="always")
def _binary_by_code(code, cmp, a, b, out, offa, offb, inner, ia, ib):
    """One loop per code; binary and compare codes share the numbers 0..6."""
    if code == ADD:
        _binary_loop(ADD, cmp, a, b, out, offa, offb, inner, ia, ib)
    elif code == SUB:
        _binary_loop(SUB, cmp, a, b, out, offa, offb, inner, ia, ib)
    elif code == MUL:
        _binary_loop(MUL, cmp, a, b, out, offa, offb, inner, ia, ib)
    elif code == DIV:
        _binary_loop(DIV, cmp, a, b, out, offa, offb, inner, ia, ib)
    elif code == POW:
        _binary_loop(POW, cmp, a, b, out, offa, offb, inner, ia, ib)
    elif code == MAXIMUM:
        _binary_loop(MAXIMUM, cmp, a, b, out, offa, offb, inner, ia, ib)
    elif code == MINIMUM:
        _binary_loop(MINIMUM, cmp, a, b, out, offa, offb, inner, ia, ib)


@njit(cache=True)
def binary_kernel(code, a, b, out, offa, offb, inner, ia, ib):
    _binary_by_code(code, False, a, b, out, offa, offb, inner, ia, ib)


@njit(cache=True)
def compare_kernel(code, a, b, out, offa, offb, inner, ia, ib):
    """Like ``binary_kernel`` with a bool result (compare codes EQ..GE are 0..5)."""
    _binary_by_code(code, True, a, b, out, offa, offb, inner, ia, ib)
