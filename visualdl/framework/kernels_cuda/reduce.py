"""CUDA reductions, softmax and cross-entropy: one thread per output row/column (simple and
deterministic; long reductions are split into two passes by the wrapper)."""

import math

from numba import cuda

from ..codes import R_MAX


@cuda.jit(cache=True)
def sum_kernel(x, out, square):
    """x (O, R, I) -> out (O, I); float64 accumulation."""
    n_o, n_r, n_i = x.shape
    for k in range(cuda.grid(1), n_o * n_i, cuda.gridsize(1)):
        o = k // n_i
        i = k - o * n_i
        acc = 0.0
        for r in range(n_r):
            v = x[o, r, i]
            acc += v * v if square else v
        out[o, i] = acc


@cuda.jit(cache=True)
def minmax_kernel(code, x, out):
    n_o, n_r, n_i = x.shape
    for k in range(cuda.grid(1), n_o * n_i, cuda.gridsize(1)):
        o = k // n_i
        i = k - o * n_i
        best = x[o, 0, i]
        for r in range(1, n_r):
            v = x[o, r, i]
            if code == R_MAX:
                if v > best or v != v:
                    best = v
            elif v < best or v != v:
                best = v
        out[o, i] = best


@cuda.jit(cache=True)
def argmax_kernel(x, out):
    n_o, n_r, n_i = x.shape
    for k in range(cuda.grid(1), n_o * n_i, cuda.gridsize(1)):
        o = k // n_i
        i = k - o * n_i
        best = x[o, 0, i]
        idx = 0
        for r in range(1, n_r):
            v = x[o, r, i]
            if v > best:
                best = v
                idx = r
        out[o, i] = idx


@cuda.jit(cache=True)
def softmax_kernel(x, out, log):
    n_o, n_r, n_i = x.shape
    for k in range(cuda.grid(1), n_o * n_i, cuda.gridsize(1)):
        o = k // n_i
        i = k - o * n_i
        m = x[o, 0, i]
        for r in range(1, n_r):
            m = max(m, x[o, r, i])
        s = 0.0
        for r in range(n_r):
            s += math.exp(x[o, r, i] - m)
        if log:
            lse = m + math.log(s)
            for r in range(n_r):
                out[o, r, i] = x[o, r, i] - lse
        else:
            for r in range(n_r):
                out[o, r, i] = math.exp(x[o, r, i] - m) / s


@cuda.jit(cache=True)
def softmax_grad_kernel(y, g, out, log):
    n_o, n_r, n_i = y.shape
    for k in range(cuda.grid(1), n_o * n_i, cuda.gridsize(1)):
        o = k // n_i
        i = k - o * n_i
        s = 0.0
        if log:
            for r in range(n_r):
                s += g[o, r, i]
            for r in range(n_r):
                out[o, r, i] = g[o, r, i] - math.exp(y[o, r, i]) * s
        else:
            for r in range(n_r):
                s += g[o, r, i] * y[o, r, i]
            for r in range(n_r):
                out[o, r, i] = y[o, r, i] * (g[o, r, i] - s)


@cuda.jit(cache=True)
def cross_entropy_kernel(x, labels, ignore_index, loss, probs, want_probs):
    """Per row: logsumexp - x[label]; an out-of-range label gives NaN (a kernel cannot raise)."""
    n, c = x.shape
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        lab = labels[i]
        if lab == ignore_index:
            loss[i] = 0.0
            if want_probs:
                for j in range(c):
                    probs[i, j] = 0.0
            continue
        m = x[i, 0]
        for j in range(1, c):
            m = max(m, x[i, j])
        s = 0.0
        for j in range(c):
            s += math.exp(x[i, j] - m)
        if lab < 0 or lab >= c:
            loss[i] = math.nan
        else:
            loss[i] = m + math.log(s) - x[i, lab]
        if want_probs:
            for j in range(c):
                probs[i, j] = math.exp(x[i, j] - m) / s


@cuda.jit(cache=True)
def cross_entropy_grad_kernel(probs, labels, ignore_index, g, scale, out):
    n, c = probs.shape
    per_row = g.size > 1
    for k in range(cuda.grid(1), n * c, cuda.gridsize(1)):
        i = k // c
        j = k - i * c
        lab = labels[i]
        if lab == ignore_index:
            out[i, j] = 0.0
            continue
        w = (g[i] if per_row else g[0]) * scale
        v = probs[i, j] * w
        if j == lab:
            v -= w
        out[i, j] = v
