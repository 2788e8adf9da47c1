"""CPU linear algebra: matrix products are numpy BLAS (``kernels_cpu.matmul``); the fused
bias add of linear and conv layers is a loop."""

from numba import njit


@njit(cache=True)
def bias_add_kernel(y, b):
    """In place: y (O, C, I) += b[c]."""
    n_o, n_c, n_i = y.shape
    for o in range(n_o):
        for c in range(n_c):
            bv = b[c]
            for i in range(n_i):
                y[o, c, i] += bv
