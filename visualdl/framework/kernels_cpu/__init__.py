"""The CPU backend: every primitive the ops need, as Numba ``@njit`` kernels (serial; see
``threads.py`` for why) plus numpy BLAS for matrix products and numpy for pure data movement
(reshape, transpose, concat, basic indexing), which has no arithmetic to kernelise.

Implements ``backend.Backend``, as ``kernels_cuda`` does (a test compares both with it); ops are
written once against that interface. Arrays here are C-contiguous numpy arrays.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import shapes
from ..codes import R_SUM, R_SUMSQ, SCALE
from . import conv as _conv
from . import dropout_mask as _dropout
from . import elementwise as _ew
from . import embedding as _emb
from . import linalg as _la
from . import memory as _mem
from . import norm as _norm
from . import optimizer as _opt
from . import reduce as _red
from . import softmax as _sm

Array = np.ndarray

# ---------------------------------------------------------------- memory


def asarray(data: Any, dtype: np.dtype | None = None) -> Array:
    return np.asarray(data, dtype=dtype, order="C")


def to_numpy(a: Array) -> np.ndarray:
    return a


def empty(shape: Sequence[int], dtype: np.dtype) -> Array:
    return np.empty(tuple(shape), dtype)


def zeros(shape: Sequence[int], dtype: np.dtype) -> Array:
    return np.zeros(tuple(shape), dtype)


def full(shape: Sequence[int], value: float, dtype: np.dtype) -> Array:
    return np.full(tuple(shape), value, dtype)


def arange(n: int, dtype: np.dtype) -> Array:
    return np.arange(n, dtype=dtype)


def astype(a: Array, dtype: np.dtype) -> Array:
    return a.astype(dtype)


def copy(a: Array) -> Array:
    return a.copy()


def reshape(a: Array, shape: Sequence[int]) -> Array:
    return a.reshape(tuple(shape))


def permute(a: Array, axes: Sequence[int]) -> Array:
    return np.array(a.transpose(tuple(axes)), order="C")


def expand(a: Array, shape: Sequence[int]) -> Array:
    return np.array(np.broadcast_to(a, tuple(shape)), order="C")


def getitem(a: Array, key: Any) -> Array:
    return np.array(a[key], order="C")


def getitem_grad(g: Array, shape: Sequence[int], key: Any) -> Array:
    out = np.zeros(tuple(shape), g.dtype)
    if shapes.is_basic_key(key):
        out[key] = g
    else:
        idx = shapes.index_map(tuple(shape), key)
        _mem.scatter_add_kernel(out.reshape(-1), idx.reshape(-1), g.reshape(-1))
    return out


def concat(arrays: Sequence[Array], axis: int) -> Array:
    return np.concatenate(arrays, axis=axis)


def split(a: Array, sizes: Sequence[int], axis: int) -> list[Array]:
    cuts = np.cumsum(sizes)[:-1]
    return [np.array(p, order="C") for p in np.split(a, cuts, axis=axis)]


def assign_(dst: Array, src: Array) -> None:
    dst[...] = src


# ---------------------------------------------------------------- elementwise


def _scalar(dtype: np.dtype, alpha: float):
    return dtype.type(alpha) if dtype.kind == "f" else np.float64(alpha)


def unary(code: int, x: Array, alpha: float = 0.0) -> Array:
    out = np.empty_like(x)
    _ew.unary_kernel(code, x.reshape(-1), out.reshape(-1), _scalar(x.dtype, alpha))
    return out


def unary_grad(code: int, x: Array | None, y: Array | None, g: Array, alpha: float = 0.0) -> Array:
    out = np.empty_like(g)
    flat_g = g.reshape(-1)
    xs = flat_g if x is None else x.reshape(-1)
    ys = flat_g if y is None else y.reshape(-1)
    _ew.unary_grad_kernel(code, xs, ys, flat_g, out.reshape(-1), _scalar(g.dtype, alpha))
    return out


def _plan(a: Array, b: Array):
    if a.shape == b.shape:
        zero = _ZERO
        return a.shape, zero, zero, a.size, 1, 1
    return shapes.binary_plan(a.shape, b.shape)


_ZERO = np.zeros(1, np.int64)


def binary(code: int, a: Array, b: Array) -> Array:
    shape, offa, offb, inner, ia, ib = _plan(a, b)
    out = np.empty(shape, np.result_type(a.dtype, b.dtype))
    if out.size:
        _ew.binary_kernel(code, a.reshape(-1), b.reshape(-1), out.reshape(-1),
                          offa, offb, inner, ia, ib)
    return out


def compare(code: int, a: Array, b: Array) -> Array:
    shape, offa, offb, inner, ia, ib = _plan(a, b)
    out = np.empty(shape, np.bool_)
    if out.size:
        _ew.compare_kernel(code, a.reshape(-1), b.reshape(-1), out.reshape(-1),
                           offa, offb, inner, ia, ib)
    return out


# ---------------------------------------------------------------- reductions


def reduce(code: int, x: Array, axes: tuple[int, ...], keepdims: bool = False) -> Array:
    """Reduce over ``axes`` (normalised) with one kernel pass per contiguous run of axes."""
    if len(axes) == 1 and code == R_SUM and x.size and not keepdims:
        # the common case (a bias gradient, a loss's mean), without the general planning
        ax = axes[0]
        shape = x.shape
        out = np.empty((math.prod(shape[:ax]), math.prod(shape[ax + 1:])), x.dtype)
        _red.sum_kernel(x.reshape(out.shape[0], shape[ax], out.shape[1]), out, False)
        return out.reshape(shape[:ax] + shape[ax + 1:])
    out_shape = shapes.reduced_shape(x.shape, axes, keepdims)
    if x.size == 0 or not axes:
        res = x if not axes else np.zeros(out_shape, x.dtype)
        return res.reshape(out_shape) if code != R_SUMSQ else (res * res).reshape(out_shape)
    if len(axes) == 1:  # fast path: one axis, one pass
        runs = [shapes.axis_split(x.shape, axes[0])]
    elif axes == tuple(range(axes[0], axes[-1] + 1)):
        runs = [(math.prod(x.shape[:axes[0]]), math.prod(x.shape[axes[0]:axes[-1] + 1]),
                 math.prod(x.shape[axes[-1] + 1:]))]
    else:
        runs = shapes.reduce_runs(x.shape, axes)
    cur = x
    for i, (o, r, n) in enumerate(runs):
        out = np.empty((o, n), x.dtype)
        if code in (R_SUM, R_SUMSQ):
            _red.sum_kernel(cur.reshape(o, r, n), out, code == R_SUMSQ and i == 0)
        else:
            _red.minmax_kernel(code, cur.reshape(o, r, n), out)
        cur = out
    return cur.reshape(out_shape)


def argmax(x: Array, axis: int | None, keepdims: bool = False) -> Array:
    if axis is None:
        o, r, n = 1, x.size, 1
        out_shape: tuple[int, ...] = (1,) * x.ndim if keepdims else ()
    else:
        o, r, n = shapes.axis_split(x.shape, axis)
        out_shape = shapes.reduced_shape(x.shape, (axis,), keepdims)
    out = np.empty((o, n), np.int64)
    _red.argmax_kernel(x.reshape(o, r, n), out)
    return out.reshape(out_shape)


# ---------------------------------------------------------------- linear algebra


def matmul(a: Array, b: Array, ta: bool = False, tb: bool = False) -> Array:
    """a @ b with optional transposes of the last two axes (BLAS handles them as flags)."""
    # (the methods, not np.swapaxes: its dispatch wrapper cost more than a small GEMM)
    if ta:
        a = a.T if a.ndim == 2 else a.swapaxes(-1, -2)
    if tb:
        b = b.T if b.ndim == 2 else b.swapaxes(-1, -2)
    out = np.matmul(a, b)
    return out if out.flags.c_contiguous else np.ascontiguousarray(out)


def bias_add_(y: Array, b: Array, axis: int) -> None:
    """In place y += b broadcast along ``axis`` (the channel axis)."""
    if axis == y.ndim - 1:  # channels last (linear layers): numpy's broadcast add outruns
        np.add(y, b, out=y)  # the loop
        return
    o, c, n = shapes.axis_split(y.shape, axis)
    _la.bias_add_kernel(y.reshape(o, c, n), b)


# ---------------------------------------------------------------- softmax / losses


def softmax(x: Array, axis: int, log: bool) -> Array:
    o, r, n = shapes.axis_split(x.shape, axis)
    out = np.empty_like(x)
    _sm.softmax_kernel(x.reshape(o, r, n), out.reshape(o, r, n), log)
    return out


def softmax_grad(y: Array, g: Array, axis: int, log: bool) -> Array:
    o, r, n = shapes.axis_split(y.shape, axis)
    out = np.empty_like(g)
    _sm.softmax_grad_kernel(y.reshape(o, r, n), g.reshape(o, r, n), out.reshape(o, r, n), log)
    return out


def cross_entropy(logits: Array, labels: Array, ignore_index: int, want_probs: bool):
    n = logits.shape[0]
    loss = np.empty(n, logits.dtype)
    probs = np.empty_like(logits) if want_probs else np.empty((1, 1), logits.dtype)
    _sm.cross_entropy_kernel(logits, labels, ignore_index, loss, probs, want_probs)
    return loss, (probs if want_probs else None)


def cross_entropy_grad(probs: Array, labels: Array, ignore_index: int, g: Array, scale: float) -> Array:
    out = np.empty_like(probs)
    _sm.cross_entropy_grad_kernel(probs, labels, ignore_index, g.reshape(-1), scale, out)
    return out


# ---------------------------------------------------------------- convolution / pooling


def im2col(x: Array, k: tuple[int, int], s: tuple[int, int], p: tuple[int, int],
           d: tuple[int, int], out_hw: tuple[int, int]) -> Array:
    """cols (C*KH*KW, N*OH*OW). Pure data movement, so one numpy strided copy (faster than a
    Numba loop nest here, whose inner loops are only OW long)."""
    n, c, h, w = x.shape
    oh, ow = out_hw
    if p[0] or p[1]:
        xp = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), x.dtype)
        xp[:, :, p[0]:p[0] + h, p[1]:p[1] + w] = x
        x = xp
    sn, sc, sh, sw = x.strides
    view = np.lib.stride_tricks.as_strided(
        x, (c, k[0], k[1], n, oh, ow),
        (sc, sh * d[0], sw * d[1], sn, sh * s[0], sw * s[1]), writeable=False)
    cols = np.empty((c, k[0], k[1], n, oh, ow), x.dtype)
    np.copyto(cols, view)
    return cols.reshape(c * k[0] * k[1], n * oh * ow)


def col2im(cols: Array, x_shape: Sequence[int], k, s, p, d, out_hw) -> Array:
    if tuple(s) == (1, 1):  # contiguous runs: into a padded buffer, then crop the border
        n, c, h, w = x_shape
        dxp = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), cols.dtype)
        _conv.col2im_s1_kernel(cols, dxp, k[0], k[1], d[0], d[1], out_hw[0], out_hw[1])
        if p[0] or p[1]:
            return np.array(dxp[:, :, p[0]:p[0] + h, p[1]:p[1] + w], order="C")
        return dxp
    dx = np.zeros(tuple(x_shape), cols.dtype)
    _conv.col2im_kernel(cols, dx, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1],
                        out_hw[0], out_hw[1])
    return dx


def max_pool2d(x: Array, k, s, p, out_hw):
    n, c, h, w = x.shape
    y = np.empty((n * c, out_hw[0], out_hw[1]), x.dtype)
    # int32 argmax (a flat index inside one H*W plane): half the bytes to write and keep
    arg = np.empty(y.shape, np.int32 if h * w < 2**31 else np.int64)
    if tuple(k) == (2, 2) and tuple(s) == (2, 2) and tuple(p) == (0, 0):
        _conv.max_pool_2x2_kernel(x.reshape(n * c, h, w), y, arg)
    else:
        _conv.max_pool_kernel(x.reshape(n * c, h, w), y, arg, k[0], k[1], s[0], s[1], p[0],
                              p[1])
    return y.reshape(n, c, *out_hw), arg


def max_pool2d_grad(g: Array, arg: Array, x_shape: Sequence[int]) -> Array:
    n, c, h, w = x_shape
    dx = np.zeros((n * c, h * w), g.dtype)
    _conv.max_pool_grad_kernel(g.reshape(arg.shape), arg, dx)
    return dx.reshape(n, c, h, w)


def avg_pool2d(x: Array, k, s, p, out_hw, include_pad: bool) -> Array:
    n, c, h, w = x.shape
    y = np.empty((n * c, out_hw[0], out_hw[1]), x.dtype)
    _conv.avg_pool_kernel(x.reshape(n * c, h, w), y, k[0], k[1], s[0], s[1], p[0], p[1],
                          include_pad)
    return y.reshape(n, c, *out_hw)


def avg_pool2d_grad(g: Array, x_shape: Sequence[int], k, s, p, include_pad: bool) -> Array:
    n, c, h, w = x_shape
    dx = np.zeros((n * c, h, w), g.dtype)
    _conv.avg_pool_grad_kernel(g.reshape(n * c, g.shape[2], g.shape[3]), dx, k[0], k[1],
                               s[0], s[1], p[0], p[1], include_pad)
    return dx.reshape(n, c, h, w)


# ---------------------------------------------------------------- normalisation


def batch_norm_train(x3: Array, w: Array, b: Array, rm: Array | None, rv: Array | None,
                     momentum: float, eps: float):
    c = x3.shape[1]
    y = np.empty_like(x3)
    mean = np.empty(c, x3.dtype)
    invstd = np.empty(c, x3.dtype)
    update = rm is not None
    dummy = mean if rm is None else rm
    _norm.batch_norm_train_kernel(x3, w, b, y, mean, invstd, dummy,
                                  invstd if rv is None else rv, momentum, eps, update)
    return y, mean, invstd


def batch_norm_eval(x3: Array, rm: Array, rv: Array, w: Array, b: Array, eps: float):
    y = np.empty_like(x3)
    invstd = np.empty(x3.shape[1], x3.dtype)
    _norm.batch_norm_eval_kernel(x3, rm, rv, w, b, eps, y, invstd)
    return y, invstd


def batch_norm_grad(x3: Array, g3: Array, mean: Array, invstd: Array, w: Array, training: bool):
    dx = np.empty_like(x3)
    dw = np.empty_like(w)
    db = np.empty_like(w)
    _norm.batch_norm_grad_kernel(x3, g3, mean, invstd, w, training, dx, dw, db)
    return dx, dw, db


def layer_norm(x2: Array, w: Array, b: Array, eps: float):
    m = x2.shape[0]
    y = np.empty_like(x2)
    mean = np.empty(m, x2.dtype)
    rstd = np.empty(m, x2.dtype)
    _norm.layer_norm_kernel(x2, w, b, eps, y, mean, rstd)
    return y, mean, rstd


def layer_norm_grad(x2: Array, g2: Array, mean: Array, rstd: Array, w: Array):
    dx = np.empty_like(x2)
    dw = np.empty_like(w)
    db = np.empty_like(w)
    _norm.layer_norm_grad_kernel(x2, g2, mean, rstd, w, dx, dw, db)
    return dx, dw, db


# ---------------------------------------------------------------- dropout / embedding


def dropout(x: Array, p: float, scale: float, seed: int):
    u = np.random.default_rng(seed).random(x.size, dtype=np.float32)
    y = np.empty_like(x)
    mask = np.empty(x.shape, np.bool_)
    _dropout.dropout_kernel(x.reshape(-1), u, np.float32(p), _scalar(x.dtype, scale),
                         y.reshape(-1), mask.reshape(-1))
    return y, mask


def dropout_grad(g: Array, mask: Array, scale: float) -> Array:
    out = np.empty_like(g)
    _dropout.masked_scale_kernel(g.reshape(-1), mask.reshape(-1), _scalar(g.dtype, scale),
                              out.reshape(-1))
    return out


def gather_rows(w: Array, idx: Array) -> Array:
    flat = idx.reshape(-1)
    out = np.empty((flat.size, w.shape[1]), w.dtype)
    _emb.gather_rows_kernel(w, flat, out)
    return out.reshape(*idx.shape, w.shape[1])


def coalesce_rows(idx: Array, rows: Array) -> tuple[Array, Array]:
    """Sum rows that share an index: (unique indices, summed rows)."""
    uniq, inverse = np.unique(idx.reshape(-1), return_inverse=True)
    out = np.zeros((uniq.size, rows.shape[-1]), rows.dtype)
    _emb.segment_sum_kernel(inverse.reshape(-1).astype(np.int64), rows.reshape(-1, rows.shape[-1]), out)
    return uniq.astype(np.int64), out


def scatter_rows(shape: Sequence[int], idx: Array, rows: Array) -> Array:
    """Dense (V, D) array with ``rows`` at ``idx`` (indices unique)."""
    out = np.zeros(tuple(shape), rows.dtype)
    out[idx] = rows
    return out


# ---------------------------------------------------------------- optimizer updates


def sgd_update(p2: Array, g2: Array, rows: Array, buf2: Array, lr: float, momentum: float,
               weight_decay: float, nesterov: bool) -> None:
    # Scalars in the parameters' dtype keep the loop in float32 for float32 parameters
    # (as PyTorch computes it); float64 scalars made it half again as slow.
    t = p2.dtype.type
    _opt.sgd_kernel(p2, g2, rows, buf2, t(lr), t(momentum), t(weight_decay), nesterov)


def adam_update(p2: Array, g2: Array, rows: Array, m2: Array, v2: Array, lr: float, beta1: float,
                beta2: float, eps: float, weight_decay: float, decoupled: bool, bc1: float,
                bc2: float) -> None:
    # Adam keeps float64 scalars: its bias corrections in float32 drift from PyTorch's.
    _opt.adam_kernel(p2, g2, rows, m2, v2, lr, beta1, beta2, eps, weight_decay, decoupled,
                      bc1, bc2)


def sum_squares(a: Array) -> float:
    return float(reduce(R_SUMSQ, a.reshape(-1), (0,)))


def scale_(a: Array, s: float) -> None:
    _ew.unary_kernel(SCALE, a.reshape(-1), a.reshape(-1), _scalar(a.dtype, s))


__all__ = [n for n in dir() if not n.startswith("_")]
