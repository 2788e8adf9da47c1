"""Reduction steps; the reduction loops themselves stay per backend."""

from ..codes import R_MAX


def minmax_step(code, best, v):
    """max (code R_MAX) or min of the running value and v; NaN propagates."""
    if v != v:
        return v
    if code == R_MAX:
        return v if v > best else best
    return v if v < best else best


def argmax_column(x, o, i):
    """Index along R of the first maximum of x[o, :, i]."""
    best = x[o, 0, i]
    idx = 0
    for r in range(1, x.shape[1]):
        v = x[o, r, i]
        if v > best:
            best = v
            idx = r
    return idx
