"""Pooling windows over (B, H, W) arrays: output (i, j) reads rows i*sh-ph .. +kh, columns
j*sw-pw .. +kw, clipped to the input."""


def max_pool_window(x, b, i, j, kh, kw, sh, sw, ph, pw):
    """(max, flat h*W+w of the first max) of output (i, j)'s window."""
    h = x.shape[1]
    w = x.shape[2]
    h0 = i * sh - ph
    w0 = j * sw - pw
    k0 = max(0, -h0)
    k1 = min(kh, h - h0)
    l0 = max(0, -w0)
    l1 = min(kw, w - w0)
    best = x[b, h0 + k0, w0 + l0]
    pos = (h0 + k0) * w + w0 + l0
    for ki in range(k0, k1):
        for kj in range(l0, l1):
            v = x[b, h0 + ki, w0 + kj]
            if v > best:
                best = v
                pos = (h0 + ki) * w + w0 + kj
    return best, pos


def pool_count(i, j, kh, kw, sh, sw, ph, pw, h, w, include_pad):
    """How many inputs output (i, j) averages (the full window when padding counts)."""
    if include_pad:
        return kh * kw
    rows = min(kh, h - (i * sh - ph)) - max(0, ph - i * sh)
    cols = min(kw, w - (j * sw - pw)) - max(0, pw - j * sw)
    return rows * cols if rows > 0 and cols > 0 else 1


def avg_pool_sum(x, b, i, j, kh, kw, sh, sw, ph, pw):
    """Sum of output (i, j)'s window (divide by ``pool_count``)."""
    h = x.shape[1]
    w = x.shape[2]
    s = 0.0
    for ki in range(kh):
        ih = i * sh - ph + ki
        if 0 <= ih < h:
            for kj in range(kw):
                iw = j * sw - pw + kj
                if 0 <= iw < w:
                    s += x[b, ih, iw]
    return s
