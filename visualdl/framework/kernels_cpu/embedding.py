"""CPU embedding-row kernels (indices are in range: the op checks them)."""

from numba import njit


@njit(cache=True)
def gather_rows_kernel(w, idx, out):
    for k in range(idx.size):
        out[k, :] = w[idx[k], :]


@njit(cache=True)
def segment_sum_kernel(inverse, g, out):
    """out (U, D) zeroed; out[inverse[k]] += g[k] (coalesces a row-sparse gradient)."""
    for k in range(inverse.size):
        out[inverse[k], :] += g[k, :]
