"""CUDA batch-norm (one thread per channel; per element in eval) and layer-norm (one thread
per row, and per column for the weight gradients), running ``kernels_shared.norm``."""

import math

from numba import cuda

from ..kernels_shared import norm as _shared
from .launch import unravel3

_bn_train_channel = cuda.jit(device=True, inline=True)(_shared.batch_norm_train_channel)
_bn_grad_channel = cuda.jit(device=True, inline=True)(_shared.batch_norm_grad_channel)
_ln_row = cuda.jit(device=True, inline=True)(_shared.layer_norm_row)
_ln_grad_x_row = cuda.jit(device=True, inline=True)(_shared.layer_norm_grad_x_row)
_ln_grad_w_column = cuda.jit(device=True, inline=True)(_shared.layer_norm_grad_w_column)


@cuda.jit(cache=True)
def batch_norm_train_kernel(x, w, b, y, mean, invstd, rm, rv, momentum, eps, update):
    for c in range(cuda.grid(1), x.shape[1], cuda.gridsize(1)):
        _bn_train_channel(x, w, b, y, mean, invstd, rm, rv, momentum, eps, update, c)


@cuda.jit(cache=True)
def batch_norm_eval_kernel(x, rm, rv, w, b, eps, y, invstd):
    for k in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        n, c, i = unravel3(k, x.shape[1], x.shape[2])
        inv = 1.0 / math.sqrt(rv[c] + eps)
        if n == 0 and i == 0:
            invstd[c] = inv
        y[n, c, i] = (x[n, c, i] - rm[c]) * inv * w[c] + b[c]


@cuda.jit(cache=True)
def batch_norm_grad_kernel(x, g, mean, invstd, w, training, dx, dw, db):
    for c in range(cuda.grid(1), x.shape[1], cuda.gridsize(1)):
        _bn_grad_channel(x, g, mean, invstd, w, training, dx, dw, db, c)


@cuda.jit(cache=True)
def layer_norm_kernel(x, w, b, eps, y, mean, rstd):
    for r in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        _ln_row(x, w, b, eps, y, mean, rstd, r)


@cuda.jit(cache=True)
def layer_norm_grad_x_kernel(x, g, mean, rstd, w, dx):
    for r in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        _ln_grad_x_row(x, g, mean, rstd, w, dx, r)


@cuda.jit(cache=True)
def layer_norm_grad_w_kernel(x, g, mean, rstd, dw, db):
    for j in range(cuda.grid(1), x.shape[1], cuda.gridsize(1)):
        _ln_grad_w_column(x, g, mean, rstd, dw, db, j)
