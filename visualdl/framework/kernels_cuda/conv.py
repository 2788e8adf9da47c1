"""CUDA im2col/col2im (one thread per element; col2im gathers, so no atomics) and pooling."""

from numba import cuda


@cuda.jit(cache=True)
def im2col_kernel(x, cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow):
    n_b, n_c, h, w = x.shape
    area = oh * ow
    nl = n_b * area
    for k in range(cuda.grid(1), cols.size, cuda.gridsize(1)):
        row = k // nl
        col = k - row * nl
        c = row // (kh * kw)
        r = row - c * kh * kw
        ki = r // kw
        kj = r - ki * kw
        n = col // area
        l = col - n * area
        y = l // ow
        xo = l - y * ow
        ih = y * sh - ph + ki * dh
        iw = xo * sw - pw + kj * dw
        if 0 <= ih < h and 0 <= iw < w:
            cols[row, col] = x[n, c, ih, iw]
        else:
            cols[row, col] = 0.0


@cuda.jit(cache=True)
def col2im_kernel(cols, dx, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow):
    """Each input element sums the cols entries that read it."""
    n_b, n_c, h, w = dx.shape
    area = oh * ow
    for k in range(cuda.grid(1), dx.size, cuda.gridsize(1)):
        iw = k % w
        t = k // w
        ih = t % h
        t = t // h
        c = t % n_c
        n = t // n_c
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
    n_b, h, w = x.shape
    oh = y.shape[1]
    ow = y.shape[2]
    for k in range(cuda.grid(1), y.size, cuda.gridsize(1)):
        b = k // (oh * ow)
        r = k - b * oh * ow
        i = r // ow
        j = r - i * ow
        best = 0.0
        pos = -1
        for ki in range(kh):
            ih = i * sh - ph + ki
            if ih < 0 or ih >= h:
                continue
            for kj in range(kw):
                iw = j * sw - pw + kj
                if iw < 0 or iw >= w:
                    continue
                v = x[b, ih, iw]
                if pos < 0 or v > best:
                    best = v
                    pos = ih * w + iw
        y[b, i, j] = best
        arg[b, i, j] = pos


@cuda.jit(cache=True)
def max_pool_grad_kernel(g, arg, dx):
    """dx (B, H*W) zeroed; overlapping windows may hit the same input, hence atomics."""
    oh = g.shape[1]
    ow = g.shape[2]
    for k in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        b = k // (oh * ow)
        r = k - b * oh * ow
        i = r // ow
        j = r - i * ow
        cuda.atomic.add(dx, (b, arg[b, i, j]), g[b, i, j])


@cuda.jit(device=True)
def _count(i, j, kh, kw, sh, sw, ph, pw, h, w, include_pad):
    if include_pad:
        return kh * kw
    cnt = 0
    for ki in range(kh):
        ih = i * sh - ph + ki
        for kj in range(kw):
            iw = j * sw - pw + kj
            if 0 <= ih < h and 0 <= iw < w:
                cnt += 1
    return max(cnt, 1)


@cuda.jit(cache=True)
def avg_pool_kernel(x, y, kh, kw, sh, sw, ph, pw, include_pad):
    n_b, h, w = x.shape
    oh = y.shape[1]
    ow = y.shape[2]
    for k in range(cuda.grid(1), y.size, cuda.gridsize(1)):
        b = k // (oh * ow)
        r = k - b * oh * ow
        i = r // ow
        j = r - i * ow
        s = 0.0
        for ki in range(kh):
            ih = i * sh - ph + ki
            if ih < 0 or ih >= h:
                continue
            for kj in range(kw):
                iw = j * sw - pw + kj
                if 0 <= iw < w:
                    s += x[b, ih, iw]
        y[b, i, j] = s / _count(i, j, kh, kw, sh, sw, ph, pw, h, w, include_pad)


@cuda.jit(cache=True)
def avg_pool_grad_kernel(g, dx, kh, kw, sh, sw, ph, pw, include_pad):
    n_b, h, w = dx.shape
    oh = g.shape[1]
    ow = g.shape[2]
    for k in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        b = k // (oh * ow)
        r = k - b * oh * ow
        i = r // ow
        j = r - i * ow
        share = g[b, i, j] / _count(i, j, kh, kw, sh, sw, ph, pw, h, w, include_pad)
        for ki in range(kh):
            ih = i * sh - ph + ki
            if ih < 0 or ih >= h:
                continue
            for kj in range(kw):
                iw = j * sw - pw + kj
                if 0 <= iw < w:
                    cuda.atomic.add(dx, (b, ih, iw), share)
