"""CPU convolution and pooling kernels.

Convolution is im2col (a numpy strided copy, see ``kernels_cpu.im2col``) + one large GEMM
(numpy BLAS): ``cols`` is (C*KH*KW, N*OH*OW), so one GEMM per group covers the whole batch.
col2im is the serial scatter-add adjoint, here.
"""

from numba import njit


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
def max_pool_kernel(x, y, arg, kh, kw, sh, sw, ph, pw):
    """x: (B, H, W) with B = N*C; y, arg: (B, OH, OW); arg is the flat h*W+w of the max."""
    n_b, h, w = x.shape
    _, oh, ow = y.shape
    for b in range(n_b):
        xb = x[b]
        for i in range(oh):
            h0 = i * sh - ph
            k0 = max(0, -h0)
            k1 = min(kh, h - h0)
            for j in range(ow):
                w0 = j * sw - pw
                l0 = max(0, -w0)
                l1 = min(kw, w - w0)
                best = xb[h0 + k0, w0 + l0]
                pos = (h0 + k0) * w + w0 + l0
                for ki in range(k0, k1):
                    row = xb[h0 + ki]
                    for kj in range(l0, l1):
                        v = row[w0 + kj]
                        if v > best:
                            best = v
                            pos = (h0 + ki) * w + w0 + kj
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
                s = 0.0
                cnt = 0
                for ki in range(kh):
                    ih = i * sh - ph + ki
                    if ih < 0 or ih >= h:
                        continue
                    for kj in range(kw):
                        iw = j * sw - pw + kj
                        if iw < 0 or iw >= w:
                            continue
                        s += x[b, ih, iw]
                        cnt += 1
                y[b, i, j] = s / (kh * kw if include_pad else max(cnt, 1))


@njit(cache=True)
def avg_pool_grad_kernel(g, dx, kh, kw, sh, sw, ph, pw, include_pad):
    n_b, h, w = dx.shape
    _, oh, ow = g.shape
    for b in range(n_b):
        for i in range(oh):
            for j in range(ow):
                cnt = 0
                if include_pad:
                    cnt = kh * kw
                else:
                    for ki in range(kh):
                        ih = i * sh - ph + ki
                        for kj in range(kw):
                            iw = j * sw - pw + kj
                            if 0 <= ih < h and 0 <= iw < w:
                                cnt += 1
                share = g[b, i, j] / max(cnt, 1)
                for ki in range(kh):
                    ih = i * sh - ph + ki
                    if ih < 0 or ih >= h:
                        continue
                    for kj in range(kw):
                        iw = j * sw - pw + kj
                        if 0 <= iw < w:
                            dx[b, ih, iw] += share
