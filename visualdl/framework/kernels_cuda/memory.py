"""CUDA data movement: casts, fills, strided copies (permute, expand), gathers and
scatter-adds (indexing and its gradient), block copies (concat, split)."""

from numba import cuda

from .launch import unravel2


@cuda.jit(cache=True)
def cast_kernel(x, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = x[i]


@cuda.jit(cache=True)
def fill_kernel(out, value):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = value


@cuda.jit(cache=True)
def arange_kernel(out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = i


@cuda.jit(cache=True)
def strided_copy_kernel(x, out, shape, strides):
    """out (flat, C order over ``shape``) = x[sum(index_d * strides_d)]: permute and expand."""
    ndim = shape.size
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        rem = k
        src = 0
        for d in range(ndim - 1, -1, -1):
            n = shape[d]
            q = rem // n
            src += (rem - q * n) * strides[d]
            rem = q
        out[k] = x[src]


@cuda.jit(cache=True)
def gather_kernel(x, idx, out):
    for k in range(cuda.grid(1), idx.size, cuda.gridsize(1)):
        out[k] = x[idx[k]]


@cuda.jit(cache=True)
def scatter_add_kernel(out, idx, g):
    for k in range(cuda.grid(1), idx.size, cuda.gridsize(1)):
        cuda.atomic.add(out, idx[k], g[k])


@cuda.jit(cache=True)
def block_copy_kernel(src, dst, offset, to_dst):
    """Copy between src (O, W) and columns [offset, offset + W) of dst (O, Wd): concat
    (to_dst=True) and its gradient, split (to_dst=False)."""
    for k in range(cuda.grid(1), src.size, cuda.gridsize(1)):
        o, j = unravel2(k, src.shape[1])
        if to_dst:
            dst[o, offset + j] = src[o, j]
        else:
            src[o, j] = dst[o, offset + j]
