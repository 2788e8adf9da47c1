"""CUDA kernels for embedding rows and optimizer updates (one thread per element)."""

import math

from numba import cuda


@cuda.jit(cache=True)
def gather_rows_kernel(w, idx, out):
    d = w.shape[1]
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        i = k // d
        j = k - i * d
        out[i, j] = w[idx[i], j]


@cuda.jit(cache=True)
def segment_sum_kernel(inverse, g, out):
    d = g.shape[1]
    for k in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        i = k // d
        j = k - i * d
        cuda.atomic.add(out, (inverse[i], j), g[i, j])


@cuda.jit(cache=True)
def scatter_rows_kernel(idx, rows, out):
    d = rows.shape[1]
    for k in range(cuda.grid(1), rows.size, cuda.gridsize(1)):
        i = k // d
        j = k - i * d
        out[idx[i], j] = rows[i, j]


@cuda.jit(cache=True)
def sgd_kernel(p, g, rows, buf, lr, momentum, weight_decay, nesterov):
    n_d = g.shape[1]
    for t in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        k = t // n_d
        j = t - k * n_d
        r = rows[k]
        d = g[k, j] + weight_decay * p[r, j]
        if momentum != 0.0:
            v = momentum * buf[r, j] + d
            buf[r, j] = v
            d = d + momentum * v if nesterov else v
        p[r, j] -= lr * d


@cuda.jit(cache=True)
def adam_kernel(p, g, rows, m, v, lr, beta1, beta2, eps, weight_decay, decoupled, bc1, bc2):
    n_d = g.shape[1]
    for t in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        k = t // n_d
        j = t - k * n_d
        r = rows[k]
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
