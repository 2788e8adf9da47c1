"""CPU convolution and pooling kernels.

Convolution is im2col (a numpy strided copy, see ``kernels_cpu.im2col``) + one large GEMM
(numpy BLAS): ``cols`` is (C*KH*KW, N*OH*OW), so one GEMM per group covers the whole batch.
col2im is the serial scatter-add adjoint, here.
"""

from numba import njit

from ..kernels_shared import conv as _shared

_max_pool_window = njit(inline="always")(_shared.max_pool_window)
_avg_pool_sum = njit(inline="always")(_shared.avg_pool_sum)
_pool_count = njit(inline="always")(_shared.pool_count)


@njit(cache=True, inline="always")
def _valid_range(off, stride, size, out):
    """[lo, hi) of output positions o with 0 <= o * stride + off < size."""
    lo = 0 if off >= 0 else (-off + stride - 1) // stride
    hi = (size - 1 - off) // stride + 1
    if hi > out:
        hi = out
    if hi < lo:
        hi = lo
    return lo, hi


@njit(cache=True)
def col2im_kernel(cols, dx, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow):
    """dx (zeroed, N, C, H, W) += the adjoint of im2col applied to cols."""
    n_b, n_c, h, w = dx.shape
    area = oh * ow
    for c in range(n_c):
        for ki in range(kh):
            for kj in range(kw):
                row = (c * kh + ki) * kw + kj
                off_w = kj * dw - pw
                lo, hi = _valid_range(off_w, sw, w, ow)
                for n in range(n_b):
                    for y in range(oh):
                        ih = y * sh - ph + ki * dh
                        if ih < 0 or ih >= h:
                            continue
                        base = n * area + y * ow
                        for xo in range(lo, hi):
                            dx[n, c, ih, xo * sw + off_w] += cols[row, base + xo]


@njit(cache=True)
def col2im_s1_kernel(cols, dx, kh, kw, dh, dw, oh, ow):
    """``col2im_kernel`` for stride 1 and no padding (pad dx beforehand): every output row
    adds into one contiguous run of dx, and rows of cols are read in order, which the
    general kernel does not (a sample-outer order, keeping one plane in L1, is slower: it
    strides through the megabytes of cols).

    Runs are added in blocks of exactly 8, then the rest: LLVM turns a fixed 8-trip loop
    into one vector add, while a plain loop over a short run (OW = 8 in LeNet) falls to its
    scalar remainder (its vector body wants 32 elements)."""
    n_b, n_c, h, w = dx.shape
    area = oh * ow
    full = ow - ow % 8
    for c in range(n_c):
        for ki in range(kh):
            for kj in range(kw):
                row = (c * kh + ki) * kw + kj
                col0 = kj * dw
                for n in range(n_b):
                    for i in range(oh):
                        o = n * area + i * ow
                        r = i + ki * dh
                        for j0 in range(0, full, 8):
                            for j in range(8):
                                dx[n, c, r, col0 + j0 + j] += cols[row, o + j0 + j]
                        for j in range(full, ow):
                            dx[n, c, r, col0 + j] += cols[row, o + j]


@njit(cache=True)
def max_pool_kernel(x, y, arg, kh, kw, sh, sw, ph, pw):
    """x: (B, H, W) with B = N*C; y, arg: (B, OH, OW); arg is the flat h*W+w of the max."""
    n_b, oh, ow = y.shape
    for b in range(n_b):
        for i in range(oh):
            for j in range(ow):
                y[b, i, j], arg[b, i, j] = _max_pool_window(x, b, i, j, kh, kw, sh, sw, ph, pw)


@njit(cache=True)
def max_pool_2x2_kernel(x, y, arg):
    """The common 2x2 / stride 2 / no padding pool, unrolled: x (B, H, W); y, arg (B, H//2,
    W//2). Same result as ``max_pool_kernel`` (first max in row-major order wins, NaN in the
    first slot stays), and much faster: the general window's clipping and loops do not
    vectorise."""
    n_b, oh, ow = y.shape
    w = x.shape[2]
    for b in range(n_b):
        for i in range(oh):
            r = 2 * i
            for j in range(ow):
                c = 2 * j
                best = x[b, r, c]
                pos = r * w + c
                v = x[b, r, c + 1]
                if v > best:
                    best = v
                    pos = r * w + c + 1
                v = x[b, r + 1, c]
                if v > best:
                    best = v
                    pos = (r + 1) * w + c
                v = x[b, r + 1, c + 1]
                if v > best:
                    best = v
                    pos = (r + 1) * w + c + 1
                y[b, i, j] = best
                arg[b, i, j] = pos


@njit(cache=True)
def max_pool_grad_kernel(g, arg, dx):
    """dx: (B, H*W) zeroed; routes each output gradient to its argmax."""
    n_b, oh, ow = g.shape
    for b in range(n_b):
        for i in range(oh):
            for j in range(ow):
                dx[b, arg[b, i, j]] += g[b, i, j]


@njit(cache=True)
def avg_pool_kernel(x, y, kh, kw, sh, sw, ph, pw, include_pad):
    n_b, h, w = x.shape
    _, oh, ow = y.shape
    for b in range(n_b):
        for i in range(oh):
            for j in range(ow):
                y[b, i, j] = (_avg_pool_sum(x, b, i, j, kh, kw, sh, sw, ph, pw)
                              / _pool_count(i, j, kh, kw, sh, sw, ph, pw, h, w, include_pad))


@njit(cache=True)
def avg_pool_grad_kernel(g, dx, kh, kw, sh, sw, ph, pw, include_pad):
    """Each output spreads its gradient evenly over its window (serial scatter)."""
    n_b, h, w = dx.shape
    _, oh, ow = g.shape
    for b in range(n_b):
        for i in range(oh):
            for j in range(ow):
                share = g[b, i, j] / _pool_count(i, j, kh, kw, sh, sw, ph, pw, h, w, include_pad)
                for ih in range(max(i * sh - ph, 0), min(i * sh - ph + kh, h)):
                    for iw in range(max(j * sw - pw, 0), min(j * sw - pw + kw, w)):
                        dx[b, ih, iw] += share
