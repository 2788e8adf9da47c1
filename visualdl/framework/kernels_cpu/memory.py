"""CPU data-movement kernels. Most movement (reshape, transpose, concat, basic indexing) is
numpy's; only the indexing gradient, which must accumulate duplicates, is a loop."""

from numba import njit


@njit(cache=True)
def scatter_add_kernel(out, idx, g):
    """out[idx[k]] += g[k] over flat arrays (duplicates accumulate)."""
    for k in range(idx.size):
        out[idx[k]] += g[k]
