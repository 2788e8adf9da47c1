"""CUDA reductions on the (outer, reduced, inner) view: one thread per output (simple and
deterministic; long reductions are split into two passes by the backend's ``_reduce3``)."""

from numba import cuda

from ..kernels_shared import reduce as _shared
from .launch import unravel2

_minmax_step = cuda.jit(device=True, inline=True)(_shared.minmax_step)
_argmax_column = cuda.jit(device=True, inline=True)(_shared.argmax_column)


@cuda.jit(cache=True)
def sum_kernel(x, out, square):
    """x (O, R, I) -> out (O, I); float64 accumulation."""
    n_r = x.shape[1]
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        o, i = unravel2(k, x.shape[2])
        acc = 0.0
        for r in range(n_r):
            v = x[o, r, i]
            acc += v * v if square else v
        out[o, i] = acc


@cuda.jit(cache=True)
def minmax_kernel(code, x, out):
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        o, i = unravel2(k, x.shape[2])
        best = x[o, 0, i]
        for r in range(1, x.shape[1]):
            best = _minmax_step(code, best, x[o, r, i])
        out[o, i] = best


@cuda.jit(cache=True)
def argmax_kernel(x, out):
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        o, i = unravel2(k, x.shape[2])
        out[o, i] = _argmax_column(x, o, i)
