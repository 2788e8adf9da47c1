"""Batch-norm per channel of (N, C, L) and layer-norm per row of (M, D); statistics
accumulate in float64."""

import math


def batch_norm_train_channel(x, w, b, y, mean, invstd, rm, rv, momentum, eps, update, c):
    """Normalise channel c with batch statistics; update running stats in place (PyTorch:
    new = (1 - momentum) * old + momentum * batch, unbiased variance)."""
    n_b, _, n_l = x.shape
    m = n_b * n_l
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


def batch_norm_grad_channel(x, g, mean, invstd, w, training, dx, dw, db, c):
    n_b, _, n_l = x.shape
    m = n_b * n_l
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
    a = sg / m if training else 0.0
    bb = sgx / m if training else 0.0
    for n in range(n_b):
        for i in range(n_l):
            dx[n, c, i] = k * (g[n, c, i] - a - (x[n, c, i] - mu) * inv * bb)


def layer_norm_row(x, w, b, eps, y, mean, rstd, r):
    """Normalise row r, then y = xhat * w + b."""
    n_d = x.shape[1]
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


def layer_norm_grad_x_row(x, g, mean, rstd, w, dx, r):
    n_d = x.shape[1]
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
        dx[r, j] = inv * (g[r, j] * w[j] - a - (x[r, j] - mu) * inv * bb)


def layer_norm_grad_w_column(x, g, mean, rstd, dw, db, j):
    sw = 0.0
    sb = 0.0
    for r in range(x.shape[0]):
        sw += g[r, j] * (x[r, j] - mean[r]) * rstd[r]
        sb += g[r, j]
    dw[j] = sw
    db[j] = sb
