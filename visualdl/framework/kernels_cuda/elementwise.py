"""CUDA elementwise kernels: the same op codes and formulas as ``kernels_cpu.elementwise``."""

import math

from numba import cuda

from ..codes import (
    ABS,
    ADD,
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


@cuda.jit(device=True, inline=True)
def _sigmoid(v):
    if v >= 0:
        return 1.0 / (1.0 + math.exp(-v))
    e = math.exp(v)
    return e / (1.0 + e)


@cuda.jit(device=True)
def _unary(code, v, alpha):
    if code == NEG:
        return -v
    if code == EXP:
        return math.exp(v)
    if code == LOG:
        return math.log(v)
    if code == SQRT:
        return math.sqrt(v)
    if code == TANH:
        return math.tanh(v)
    if code == SIGMOID:
        return _sigmoid(v)
    if code == RELU:
        return v if v > 0 else 0.0
    if code == LEAKY_RELU:
        return v if v > 0 else v * alpha
    if code == GELU:
        return 0.5 * v * (1.0 + math.erf(v * _INV_SQRT2))
    if code == POW_SCALAR:
        return v ** alpha
    if code == ABS:
        return abs(v)
    if code == SCALE:
        return v * alpha
    return v + alpha  # ADD_SCALAR


@cuda.jit(device=True)
def _unary_grad(code, x, y, g, alpha):
    if code == NEG:
        return -g
    if code == EXP:
        return g * y
    if code == LOG:
        return g / x
    if code == SQRT:
        return g * 0.5 / y
    if code == TANH:
        return g * (1.0 - y * y)
    if code == SIGMOID:
        return g * y * (1.0 - y)
    if code == RELU:
        return g if y > 0 else 0.0
    if code == LEAKY_RELU:
        return g if x > 0 else g * alpha
    if code == GELU:
        cdf = 0.5 * (1.0 + math.erf(x * _INV_SQRT2))
        pdf = _INV_SQRT_2PI * math.exp(-0.5 * x * x)
        return g * (cdf + x * pdf)
    if code == POW_SCALAR:
        return g * alpha * x ** (alpha - 1.0)
    if code == ABS:
        return g if x > 0 else (-g if x < 0 else 0.0)
    if code == SCALE:
        return g * alpha
    return g  # ADD_SCALAR


@cuda.jit(cache=True)
def unary_kernel(code, x, out, alpha):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = _unary(code, x[i], alpha)


@cuda.jit(cache=True)
def unary_grad_kernel(code, x, y, g, out, alpha):
    for i in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        out[i] = _unary_grad(code, x[i], y[i], g[i], alpha)


@cuda.jit(device=True)
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
    return a if a <= b else b


@cuda.jit(device=True)
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


@cuda.jit(cache=True)
def binary_kernel(code, a, b, out, offa, offb, inner, ia, ib):
    """Broadcasting plan of ``shapes.binary_plan``: element k is (outer k // inner, j)."""
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        o = k // inner
        j = k - o * inner
        out[k] = _binop(code, a[offa[o] + j * ia], b[offb[o] + j * ib])


@cuda.jit(cache=True)
def compare_kernel(code, a, b, out, offa, offb, inner, ia, ib):
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        o = k // inner
        j = k - o * inner
        out[k] = _cmp(code, a[offa[o] + j * ia], b[offb[o] + j * ib])


@cuda.jit(cache=True)
def cast_kernel(x, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = x[i]


@cuda.jit(cache=True)
def fill_kernel(out, value):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = value


@cuda.jit(cache=True)
def arange_kernel(out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = i


@cuda.jit(cache=True)
def strided_copy_kernel(x, out, shape, strides):
    """out (flat, C order over ``shape``) = x[sum(index_d * strides_d)]: permute and expand."""
    ndim = shape.size
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        rem = k
        src = 0
        for d in range(ndim - 1, -1, -1):
            n = shape[d]
            q = rem // n
            src += (rem - q * n) * strides[d]
            rem = q
        out[k] = x[src]


@cuda.jit(cache=True)
def gather_kernel(x, idx, out):
    for k in range(cuda.grid(1), idx.size, cuda.gridsize(1)):
        out[k] = x[idx[k]]


@cuda.jit(cache=True)
def scatter_add_kernel(out, idx, g):
    for k in range(cuda.grid(1), idx.size, cuda.gridsize(1)):
        cuda.atomic.add(out, idx[k], g[k])


@cuda.jit(cache=True)
def block_copy_kernel(src, dst, offset, to_dst):
    """Copy between src (O, W) and columns [offset, offset + W) of dst (O, Wd): concat
    (to_dst=True) and its gradient, split (to_dst=False)."""
    w = src.shape[1]
    for k in range(cuda.grid(1), src.size, cuda.gridsize(1)):
        o = k // w
        j = k - o * w
        if to_dst:
            dst[o, offset + j] = src[o, j]
        else:
            src[o, j] = dst[o, offset + j]


@cuda.jit(cache=True)
def bias_add_kernel(y, b):
    """y (O, C, I) += b[c], in place."""
    n_c = y.shape[1]
    n_i = y.shape[2]
    for k in range(cuda.grid(1), y.size, cuda.gridsize(1)):
        o = k // (n_c * n_i)
        r = k - o * n_c * n_i
        c = r // n_i
        i = r - c * n_i
        y[o, c, i] += b[c]


@cuda.jit(cache=True)
def masked_scale_kernel(g, mask, scale, out):
    for i in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        out[i] = g[i] * scale if mask[i] else 0.0
