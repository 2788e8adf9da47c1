"""CUDA elementwise kernels: one thread per element running the ``kernels_shared.elementwise``
bodies (an op-code branch is uniform across a warp, so the GPU needs no per-code loops)."""

from numba import cuda

from ..kernels_shared import elementwise as _shared
from .launch import unravel2

_unary = cuda.jit(device=True, inline=True)(_shared.unary)
_unary_grad = cuda.jit(device=True, inline=True)(_shared.unary_grad)
_binary = cuda.jit(device=True, inline=True)(_shared.binary)
_compare = cuda.jit(device=True, inline=True)(_shared.compare)


@cuda.jit(cache=True)
def unary_kernel(code, x, out, alpha):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = _unary(code, x[i], alpha)


@cuda.jit(cache=True)
def unary_grad_kernel(code, x, y, g, out, alpha):
    for i in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        out[i] = _unary_grad(code, x[i], y[i], g[i], alpha)


@cuda.jit(cache=True)
def binary_kernel(code, a, b, out, offa, offb, inner, ia, ib):
    """Broadcasting plan of ``shapes.binary_plan``: element k is (outer k // inner, j)."""
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        o, j = unravel2(k, inner)
        out[k] = _binary(code, a[offa[o] + j * ia], b[offb[o] + j * ib])


@cuda.jit(cache=True)
def compare_kernel(code, a, b, out, offa, offb, inner, ia, ib):
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        o, j = unravel2(k, inner)
        out[k] = _compare(code, a[offa[o] + j * ia], b[offb[o] + j * ib])
