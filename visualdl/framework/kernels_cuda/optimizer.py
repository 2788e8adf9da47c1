"""CUDA optimizer updates: one thread per element of the K listed rows; the element
updates are ``kernels_shared.optimizer``."""

from numba import cuda

from ..kernels_shared import optimizer as _shared
from .launch import unravel2

_sgd_step = cuda.jit(device=True, inline=True)(_shared.sgd_step)
_adam_step = cuda.jit(device=True, inline=True)(_shared.adam_step)


@cuda.jit(cache=True)
def sgd_kernel(p, g, rows, buf, lr, momentum, weight_decay, nesterov):
    for t in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        k, j = unravel2(t, g.shape[1])
        r = rows[k]
        p[r, j], b = _sgd_step(p[r, j], g[k, j], buf[r, j], lr, momentum, weight_decay, nesterov)
        if momentum != 0.0:
            buf[r, j] = b


@cuda.jit(cache=True)
def adam_kernel(p, g, rows, m, v, lr, beta1, beta2, eps, weight_decay, decoupled, bc1, bc2):
    for t in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        k, j = unravel2(t, g.shape[1])
        r = rows[k]
        p[r, j], m[r, j], v[r, j] = _adam_step(p[r, j], g[k, j], m[r, j], v[r, j], lr, beta1,
                                               beta2, eps, weight_decay, decoupled, bc1, bc2)
