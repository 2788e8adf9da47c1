"""CPU batch-norm (a loop over channels) and layer-norm (a loop over rows); the per-channel
and per-row math is ``kernels_shared.norm``."""

import math

from numba import njit

from ..kernels_shared import norm as _shared

_bn_train_channel = njit(inline="always")(_shared.batch_norm_train_channel)
_bn_grad_channel = njit(inline="always")(_shared.batch_norm_grad_channel)
_ln_row = njit(inline="always")(_shared.layer_norm_row)
_ln_grad_x_row = njit(inline="always")(_shared.layer_norm_grad_x_row)
_ln_grad_w_column = njit(inline="always")(_shared.layer_norm_grad_w_column)


@njit(cache=True)
def batch_norm_train_kernel(x, w, b, y, mean, invstd, rm, rv, momentum, eps, update):
    for c in range(x.shape[1]):
        _bn_train_channel(x, w, b, y, mean, invstd, rm, rv, momentum, eps, update, c)


@njit(cache=True)
def batch_norm_eval_kernel(x, rm, rv, w, b, eps, y, invstd):
    """One scale and shift per channel, then one multiply-add per element."""
    n_b, n_c, n_l = x.shape
    for c in range(n_c):
        inv = 1.0 / math.sqrt(rv[c] + eps)
        invstd[c] = inv
        scale = w[c] * inv
        shift = b[c] - rm[c] * scale
        for n in range(n_b):
            for i in range(n_l):
                y[n, c, i] = x[n, c, i] * scale + shift


@njit(cache=True)
def batch_norm_grad_kernel(x, g, mean, invstd, w, training, dx, dw, db):
    for c in range(x.shape[1]):
        _bn_grad_channel(x, g, mean, invstd, w, training, dx, dw, db, c)


@njit(cache=True)
def layer_norm_kernel(x, w, b, eps, y, mean, rstd):
    for r in range(x.shape[0]):
        _ln_row(x, w, b, eps, y, mean, rstd, r)


@njit(cache=True)
def layer_norm_grad_kernel(x, g, mean, rstd, w, dx, dw, db):
    for r in range(x.shape[0]):
        _ln_grad_x_row(x, g, mean, rstd, w, dx, r)
    for j in range(x.shape[1]):
        _ln_grad_w_column(x, g, mean, rstd, dw, db, j)
