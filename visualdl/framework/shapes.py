"""Backend-neutral shape arithmetic: broadcasting plans, reduction grouping, conv/pool sizes,
index maps. Both kernel backends call these so that the shape logic exists once.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

Shape = tuple[int, ...]


def broadcast_shape(a: Shape, b: Shape) -> Shape:
    """numpy broadcasting of two shapes, with a readable error."""
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        raise ValueError(f"shapes {a} and {b} cannot be broadcast together") from None


def contiguous_strides(shape: Shape) -> list[int]:
    strides = [0] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= shape[i]
    return strides


def broadcast_strides(in_shape: Shape, out_shape: Shape) -> list[int]:
    """Element strides of a contiguous array of ``in_shape`` viewed in ``out_shape`` (0 on
    broadcast axes)."""
    pad = len(out_shape) - len(in_shape)
    shape = (1,) * pad + tuple(in_shape)
    strides = contiguous_strides(shape)
    return [0 if shape[i] == 1 and out_shape[i] != 1 else strides[i] for i in range(len(shape))]


def collapse(shape: Sequence[int], *strides: Sequence[int]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 axes and merge neighbours that are contiguous in every operand, so that kernels
    see the fewest, longest loops (e.g. (N, C, H, W) + (1, C, 1, 1) becomes (N, C, H*W))."""
    dims: list[int] = []
    out: list[list[int]] = [[] for _ in strides]
    for axis, n in enumerate(shape):
        if n == 1:
            continue
        if dims and all(s[-1] == st[axis] * n for s, st in zip(out, strides)):
            dims[-1] *= n
            for s, st in zip(out, strides):
                s[-1] = st[axis]
            continue
        dims.append(n)
        for s, st in zip(out, strides):
            s.append(st[axis])
    if not dims:
        dims = [1]
        out = [[0] for _ in strides]
    return dims, out


def binary_plan(a_shape: Shape, b_shape: Shape) -> tuple[Shape, np.ndarray, np.ndarray, np.ndarray, int, int, int]:
    """Plan a broadcasting binary op over contiguous inputs.

    Returns (out_shape, outer_offsets_a, outer_offsets_b, inner_n, inner_stride_a,
    inner_stride_b): the kernel runs ``len(offsets)`` inner loops of ``inner_n`` elements.
    """
    out_shape = broadcast_shape(a_shape, b_shape)
    dims, (sa, sb) = collapse(out_shape, broadcast_strides(a_shape, out_shape),
                              broadcast_strides(b_shape, out_shape))
    inner, ia, ib = dims[-1], sa[-1], sb[-1]
    if len(dims) == 1:
        zero = np.zeros(1, np.int64)
        return out_shape, zero, zero, inner, ia, ib
    grid = np.indices(dims[:-1], dtype=np.int64).reshape(len(dims) - 1, -1)
    offa = (grid * np.asarray(sa[:-1], np.int64)[:, None]).sum(0)
    offb = (grid * np.asarray(sb[:-1], np.int64)[:, None]).sum(0)
    return out_shape, offa, offb, inner, ia, ib


def normalize_axes(axis: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """Sorted, non-negative, de-duplicated axes; None means all."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} out of range for {ndim}-d tensor")
        out.append(a % ndim if ndim else 0)
    return tuple(sorted(set(out)))


def reduce_runs(shape: Shape, axes: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """Split a reduction over ``axes`` into passes over contiguous runs of axes, each a
    (outer, reduced, inner) triple on the shrinking array, last run first so earlier
    triples stay valid."""
    runs: list[list[int]] = []
    for a in axes:
        if runs and runs[-1][-1] == a - 1:
            runs[-1].append(a)
        else:
            runs.append([a])
    passes = []
    cur = list(shape)
    for run in reversed(runs):
        lo, hi = run[0], run[-1] + 1
        outer = math.prod(cur[:lo])
        red = math.prod(cur[lo:hi])
        inner = math.prod(cur[hi:])
        passes.append((outer, red, inner))
        cur = cur[:lo] + [1] * (hi - lo) + cur[hi:]
    return passes


def reduced_shape(shape: Shape, axes: tuple[int, ...], keepdims: bool) -> Shape:
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def sum_to_axes(shape: Shape, target: Shape) -> tuple[int, ...]:
    """Axes of ``shape`` to sum so that the result broadcasts back to ``target`` (the gradient
    of a broadcast)."""
    pad = len(shape) - len(target)
    full = (1,) * pad + tuple(target)
    return tuple(i for i, (n, t) in enumerate(zip(shape, full)) if t == 1 and n != 1 or i < pad)


def axis_split(shape: Shape, axis: int) -> tuple[int, int, int]:
    """(outer, n, inner) of a contiguous array around one axis."""
    outer = math.prod(shape[:axis])
    inner = math.prod(shape[axis + 1:])
    return outer, int(shape[axis]), inner


def pair(v: int | Sequence[int]) -> tuple[int, int]:
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    a, b = v
    return int(a), int(b)


def conv_out_size(n: int, k: int, stride: int, pad: int, dilation: int) -> int:
    out = (n + 2 * pad - dilation * (k - 1) - 1) // stride + 1
    if out <= 0:
        raise ValueError(f"input size {n} too small for kernel {k} (stride {stride}, padding {pad}, "
                         f"dilation {dilation})")
    return out


def index_map(shape: Shape, key: Any) -> np.ndarray:
    """Flat element indices selected by ``key`` (any numpy index), in result layout. Lets a
    device backend run arbitrary indexing as one gather and its gradient as one scatter-add."""
    flat = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    return np.array(flat[key], order="C")


def is_basic_key(key: Any) -> bool:
    """True when ``key`` uses only ints, slices, None and Ellipsis (numpy basic indexing, so no
    element is selected twice)."""
    items = key if isinstance(key, tuple) else (key,)
    return all(isinstance(k, (int, np.integer, slice)) or k is None or k is Ellipsis for k in items)
