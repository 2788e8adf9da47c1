"""CPU reduction kernels on the canonical (outer, reduced, inner) view of a contiguous array.

Sums accumulate in float64 so that long float32 reductions (a conv bias gradient sums tens of
thousands of terms) stay as accurate as PyTorch's pairwise sums.
"""

import numpy as np
from numba import njit

from ..codes import R_MAX


@njit(cache=True, fastmath=True)
def sum_kernel(x, out, square):
    """x: (O, R, I) contiguous; out: (O, I) = sum over R (of squares if ``square``).
    fastmath lets LLVM vectorise the float64 accumulation (only the summation order changes)."""
    n_o, n_r, n_i = x.shape
    if n_i == 1:
        for o in range(n_o):
            acc = 0.0
            if square:
                for r in range(n_r):
                    v = np.float64(x[o, r, 0])
                    acc += v * v
            else:
                for r in range(n_r):
                    acc += x[o, r, 0]
            out[o, 0] = acc
        return
    acc = np.empty(n_i, np.float64)
    for o in range(n_o):
        acc[:] = 0.0
        for r in range(n_r):
            row = x[o, r]
            if square:
                for i in range(n_i):
                    v = np.float64(row[i])
                    acc[i] += v * v
            else:
                for i in range(n_i):
                    acc[i] += row[i]
        for i in range(n_i):
            out[o, i] = acc[i]


@njit(cache=True)
def minmax_kernel(code, x, out):
    """x: (O, R, I); out: (O, I) = max (code R_MAX) or min over R; NaN propagates."""
    n_o, n_r, n_i = x.shape
    for o in range(n_o):
        for i in range(n_i):
            out[o, i] = x[o, 0, i]
        for r in range(1, n_r):
            row = x[o, r]
            for i in range(n_i):
                v = row[i]
                if code == R_MAX:
                    if v > out[o, i] or v != v:
                        out[o, i] = v
                elif v < out[o, i] or v != v:
                    out[o, i] = v


@njit(cache=True)
def argmax_kernel(x, out):
    """x: (O, R, I); out: (O, I) int64 index of the first maximum along R."""
    n_o, n_r, n_i = x.shape
    for o in range(n_o):
        for i in range(n_i):
            best = x[o, 0, i]
            idx = 0
            for r in range(1, n_r):
                v = x[o, r, i]
                if v > best:
                    best = v
                    idx = r
            out[o, i] = idx


@njit(cache=True)
def bias_add_kernel(y, b):
    """In place: y (O, C, I) += b[c]; fuses the bias of linear and conv layers."""
    n_o, n_c, n_i = y.shape
    for o in range(n_o):
        for c in range(n_c):
            bv = b[c]
            for i in range(n_i):
                y[o, c, i] += bv


@njit(cache=True)
def scatter_add_kernel(out, idx, g):
    """out[idx[k]] += g[k] over flat arrays (indexing gradients; duplicates accumulate)."""
    for k in range(idx.size):
        out[idx[k]] += g[k]


@njit(cache=True)
def gather_kernel(x, idx, out):
    for k in range(idx.size):
        out[k] = x[idx[k]]
