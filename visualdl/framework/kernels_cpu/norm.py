"""CPU batch-norm and layer-norm kernels (statistics accumulate in float64)."""

import math

from numba import njit


@njit(cache=True)
def batch_norm_train_kernel(x, w, b, y, mean, invstd, rm, rv, momentum, eps, update):
    """x, y: (N, C, L). Normalises with batch statistics; updates running stats in place
    (PyTorch convention: new = (1 - momentum) * old + momentum * batch, unbiased variance)."""
    n_b, n_c, n_l = x.shape
    m = n_b * n_l
    for c in range(n_c):
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


@njit(cache=True)
def batch_norm_eval_kernel(x, rm, rv, w, b, eps, y, invstd):
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
    n_b, n_c, n_l = x.shape
    m = n_b * n_l
    for c in range(n_c):
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
        if training:
            a = sg / m
            bb = sgx / m
            for n in range(n_b):
                for i in range(n_l):
                    xh = (x[n, c, i] - mu) * inv
                    dx[n, c, i] = k * (g[n, c, i] - a - xh * bb)
        else:
            for n in range(n_b):
                for i in range(n_l):
                    dx[n, c, i] = k * g[n, c, i]


@njit(cache=True)
def layer_norm_kernel(x, w, b, eps, y, mean, rstd):
    """x, y: (M, D); normalise each row, then y = xhat * w + b."""
    n_m, n_d = x.shape
    for r in range(n_m):
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


@njit(cache=True)
def layer_norm_grad_kernel(x, g, mean, rstd, w, dx, dw, db):
    n_m, n_d = x.shape
    for j in range(n_d):
        dw[j] = 0.0
        db[j] = 0.0
    for r in range(n_m):
        mu = mean[r]
        inv = rstd[r]
        a = 0.0
        bb = 0.0
        for j in range(n_d):
            xh = (x[r, j] - mu) * inv
            gw = g[r, j] * w[j]
            a += gw
            bb += gw * xh
            dw[j] += g[r, j] * xh
            db[j] += g[r, j]
        a /= n_d
        bb /= n_d
        for j in range(n_d):
            xh = (x[r, j] - mu) * inv
            dx[r, j] = inv * (g[r, j] * w[j] - a - xh * bb)
