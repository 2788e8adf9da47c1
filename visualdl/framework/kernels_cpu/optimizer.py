"""CPU optimizer updates, row-wise on p (V, D) for the K rows listed in ``rows`` (dense
parameters: V = K = 1). Element updates are ``kernels_shared.optimizer``."""

from numba import njit

from ..kernels_shared import optimizer as _shared

_sgd_step = njit(inline="always")(_shared.sgd_step)
_adam_step = njit(inline="always")(_shared.adam_step)


@njit(cache=True)
def sgd_kernel(p, g, rows, buf, lr, momentum, weight_decay, nesterov):
    n_k, n_d = g.shape
    for k in range(n_k):
        r = rows[k]
        for j in range(n_d):
            p[r, j], b = _sgd_step(p[r, j], g[k, j], buf[r, j], lr, momentum, weight_decay,
                                   nesterov)
            if momentum != 0.0:
                buf[r, j] = b


@njit(cache=True)
def adam_kernel(p, g, rows, m, v, lr, beta1, beta2, eps, weight_decay, decoupled, bc1, bc2):
    n_k, n_d = g.shape
    for k in range(n_k):
        r = rows[k]
        for j in range(n_d):
            p[r, j], m[r, j], v[r, j] = _adam_step(p[r, j], g[k, j], m[r, j], v[r, j], lr, beta1,
                                                   beta2, eps, weight_decay, decoupled, bc1, bc2)
