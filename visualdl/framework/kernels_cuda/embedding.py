"""CUDA embedding-row kernels, one thread per element (indices are in range: the op checks
them)."""

from numba import cuda

from .launch import unravel2


@cuda.jit(cache=True)
def gather_rows_kernel(w, idx, out):
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        i, j = unravel2(k, w.shape[1])
        out[i, j] = w[idx[i], j]


@cuda.jit(cache=True)
def segment_sum_kernel(inverse, g, out):
    for k in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        i, j = unravel2(k, g.shape[1])
        cuda.atomic.add(out, (inverse[i], j), g[i, j])


@cuda.jit(cache=True)
def scatter_rows_kernel(idx, rows, out):
    for k in range(cuda.grid(1), rows.size, cuda.gridsize(1)):
        i, j = unravel2(k, rows.shape[1])
        out[idx[i], j] = rows[i, j]
