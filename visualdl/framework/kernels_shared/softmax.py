"""Softmax over R of one (o, i) column of an (O, R, I) array, and fused cross-entropy rows
(numerically stable: max-shifted)."""

import math


def softmax_column(x, out, o, i, log):
    n_r = x.shape[1]
    m = x[o, 0, i]
    for r in range(1, n_r):
        if x[o, r, i] > m:
            m = x[o, r, i]
    s = 0.0
    for r in range(n_r):
        s += math.exp(x[o, r, i] - m)
    if log:
        lse = m + math.log(s)
        for r in range(n_r):
            out[o, r, i] = x[o, r, i] - lse
    else:
        inv = 1.0 / s
        for r in range(n_r):
            out[o, r, i] = math.exp(x[o, r, i] - m) * inv


def softmax_grad_column(y, g, out, o, i, log):
    """softmax: dx = y * (g - sum(g*y)); log_softmax: dx = g - exp(y) * sum(g)."""
    n_r = y.shape[1]
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


def cross_entropy_row(x, labels, ignore_index, loss, probs, want_probs, i):
    """loss[i] = logsumexp(x[i]) - x[i, label]; probs[i] = softmax (if wanted). A row whose
    label is ``ignore_index`` gets loss 0 and zero probabilities. Labels are in range (the op
    checks them)."""
    c = x.shape[1]
    lab = labels[i]
    if lab == ignore_index:
        loss[i] = 0.0
        if want_probs:
            for j in range(c):
                probs[i, j] = 0.0
        return
    m = x[i, 0]
    for j in range(1, c):
        if x[i, j] > m:
            m = x[i, j]
    s = 0.0
    if want_probs:  # one exp per element: the exponentials are kept in probs, then scaled
        for j in range(c):
            e = math.exp(x[i, j] - m)
            probs[i, j] = e
            s += e
        inv = 1.0 / s
        for j in range(c):
            probs[i, j] = probs[i, j] * inv
    else:
        for j in range(c):
            s += math.exp(x[i, j] - m)
    loss[i] = m + math.log(s) - x[i, lab]


def cross_entropy_grad_row(probs, labels, ignore_index, g, scale, out, i):
    """out[i] = (probs[i] - onehot(label)) * g_row * scale; g has 1 element or N."""
    c = probs.shape[1]
    lab = labels[i]
    if lab == ignore_index:
        for j in range(c):
            out[i, j] = 0.0
        return
    w = (g[i] if g.size > 1 else g[0]) * scale
    for j in range(c):
        out[i, j] = probs[i, j] * w
    out[i, lab] -= w
