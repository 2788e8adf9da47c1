"""CPU reduction kernels on the canonical (outer, reduced, inner) view of a contiguous array.

Sums accumulate in float64 so that long float32 reductions (a conv bias gradient sums tens of
thousands of terms) stay as accurate as PyTorch's pairwise sums.
"""

import numpy as np
from numba import njit

from ..kernels_shared import reduce as _shared

_minmax_step = njit(inline="always")(_shared.minmax_step)
_argmax_column = njit(inline="always")(_shared.argmax_column)


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
    """x: (O, R, I); out: (O, I) = max (code R_MAX) or min over R; row-major walk."""
    n_o, n_r, n_i = x.shape
    for o in range(n_o):
        for i in range(n_i):
            out[o, i] = x[o, 0, i]
        for r in range(1, n_r):
            row = x[o, r]
            for i in range(n_i):
                out[o, i] = _minmax_step(code, out[o, i], row[i])


@njit(cache=True)
def argmax_kernel(x, out):
    """x: (O, R, I); out: (O, I) int64 index of the first maximum along R."""
    n_o, _, n_i = x.shape
    for o in range(n_o):
        for i in range(n_i):
            out[o, i] = _argmax_column(x, o, i)
