"""The CPU convolution and pooling kernels against plain NumPy references, at many geometries:
im2col / col2im (any stride, padding, dilation; stride 1 takes col2im's contiguous path), the
general max-pool window and its unrolled 2x2 / stride-2 fast path (same maxima, same argmax on
ties and NaN), and the pooled gradient. The op-level parity with PyTorch and finite differences
is in test_fw_ops.py; these pin the kernels' own contracts, which the fast paths must keep."""

import itertools

import numpy as np
import pytest

from visualdl.framework import kernels_cpu as be
from visualdl.framework import shapes
from visualdl.framework.kernels_cpu import conv as conv_kernels

GEOMETRIES = [  # (N, C, H, W, KH, KW, stride, padding, dilation)
    (2, 1, 28, 28, 5, 5, (1, 1), (0, 0), (1, 1)),
    (3, 6, 12, 12, 5, 5, (1, 1), (0, 0), (1, 1)),
    (2, 3, 9, 7, 3, 3, (1, 1), (1, 1), (1, 1)),
    (2, 2, 11, 10, 3, 2, (2, 3), (1, 0), (1, 1)),
    (1, 4, 13, 12, 3, 3, (1, 2), (2, 1), (2, 3)),
    (2, 3, 8, 8, 1, 1, (2, 2), (0, 0), (1, 1)),
    (2, 3, 10, 11, 3, 2, (1, 1), (2, 1), (2, 3)),  # stride 1 + padding + dilation: fast col2im
    (1, 2, 6, 5, 3, 3, (1, 1), (1, 2), (1, 1)),
]


def _out_hw(h, w, kh, kw, s, p, d):
    return (shapes.conv_out_size(h, kh, s[0], p[0], d[0]),
            shapes.conv_out_size(w, kw, s[1], p[1], d[1]))


def _im2col_reference(x, kh, kw, s, p, d, out_hw):
    """cols[(c, ki, kj), (n, y, x)] = padded x[n, c, y*sh + ki*dh, x*sw + kj*dw]."""
    n, c, h, w = x.shape
    oh, ow = out_hw
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    cols = np.zeros((c, kh, kw, n, oh, ow), x.dtype)
    for ki, kj in itertools.product(range(kh), range(kw)):
        rows = ki * d[0] + s[0] * np.arange(oh)
        cs = kj * d[1] + s[1] * np.arange(ow)
        cols[:, ki, kj] = xp[:, :, rows][:, :, :, cs].transpose(1, 0, 2, 3)
    return cols.reshape(c * kh * kw, n * oh * ow)


def _col2im_reference(cols, x_shape, kh, kw, s, p, d, out_hw):
    """The adjoint of _im2col_reference: scatter-add every column entry back to its pixel."""
    n, c, h, w = x_shape
    oh, ow = out_hw
    dxp = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), cols.dtype)
    c6 = cols.reshape(c, kh, kw, n, oh, ow)
    for ki, kj in itertools.product(range(kh), range(kw)):
        for y, xo in itertools.product(range(oh), range(ow)):
            dxp[:, :, y * s[0] + ki * d[0], xo * s[1] + kj * d[1]] += c6[:, ki, kj, :, y, xo].T
    return dxp[:, :, p[0]:p[0] + h, p[1]:p[1] + w]


def _geometry_id(g):
    return "x".join(map(str, g[:6])) + f"s{g[6]}p{g[7]}d{g[8]}"


@pytest.mark.parametrize("geom", GEOMETRIES, ids=_geometry_id)
def test_im2col_and_col2im_match_numpy(geom):
    n, c, h, w, kh, kw, s, p, d = geom
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    out_hw = _out_hw(h, w, kh, kw, s, p, d)
    cols = be.im2col(x, (kh, kw), s, p, d, out_hw)
    np.testing.assert_array_equal(cols, _im2col_reference(x, kh, kw, s, p, d, out_hw))
    g = rng.standard_normal(cols.shape).astype(np.float32)
    dx = be.col2im(g, x.shape, (kh, kw), s, p, d, out_hw)
    np.testing.assert_allclose(dx, _col2im_reference(g, x.shape, kh, kw, s, p, d, out_hw),
                               rtol=1e-5, atol=1e-5)
    # adjointness: <im2col(x), g> == <x, col2im(g)>
    assert np.isclose(float(np.vdot(cols.astype(np.float64), g)),
                      float(np.vdot(x.astype(np.float64), dx)), rtol=1e-4)


def _max_pool_reference(x, k, s, p):
    """(max, flat argmax in the unpadded H*W plane, first max in row-major order)."""
    n, c, h, w = x.shape
    oh = shapes.conv_out_size(h, k[0], s[0], p[0], 1)
    ow = shapes.conv_out_size(w, k[1], s[1], p[1], 1)
    y = np.empty((n, c, oh, ow), x.dtype)
    arg = np.empty((n, c, oh, ow), np.int64)
    for b, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        best, pos = None, None
        for ki, kj in itertools.product(range(k[0]), range(k[1])):
            r, q = i * s[0] - p[0] + ki, j * s[1] - p[1] + kj
            if 0 <= r < h and 0 <= q < w:
                v = x[b, ch, r, q]
                if best is None or v > best:
                    best, pos = v, r * w + q
        y[b, ch, i, j], arg[b, ch, i, j] = best, pos
    return y, arg


@pytest.mark.parametrize("shape,k,s,p", [
    ((2, 3, 24, 24), (2, 2), (2, 2), (0, 0)),   # the 2x2 fast path (LeNet's pools)
    ((2, 2, 9, 7), (2, 2), (2, 2), (0, 0)),     # fast path, odd sizes: last row/column dropped
    ((1, 2, 2, 2), (2, 2), (2, 2), (0, 0)),
    ((2, 2, 7, 8), (3, 3), (1, 1), (1, 1)),     # general window: overlapping, padded
    ((2, 2, 10, 9), (3, 2), (2, 3), (1, 1)),
    ((1, 3, 8, 8), (2, 2), (1, 1), (0, 0)),     # 2x2 but overlapping: the general kernel
])
def test_max_pool_matches_numpy(shape, k, s, p):
    rng = np.random.default_rng(2)
    # few distinct values: many ties, which must resolve to the first max in row-major order
    x = rng.integers(-3, 3, shape).astype(np.float32)
    out_hw = (shapes.conv_out_size(shape[2], k[0], s[0], p[0], 1),
              shapes.conv_out_size(shape[3], k[1], s[1], p[1], 1))
    y, arg = be.max_pool2d(x, k, s, p, out_hw)
    ref_y, ref_arg = _max_pool_reference(x, k, s, p)
    np.testing.assert_array_equal(y, ref_y)
    np.testing.assert_array_equal(arg.reshape(ref_arg.shape), ref_arg)
    g = rng.standard_normal(y.shape).astype(np.float32)
    dx = be.max_pool2d_grad(g, arg, shape)
    ref_dx = np.zeros((shape[0] * shape[1], shape[2] * shape[3]), np.float32)
    for b in range(ref_dx.shape[0]):
        np.add.at(ref_dx[b], ref_arg.reshape(ref_dx.shape[0], -1)[b],
                  g.reshape(ref_dx.shape[0], -1)[b])
    np.testing.assert_allclose(dx, ref_dx.reshape(shape), rtol=1e-6)


def test_max_pool_2x2_fast_path_agrees_with_the_general_kernel_on_nan_and_inf():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 10, 12)).astype(np.float32)
    x[0, 0, 0] = np.nan                      # NaN first in its window: stays the max
    x[1, 2, 3] = np.nan                      # NaN later in its window: compares false
    x[2, 4, 4] = np.inf
    x[3, 6:8, 6:8] = -np.inf                 # all -inf: first position
    fast_y = np.empty((4, 5, 6), np.float32)
    fast_arg = np.empty((4, 5, 6), np.int32)
    conv_kernels.max_pool_2x2_kernel(x, fast_y, fast_arg)
    gen_y = np.empty_like(fast_y)
    gen_arg = np.empty_like(fast_arg)
    conv_kernels.max_pool_kernel(x, gen_y, gen_arg, 2, 2, 2, 2, 0, 0)
    np.testing.assert_array_equal(fast_y, gen_y)  # NaN == NaN for assert_array_equal
    np.testing.assert_array_equal(fast_arg, gen_arg)
    assert np.isnan(fast_y[0, 0, 0]) and fast_arg[0, 0, 0] == 0
    assert fast_y[3, 3, 3] == -np.inf and fast_arg[3, 3, 3] == 6 * 12 + 6
