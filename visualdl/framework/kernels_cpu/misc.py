"""CPU kernels for dropout, embedding rows and optimizer updates."""

import math

from numba import njit


@njit(cache=True)
def dropout_kernel(x, u, p, scale, y, mask):
    """Keep where the uniform draw u >= p, scaled by 1/(1-p) (inverted dropout)."""
    for i in range(x.size):
        keep = u[i] >= p
        mask[i] = keep
        y[i] = x[i] * scale if keep else 0


@njit(cache=True)
def masked_scale_kernel(g, mask, scale, out):
    for i in range(g.size):
        out[i] = g[i] * scale if mask[i] else 0


@njit(cache=True)
def gather_rows_kernel(w, idx, out):
    n_rows = w.shape[0]
    for k in range(idx.size):
        r = idx[k]
        if r < 0 or r >= n_rows:
            raise IndexError("embedding index out of range")
        out[k, :] = w[r, :]


@njit(cache=True)
def segment_sum_kernel(inverse, g, out):
    """out (U, D) zeroed; out[inverse[k]] += g[k] (coalesces a row-sparse gradient)."""
    for k in range(inverse.size):
        out[inverse[k], :] += g[k, :]


@njit(cache=True)
def sgd_kernel(p, g, rows, buf, lr, momentum, weight_decay, nesterov):
    """Row-wise SGD on p (V, D) for the K rows listed in ``rows`` (dense params: V = K = 1)."""
    n_k, n_d = g.shape
    for k in range(n_k):
        r = rows[k]
        for j in range(n_d):
            d = g[k, j] + weight_decay * p[r, j]
            if momentum != 0.0:
                v = momentum * buf[r, j] + d
                buf[r, j] = v
                d = d + momentum * v if nesterov else v
            p[r, j] -= lr * d


@njit(cache=True)
def adam_kernel(p, g, rows, m, v, lr, beta1, beta2, eps, weight_decay, decoupled, bc1, bc2):
    """Row-wise Adam/AdamW (decoupled=True: AdamW's p -= lr*wd*p before the Adam step)."""
    n_k, n_d = g.shape
    for k in range(n_k):
        r = rows[k]
        for j in range(n_d):
            pv = p[r, j]
            gv = g[k, j]
            if decoupled:
                pv -= lr * weight_decay * pv
            else:
                gv += weight_decay * pv
            mv = beta1 * m[r, j] + (1.0 - beta1) * gv
            vv = beta2 * v[r, j] + (1.0 - beta2) * gv * gv
            m[r, j] = mv
            v[r, j] = vv
            p[r, j] = pv - lr * (mv / bc1) / (math.sqrt(vv / bc2) + eps)
