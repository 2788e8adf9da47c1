"""CPU softmax / log-softmax and fused cross-entropy kernels (numerically stable: max-shifted)."""

import numpy as np
from numba import njit


@njit(cache=True)
def softmax_kernel(x, out, log):
    """x, out: (O, R, I); softmax over R."""
    n_o, n_r, n_i = x.shape
    for o in range(n_o):
        for i in range(n_i):
            m = x[o, 0, i]
            for r in range(1, n_r):
                if x[o, r, i] > m:
                    m = x[o, r, i]
            s = 0.0
            for r in range(n_r):
                s += np.exp(x[o, r, i] - m)
            if log:
                lse = m + np.log(s)
                for r in range(n_r):
                    out[o, r, i] = x[o, r, i] - lse
            else:
                inv = 1.0 / s
                for r in range(n_r):
                    out[o, r, i] = np.exp(x[o, r, i] - m) * inv


@njit(cache=True)
def softmax_grad_kernel(y, g, out, log):
    """softmax: dx = y * (g - sum(g*y)); log_softmax: dx = g - exp(y) * sum(g)."""
    n_o, n_r, n_i = y.shape
    for o in range(n_o):
        for i in range(n_i):
            s = 0.0
            if log:
                for r in range(n_r):
                    s += g[o, r, i]
                for r in range(n_r):
                    out[o, r, i] = g[o, r, i] - np.exp(y[o, r, i]) * s
            else:
                for r in range(n_r):
                    s += g[o, r, i] * y[o, r, i]
                for r in range(n_r):
                    out[o, r, i] = y[o, r, i] * (g[o, r, i] - s)


@njit(cache=True)
def cross_entropy_kernel(x, labels, ignore_index, loss, probs, want_probs):
    """x: (N, C) logits; loss[n] = logsumexp(x[n]) - x[n, label]; probs = softmax (if wanted).
    Rows whose label is ``ignore_index`` get loss 0 (and zero gradient later)."""
    n, c = x.shape
    for i in range(n):
        lab = labels[i]
        if lab == ignore_index:
            loss[i] = 0.0
            if want_probs:
                for j in range(c):
                    probs[i, j] = 0.0
            continue
        if lab < 0 or lab >= c:
            raise IndexError("cross_entropy: label out of range")
        m = x[i, 0]
        for j in range(1, c):
            if x[i, j] > m:
                m = x[i, j]
        s = 0.0
        for j in range(c):
            s += np.exp(x[i, j] - m)
        loss[i] = m + np.log(s) - x[i, lab]
        if want_probs:
            inv = 1.0 / s
            for j in range(c):
                probs[i, j] = np.exp(x[i, j] - m) * inv


@njit(cache=True)
def cross_entropy_grad_kernel(probs, labels, ignore_index, g, scale, out):
    """out = (probs - onehot(labels)) * g_row * scale; g has 1 element (reduced loss) or N."""
    n, c = probs.shape
    per_row = g.size > 1
    for i in range(n):
        lab = labels[i]
        if lab == ignore_index:
            for j in range(c):
                out[i, j] = 0.0
            continue
        w = (g[i] if per_row else g[0]) * scale
        for j in range(c):
            out[i, j] = probs[i, j] * w
        out[i, lab] -= w
