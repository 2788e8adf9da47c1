"""The CUDA backend: the ``backend.Backend`` interface implemented with Numba ``@cuda.jit``
kernels on device arrays (``numba.cuda`` DeviceNDArray, C-contiguous).

Host round trips are limited to small metadata: broadcast plans and index maps (cached or
tiny), unique embedding rows, and scalars such as a gradient norm.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from numba import cuda

from .. import random as _random
from .. import shapes
from ..codes import MUL, R_SUM, R_SUMSQ, SCALE
from . import conv as _conv
from . import elementwise as _ew
from . import embedding as _emb
from . import linalg as _la
from . import memory as _mem
from . import norm as _norm
from . import optimizer as _opt
from . import reduce as _red
from . import softmax as _sm
from .launch import grid

Array = Any

# ---------------------------------------------------------------- memory


def _launch(kernel, n: int, *args: Any) -> None:
    blocks, threads = grid(n)
    kernel[blocks, threads](*args)


def _const(host: np.ndarray, _cache: dict = {}) -> Array:  # noqa: B006 - deliberate cache
    """Device copy of small constant metadata (plans, strides), cached by content."""
    key = (host.dtype.str, host.shape, host.tobytes())
    arr = _cache.get(key)
    if arr is None:
        if len(_cache) > 4096:
            _cache.clear()
        arr = _cache[key] = cuda.to_device(np.ascontiguousarray(host))
    return arr


def asarray(data: Any, dtype: np.dtype | None = None) -> Array:
    if hasattr(data, "copy_to_host"):  # already a device array
        return data if dtype is None or np.dtype(data.dtype) == dtype else astype(data, dtype)
    return cuda.to_device(np.asarray(data, dtype=dtype, order="C"))


def to_numpy(a: Array) -> np.ndarray:
    return a.copy_to_host()


def empty(shape: Sequence[int], dtype: np.dtype) -> Array:
    return cuda.device_array(tuple(int(s) for s in shape), dtype=dtype)


def full(shape: Sequence[int], value: float, dtype: np.dtype) -> Array:
    out = empty(shape, dtype)
    if out.size:
        _launch(_mem.fill_kernel, out.size, _flat(out), np.dtype(dtype).type(value))
    return out


def zeros(shape: Sequence[int], dtype: np.dtype) -> Array:
    return full(shape, 0, dtype)


def arange(n: int, dtype: np.dtype) -> Array:
    out = empty((n,), dtype)
    if n:
        _launch(_mem.arange_kernel, n, out)
    return out


def _flat(a: Array) -> Array:
    return a.reshape(a.size) if a.ndim != 1 else a


def reshape(a: Array, shape: Sequence[int]) -> Array:
    shape = [int(s) for s in shape]
    if -1 in shape:
        i = shape.index(-1)
        known = math.prod(s for s in shape if s != -1)
        shape[i] = a.size // known if known else 0
    return a.reshape(tuple(shape)) if tuple(shape) != tuple(a.shape) else a


def astype(a: Array, dtype: np.dtype) -> Array:
    out = empty(a.shape, dtype)
    if a.size:
        _launch(_mem.cast_kernel, a.size, _flat(a), _flat(out))
    return out


def copy(a: Array) -> Array:
    return astype(a, a.dtype)


def assign_(dst: Array, src: Array) -> None:
    if src.size:
        _launch(_mem.cast_kernel, src.size, _flat(src), _flat(dst))


def _strided(a: Array, shape: Sequence[int], strides: Sequence[int]) -> Array:
    out = empty(shape, a.dtype)
    if out.size:
        _launch(_mem.strided_copy_kernel, out.size, _flat(a), _flat(out),
                _const(np.asarray(shape, np.int64)), _const(np.asarray(strides, np.int64)))
    return out


def permute(a: Array, axes: Sequence[int]) -> Array:
    strides = shapes.contiguous_strides(tuple(a.shape))
    return _strided(a, [a.shape[i] for i in axes], [strides[i] for i in axes])


def expand(a: Array, shape: Sequence[int]) -> Array:
    return _strided(a, shape, shapes.broadcast_strides(tuple(a.shape), tuple(shape)))


def getitem(a: Array, key: Any) -> Array:
    idx = shapes.index_map(tuple(a.shape), key)
    out = empty(idx.shape, a.dtype)
    if out.size:
        _launch(_mem.gather_kernel, out.size, _flat(a), _flat(cuda.to_device(idx)), _flat(out))
    return out


def getitem_grad(g: Array, shape: Sequence[int], key: Any) -> Array:
    idx = shapes.index_map(tuple(shape), key)
    out = zeros(shape, g.dtype)
    if idx.size:
        _launch(_mem.scatter_add_kernel, idx.size, _flat(out), _flat(cuda.to_device(idx)), _flat(g))
    return out


def concat(arrays: Sequence[Array], axis: int) -> Array:
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = empty(shape, arrays[0].dtype)
    outer = math.prod(shape[:axis])
    out2 = out.reshape(outer, out.size // max(outer, 1))
    offset = 0
    for a in arrays:
        if a.size:
            a2 = a.reshape(outer, a.size // max(outer, 1))
            _launch(_mem.block_copy_kernel, a.size, a2, out2, offset, True)
            offset += a2.shape[1]
    return out


def split(a: Array, sizes: Sequence[int], axis: int) -> list[Array]:
    outer = math.prod(a.shape[:axis])
    a2 = a.reshape(outer, a.size // max(outer, 1))
    parts, offset = [], 0
    for n in sizes:
        shape = list(a.shape)
        shape[axis] = n
        part = empty(shape, a.dtype)
        if part.size:
            p2 = part.reshape(outer, part.size // max(outer, 1))
            _launch(_mem.block_copy_kernel, part.size, p2, a2, offset, False)
            offset += p2.shape[1]
        parts.append(part)
    return parts


# ---------------------------------------------------------------- elementwise


def unary(code: int, x: Array, alpha: float = 0.0) -> Array:
    out = empty(x.shape, x.dtype)
    if x.size:
        _launch(_ew.unary_kernel, x.size, code, _flat(x), _flat(out), float(alpha))
    return out


def unary_grad(code: int, x: Array | None, y: Array | None, g: Array, alpha: float = 0.0) -> Array:
    out = empty(g.shape, g.dtype)
    if g.size:
        fg = _flat(g)
        _launch(_ew.unary_grad_kernel, g.size, code, fg if x is None else _flat(x),
                fg if y is None else _flat(y), fg, _flat(out), float(alpha))
    return out


def _plan(a: Array, b: Array):
    if tuple(a.shape) == tuple(b.shape):
        zero = _const(np.zeros(1, np.int64))
        return tuple(a.shape), zero, zero, max(a.size, 1), 1, 1
    shape, offa, offb, inner, ia, ib = shapes.binary_plan(tuple(a.shape), tuple(b.shape))
    return shape, _const(offa), _const(offb), inner, ia, ib


def binary(code: int, a: Array, b: Array) -> Array:
    shape, offa, offb, inner, ia, ib = _plan(a, b)
    out = empty(shape, np.result_type(a.dtype, b.dtype))
    if out.size:
        _launch(_ew.binary_kernel, out.size, code, _flat(a), _flat(b), _flat(out), offa, offb,
                inner, ia, ib)
    return out


def compare(code: int, a: Array, b: Array) -> Array:
    shape, offa, offb, inner, ia, ib = _plan(a, b)
    out = empty(shape, np.bool_)
    if out.size:
        _launch(_ew.compare_kernel, out.size, code, _flat(a), _flat(b), _flat(out), offa, offb,
                inner, ia, ib)
    return out


# ---------------------------------------------------------------- reductions

_SPLIT = 4096  # a single-output reduction longer than this runs in two passes


def _reduce3(code: int, x3: Array, first: bool) -> Array:
    o, r, n = x3.shape
    if code in (R_SUM, R_SUMSQ) and o * n < 256 and r > _SPLIT:
        # two passes: (O, R1, R2, I) -> (O*R1, I) partials -> (O, I)
        r2 = int(math.sqrt(r))
        while r % r2:
            r2 -= 1
        if r2 > 1:
            part = _reduce3(code, x3.reshape(o * (r // r2), r2, n), first)
            return _reduce3(R_SUM, part.reshape(o, r // r2, n), False)
    out = empty((o, n), x3.dtype)
    if code in (R_SUM, R_SUMSQ):
        _launch(_red.sum_kernel, o * n, x3, out, code == R_SUMSQ and first)
    else:
        _launch(_red.minmax_kernel, o * n, code, x3, out)
    return out


def reduce(code: int, x: Array, axes: tuple[int, ...], keepdims: bool = False) -> Array:
    out_shape = shapes.reduced_shape(tuple(x.shape), axes, keepdims)
    if not axes:
        return reshape(unary(SCALE, x, 1.0) if code != R_SUMSQ else binary(MUL, x, x), out_shape)
    if x.size == 0:
        return zeros(out_shape, x.dtype)
    cur = x
    for i, (o, r, n) in enumerate(shapes.reduce_runs(tuple(x.shape), axes)):
        cur = _reduce3(code if i == 0 or code != R_SUMSQ else R_SUM, cur.reshape(o, r, n), i == 0)
    return reshape(cur, out_shape)


def argmax(x: Array, axis: int | None, keepdims: bool = False) -> Array:
    if axis is None:
        o, r, n = 1, x.size, 1
        out_shape: tuple[int, ...] = (1,) * x.ndim if keepdims else ()
    else:
        o, r, n = shapes.axis_split(tuple(x.shape), axis)
        out_shape = shapes.reduced_shape(tuple(x.shape), (axis,), keepdims)
    out = empty((o, n), np.int64)
    _launch(_red.argmax_kernel, o * n, x.reshape(o, r, n), out)
    return reshape(out, out_shape)


# ---------------------------------------------------------------- linear algebra


def matmul(a: Array, b: Array, ta: bool = False, tb: bool = False) -> Array:
    """Batched a @ b (transposes of the last two axes as flags); batch axes broadcast."""
    a_shape, b_shape = tuple(a.shape), tuple(b.shape)  # (the simulator's shapes reject [-1])
    m = a_shape[-1] if ta else a_shape[-2]
    n = b_shape[-2] if tb else b_shape[-1]
    batch = shapes.broadcast_shape(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
    nb = math.prod(batch)
    ia = np.broadcast_to(np.arange(math.prod(a_shape[:-2])).reshape(a_shape[:-2] or ()), batch)
    ib = np.broadcast_to(np.arange(math.prod(b_shape[:-2])).reshape(b_shape[:-2] or ()), batch)
    a3 = a.reshape(max(math.prod(a_shape[:-2]), 1), a_shape[-2], a_shape[-1])
    b3 = b.reshape(max(math.prod(b_shape[:-2]), 1), b_shape[-2], b_shape[-1])
    out = empty((nb, m, n), np.result_type(a.dtype, b.dtype))
    if out.size:
        kernel = _la.matmul_f64 if out.dtype == np.float64 else _la.matmul_f32
        t = _la.TILE
        kernel[((n + t - 1) // t, (m + t - 1) // t, nb), (t, t)](
            a3, b3, out, _const(np.ascontiguousarray(ia, np.int64).reshape(-1)),
            _const(np.ascontiguousarray(ib, np.int64).reshape(-1)), ta, tb)
    return out.reshape(tuple(batch) + (m, n))


def bias_add_(y: Array, b: Array, axis: int) -> None:
    o, c, n = shapes.axis_split(tuple(y.shape), axis)
    if y.size:
        _launch(_la.bias_add_kernel, y.size, y.reshape(o, c, n), b)


# ---------------------------------------------------------------- softmax / losses


def softmax(x: Array, axis: int, log: bool) -> Array:
    o, r, n = shapes.axis_split(tuple(x.shape), axis)
    out = empty(x.shape, x.dtype)
    _launch(_sm.softmax_kernel, o * n, x.reshape(o, r, n), out.reshape(o, r, n), log)
    return out


def softmax_grad(y: Array, g: Array, axis: int, log: bool) -> Array:
    o, r, n = shapes.axis_split(tuple(y.shape), axis)
    out = empty(g.shape, g.dtype)
    _launch(_sm.softmax_grad_kernel, o * n, y.reshape(o, r, n), g.reshape(o, r, n),
            out.reshape(o, r, n), log)
    return out


def cross_entropy(logits: Array, labels: Array, ignore_index: int, want_probs: bool):
    n = logits.shape[0]
    loss = empty((n,), logits.dtype)
    probs = empty(logits.shape, logits.dtype) if want_probs else empty((1, 1), logits.dtype)
    _launch(_sm.cross_entropy_kernel, n, logits, labels, ignore_index, loss, probs, want_probs)
    return loss, (probs if want_probs else None)


def cross_entropy_grad(probs: Array, labels: Array, ignore_index: int, g: Array, scale: float) -> Array:
    out = empty(probs.shape, probs.dtype)
    _launch(_sm.cross_entropy_grad_kernel, probs.shape[0], probs, labels, ignore_index, _flat(g),
            float(scale), out)
    return out


# ---------------------------------------------------------------- convolution / pooling


def im2col(x: Array, k, s, p, d, out_hw) -> Array:
    n, c = x.shape[:2]
    cols = empty((c * k[0] * k[1], n * out_hw[0] * out_hw[1]), x.dtype)
    _launch(_conv.im2col_kernel, cols.size, x, cols, k[0], k[1], s[0], s[1], p[0], p[1], d[0],
            d[1], out_hw[0], out_hw[1])
    return cols


def col2im(cols: Array, x_shape: Sequence[int], k, s, p, d, out_hw) -> Array:
    dx = empty(x_shape, cols.dtype)
    _launch(_conv.col2im_kernel, dx.size, cols, dx, k[0], k[1], s[0], s[1], p[0], p[1], d[0],
            d[1], out_hw[0], out_hw[1])
    return dx


def max_pool2d(x: Array, k, s, p, out_hw):
    n, c, h, w = x.shape
    y = empty((n * c, out_hw[0], out_hw[1]), x.dtype)
    arg = empty(y.shape, np.int64)
    _launch(_conv.max_pool_kernel, y.size, x.reshape(n * c, h, w), y, arg, k[0], k[1], s[0],
            s[1], p[0], p[1])
    return y.reshape(n, c, out_hw[0], out_hw[1]), arg


def max_pool2d_grad(g: Array, arg: Array, x_shape: Sequence[int]) -> Array:
    n, c, h, w = x_shape
    dx = zeros((n * c, h * w), g.dtype)
    _launch(_conv.max_pool_grad_kernel, g.size, g.reshape(arg.shape), arg, dx)
    return dx.reshape(n, c, h, w)


def avg_pool2d(x: Array, k, s, p, out_hw, include_pad: bool) -> Array:
    n, c, h, w = x.shape
    y = empty((n * c, out_hw[0], out_hw[1]), x.dtype)
    _launch(_conv.avg_pool_kernel, y.size, x.reshape(n * c, h, w), y, k[0], k[1], s[0], s[1],
            p[0], p[1], include_pad)
    return y.reshape(n, c, out_hw[0], out_hw[1])


def avg_pool2d_grad(g: Array, x_shape: Sequence[int], k, s, p, include_pad: bool) -> Array:
    n, c, h, w = x_shape
    dx = zeros((n * c, h, w), g.dtype)
    _launch(_conv.avg_pool_grad_kernel, g.size, g.reshape(n * c, g.shape[2], g.shape[3]), dx,
            k[0], k[1], s[0], s[1], p[0], p[1], include_pad)
    return dx.reshape(n, c, h, w)


# ---------------------------------------------------------------- normalisation


def batch_norm_train(x3, w, b, rm, rv, momentum: float, eps: float):
    c = x3.shape[1]
    y = empty(x3.shape, x3.dtype)
    mean = empty((c,), x3.dtype)
    invstd = empty((c,), x3.dtype)
    update = rm is not None
    _launch(_norm.batch_norm_train_kernel, c, x3, w, b, y, mean, invstd,
            mean if rm is None else rm, invstd if rv is None else rv, float(momentum),
            float(eps), update)
    return y, mean, invstd


def batch_norm_eval(x3, rm, rv, w, b, eps: float):
    y = empty(x3.shape, x3.dtype)
    invstd = empty((x3.shape[1],), x3.dtype)
    _launch(_norm.batch_norm_eval_kernel, x3.size, x3, rm, rv, w, b, float(eps), y, invstd)
    return y, invstd


def batch_norm_grad(x3, g3, mean, invstd, w, training: bool):
    dx = empty(x3.shape, x3.dtype)
    dw = empty(w.shape, w.dtype)
    db = empty(w.shape, w.dtype)
    _launch(_norm.batch_norm_grad_kernel, x3.shape[1], x3, g3, mean, invstd, w, training, dx,
            dw, db)
    return dx, dw, db


def layer_norm(x2, w, b, eps: float):
    m = x2.shape[0]
    y = empty(x2.shape, x2.dtype)
    mean = empty((m,), x2.dtype)
    rstd = empty((m,), x2.dtype)
    _launch(_norm.layer_norm_kernel, m, x2, w, b, float(eps), y, mean, rstd)
    return y, mean, rstd


def layer_norm_grad(x2, g2, mean, rstd, w):
    dx = empty(x2.shape, x2.dtype)
    dw = empty(w.shape, w.dtype)
    db = empty(w.shape, w.dtype)
    _launch(_norm.layer_norm_grad_x_kernel, x2.shape[0], x2, g2, mean, rstd, w, dx)
    _launch(_norm.layer_norm_grad_w_kernel, x2.shape[1], x2, g2, mean, rstd, dw, db)
    return dx, dw, db


# ---------------------------------------------------------------- dropout / embedding

_rng_states: dict[int, tuple[int, Any]] = {}


def dropout(x: Array, p: float, scale: float, seed: int):
    """Each launched thread owns a xoroshiro128+ state; states persist between calls (they
    advance as they are used) and are re-seeded after ``vf.seed``."""
    from .dropout_mask import dropout_kernel, make_states

    y = empty(x.shape, x.dtype)
    mask = empty(x.shape, np.bool_)
    if x.size:
        blocks, threads = grid(x.size)
        n = blocks * threads
        cached = _rng_states.get(n)
        if cached is None or cached[0] != _random.version():
            cached = _rng_states[n] = (_random.version(), make_states(n, seed % (2**63)))
        dropout_kernel[blocks, threads](_flat(x), cached[1], np.float32(p), float(scale),
                                            _flat(y), _flat(mask))
    return y, mask


def dropout_grad(g: Array, mask: Array, scale: float) -> Array:
    from .dropout_mask import masked_scale_kernel

    out = empty(g.shape, g.dtype)
    if g.size:
        _launch(masked_scale_kernel, g.size, _flat(g), _flat(mask), float(scale), _flat(out))
    return out


def gather_rows(w: Array, idx: Array) -> Array:
    flat = _flat(idx)
    out = empty((flat.size, w.shape[1]), w.dtype)
    if out.size:
        _launch(_emb.gather_rows_kernel, out.size, w, flat, out)
    return out.reshape(tuple(idx.shape) + (w.shape[1],))


def coalesce_rows(idx: Array, rows: Array) -> tuple[Array, Array]:
    """Unique rows are found on the host (indices are small); values are summed on device."""
    uniq, inverse = np.unique(_flat(idx).copy_to_host(), return_inverse=True)
    d = tuple(rows.shape)[-1]
    rows2 = rows.reshape(rows.size // d, d)
    out = zeros((uniq.size, d), rows.dtype)
    if rows2.size:
        _launch(_emb.segment_sum_kernel, rows2.size, cuda.to_device(inverse.reshape(-1).astype(np.int64)),
                rows2, out)
    return cuda.to_device(uniq.astype(np.int64)), out


def scatter_rows(shape: Sequence[int], idx: Array, rows: Array) -> Array:
    out = zeros(shape, rows.dtype)
    if rows.size:
        _launch(_emb.scatter_rows_kernel, rows.size, idx, rows, out)
    return out


# ---------------------------------------------------------------- optimizer updates


def sgd_update(p2, g2, rows, buf2, lr, momentum, weight_decay, nesterov) -> None:
    _launch(_opt.sgd_kernel, g2.size, p2, g2, rows, buf2, float(lr), float(momentum),
            float(weight_decay), bool(nesterov))


def adam_update(p2, g2, rows, m2, v2, lr, beta1, beta2, eps, weight_decay, decoupled, bc1, bc2) -> None:
    _launch(_opt.adam_kernel, g2.size, p2, g2, rows, m2, v2, float(lr), float(beta1),
            float(beta2), float(eps), float(weight_decay), bool(decoupled), float(bc1), float(bc2))


def sum_squares(a: Array) -> float:
    return float(reduce(R_SUMSQ, _flat(a), (0,)).copy_to_host())


def scale_(a: Array, s: float) -> None:
    if a.size:
        _launch(_ew.unary_kernel, a.size, SCALE, _flat(a), _flat(a), float(s))
