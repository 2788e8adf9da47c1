"""CUDA im2col/col2im (one thread per element; col2im gathers, so no atomics) and pooling."""

from numba import cuda

from ..kernels_shared import conv as _shared
from .launch import unravel2, unravel3

_max_pool_window = cuda.jit(device=True, inline=True)(_shared.max_pool_window)
_avg_pool_sum = cuda.jit(device=True, inline=True)(_shared.avg_pool_sum)
_pool_count = cuda.jit(device=True, inline=True)(_shared.pool_count)


@cuda.jit(cache=True)
def im2col_kernel(x, cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow):
    h = x.shape[2]
    w = x.shape[3]
    for k in range(cuda.grid(1), cols.size, cuda.gridsize(1)):
        row, col = unravel2(k, cols.shape[1])
        c, ki, kj = unravel3(row, kh, kw)
        n, y, xo = unravel3(col, oh, ow)
        ih = y * sh - ph + ki * dh
        iw = xo * sw - pw + kj * dw
        if 0 <= ih < h and 0 <= iw < w:
            cols[row, col] = x[n, c, ih, iw]
        else:
            cols[row, col] = 0.0


@cuda.jit(cache=True)
def col2im_kernel(cols, dx, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow):
    """Each input element sums the cols entries that read it."""
    n_c = dx.shape[1]
    area = oh * ow
    for k in range(cuda.grid(1), dx.size, cuda.gridsize(1)):
        t, ih, iw = unravel3(k, dx.shape[2], dx.shape[3])
        n, c = unravel2(t, n_c)
        acc = 0.0
        for ki in range(kh):
            yy = ih + ph - ki * dh
            if yy < 0 or yy % sh != 0:
                continue
            y = yy // sh
            if y >= oh:
                continue
            for kj in range(kw):
                xx = iw + pw - kj * dw
                if xx < 0 or xx % sw != 0:
                    continue
                xo = xx // sw
                if xo >= ow:
                    continue
                acc += cols[(c * kh + ki) * kw + kj, n * area + y * ow + xo]
        dx[n, c, ih, iw] = acc


@cuda.jit(cache=True)
def max_pool_kernel(x, y, arg, kh, kw, sh, sw, ph, pw):
    for k in range(cuda.grid(1), y.size, cuda.gridsize(1)):
        b, i, j = unravel3(k, y.shape[1], y.shape[2])
        y[b, i, j], arg[b, i, j] = _max_pool_window(x, b, i, j, kh, kw, sh, sw, ph, pw)


@cuda.jit(cache=True)
def max_pool_grad_kernel(g, arg, dx):
    """dx (B, H*W) zeroed; overlapping windows may hit the same input, hence atomics."""
    for k in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        b, i, j = unravel3(k, g.shape[1], g.shape[2])
        cuda.atomic.add(dx, (b, arg[b, i, j]), g[b, i, j])


@cuda.jit(cache=True)
def avg_pool_kernel(x, y, kh, kw, sh, sw, ph, pw, include_pad):
    h = x.shape[1]
    w = x.shape[2]
    for k in range(cuda.grid(1), y.size, cuda.gridsize(1)):
        b, i, j = unravel3(k, y.shape[1], y.shape[2])
        y[b, i, j] = (_avg_pool_sum(x, b, i, j, kh, kw, sh, sw, ph, pw)
                      / _pool_count(i, j, kh, kw, sh, sw, ph, pw, h, w, include_pad))


@cuda.jit(cache=True)
def avg_pool_grad_kernel(g, dx, kh, kw, sh, sw, ph, pw, include_pad):
    """Each output adds its share to its window; windows may overlap, hence atomics."""
    h = dx.shape[1]
    w = dx.shape[2]
    for k in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        b, i, j = unravel3(k, g.shape[1], g.shape[2])
        share = g[b, i, j] / _pool_count(i, j, kh, kw, sh, sw, ph, pw, h, w, include_pad)
        for ih in range(max(i * sh - ph, 0), min(i * sh - ph + kh, h)):
            for iw in range(max(j * sw - pw, 0), min(j * sw - pw + kw, w)):
                cuda.atomic.add(dx, (b, ih, iw), share)
