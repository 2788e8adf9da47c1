"""CUDA batch-norm (one thread per channel) and layer-norm (one thread per row, and per
column for the weight gradients)."""

import math

from numba import cuda


@cuda.jit(cache=True)
def batch_norm_train_kernel(x, w, b, y, mean, invstd, rm, rv, momentum, eps, update):
    n_b, n_c, n_l = x.shape
    m = n_b * n_l
    for c in range(cuda.grid(1), n_c, cuda.gridsize(1)):
        s = 0.0
        for n in range(n_b):
            for i in range(n_l):
                s += x[n, c, i]
        mu = s / m
        ss = 0.0
        for n in range(n_b):
            for i in range(n_l):
                d = x[n, c, i] - mu
                ss += d * d
        inv = 1.0 / math.sqrt(ss / m + eps)
        mean[c] = mu
        invstd[c] = inv
        if update:
            rm[c] = (1.0 - momentum) * rm[c] + momentum * mu
            rv[c] = (1.0 - momentum) * rv[c] + momentum * ss / max(m - 1, 1)
        scale = w[c] * inv
        shift = b[c] - mu * scale
        for n in range(n_b):
            for i in range(n_l):
                y[n, c, i] = x[n, c, i] * scale + shift


@cuda.jit(cache=True)
def batch_norm_eval_kernel(x, rm, rv, w, b, eps, y, invstd):
    n_b, n_c, n_l = x.shape
    for k in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        n = k // (n_c * n_l)
        r = k - n * n_c * n_l
        c = r // n_l
        i = r - c * n_l
        inv = 1.0 / math.sqrt(rv[c] + eps)
        if n == 0 and i == 0:
            invstd[c] = inv
        y[n, c, i] = (x[n, c, i] - rm[c]) * inv * w[c] + b[c]


@cuda.jit(cache=True)
def batch_norm_grad_kernel(x, g, mean, invstd, w, training, dx, dw, db):
    n_b, n_c, n_l = x.shape
    m = n_b * n_l
    for c in range(cuda.grid(1), n_c, cuda.gridsize(1)):
        mu = mean[c]
        inv = invstd[c]
        sg = 0.0
        sgx = 0.0
        for n in range(n_b):
            for i in range(n_l):
                gv = g[n, c, i]
                sg += gv
                sgx += gv * (x[n, c, i] - mu) * inv
        dw[c] = sgx
        db[c] = sg
        k = w[c] * inv
        for n in range(n_b):
            for i in range(n_l):
                if training:
                    xh = (x[n, c, i] - mu) * inv
                    dx[n, c, i] = k * (g[n, c, i] - sg / m - xh * sgx / m)
                else:
                    dx[n, c, i] = k * g[n, c, i]


@cuda.jit(cache=True)
def layer_norm_kernel(x, w, b, eps, y, mean, rstd):
    n_m, n_d = x.shape
    for r in range(cuda.grid(1), n_m, cuda.gridsize(1)):
        s = 0.0
        for j in range(n_d):
            s += x[r, j]
        mu = s / n_d
        ss = 0.0
        for j in range(n_d):
            d = x[r, j] - mu
            ss += d * d
        inv = 1.0 / math.sqrt(ss / n_d + eps)
        mean[r] = mu
        rstd[r] = inv
        for j in range(n_d):
            y[r, j] = (x[r, j] - mu) * inv * w[j] + b[j]


@cuda.jit(cache=True)
def layer_norm_grad_x_kernel(x, g, mean, rstd, w, dx):
    n_m, n_d = x.shape
    for r in range(cuda.grid(1), n_m, cuda.gridsize(1)):
        mu = mean[r]
        inv = rstd[r]
        a = 0.0
        bb = 0.0
        for j in range(n_d):
            gw = g[r, j] * w[j]
            a += gw
            bb += gw * (x[r, j] - mu) * inv
        a /= n_d
        bb /= n_d
        for j in range(n_d):
            xh = (x[r, j] - mu) * inv
            dx[r, j] = inv * (g[r, j] * w[j] - a - xh * bb)


@cuda.jit(cache=True)
def layer_norm_grad_w_kernel(x, g, mean, rstd, dw, db):
    n_m, n_d = x.shape
    for j in range(cuda.grid(1), n_d, cuda.gridsize(1)):
        sw = 0.0
        sb = 0.0
        for r in range(n_m):
            sw += g[r, j] * (x[r, j] - mean[r]) * rstd[r]
            sb += g[r, j]
        dw[j] = sw
        db[j] = sb
