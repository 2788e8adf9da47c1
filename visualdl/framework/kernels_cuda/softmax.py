"""CUDA softmax / log-softmax (one thread per (outer, inner) column) and fused cross-entropy
(one thread per row), running the ``kernels_shared.softmax`` bodies."""

from numba import cuda

from ..kernels_shared import softmax as _shared
from .launch import unravel2

_softmax_column = cuda.jit(device=True, inline=True)(_shared.softmax_column)
_softmax_grad_column = cuda.jit(device=True, inline=True)(_shared.softmax_grad_column)
_cross_entropy_row = cuda.jit(device=True, inline=True)(_shared.cross_entropy_row)
_cross_entropy_grad_row = cuda.jit(device=True, inline=True)(_shared.cross_entropy_grad_row)


@cuda.jit(cache=True)
def softmax_kernel(x, out, log):
    for k in range(cuda.grid(1), x.shape[0] * x.shape[2], cuda.gridsize(1)):
        o, i = unravel2(k, x.shape[2])
        _softmax_column(x, out, o, i, log)


@cuda.jit(cache=True)
def softmax_grad_kernel(y, g, out, log):
    for k in range(cuda.grid(1), y.shape[0] * y.shape[2], cuda.gridsize(1)):
        o, i = unravel2(k, y.shape[2])
        _softmax_grad_column(y, g, out, o, i, log)


@cuda.jit(cache=True)
def cross_entropy_kernel(x, labels, ignore_index, loss, probs, want_probs):
    for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        _cross_entropy_row(x, labels, ignore_index, loss, probs, want_probs, i)


@cuda.jit(cache=True)
def cross_entropy_grad_kernel(probs, labels, ignore_index, g, scale, out):
    for i in range(cuda.grid(1), probs.shape[0], cuda.gridsize(1)):
        _cross_entropy_grad_row(probs, labels, ignore_index, g, scale, out, i)
