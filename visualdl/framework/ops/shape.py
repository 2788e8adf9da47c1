"""Shape ops: reshape/flatten/squeeze/unsqueeze (views), permute, expand, indexing, concat,
stack and device transfer."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import device as _device
from .. import shapes
from ..dispatch import Op, apply, register
from ..profiler import recorder as _profiling
from ..tensor import Tensor


@register("reshape")
class Reshape(Op):
    def forward(self, x, shape):
        if self.recording:
            self.saved = x.shape
        return self.be.reshape(x, shape)

    def backward(self, g):
        return (self.be.reshape(g, self.saved),)


@register("flatten")
class Flatten(Reshape):
    """A reshape that remembers its axes (exported as ONNX Flatten-like metadata)."""

    def forward(self, x, shape, start_axis, stop_axis):
        return super().forward(x, shape)


def _resolve_shape(shape: Sequence[int], numel: int) -> tuple[int, ...]:
    shape = [int(s) for s in shape]
    if shape.count(-1) > 1:
        raise ValueError("only one dimension can be -1")
    if -1 in shape:
        known = math.prod([s for s in shape if s != -1])
        if known == 0 or numel % known:
            raise ValueError(f"cannot reshape {numel} elements into {tuple(shape)}")
        shape[shape.index(-1)] = numel // known
    if math.prod(shape) != numel:
        raise ValueError(f"cannot reshape {numel} elements into {tuple(shape)}")
    return tuple(shape)


def reshape(x: Tensor, shape: Sequence[int] | int) -> Tensor:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    target = _resolve_shape(shape, x.numel())
    if target == x.shape:
        return x
    return apply("reshape", x, shape=target)


def flatten(x: Tensor, start_axis: int = 0, stop_axis: int = -1) -> Tensor:
    """Merge axes start..stop into one (``vf.nn.Flatten`` uses start_axis=1)."""
    if x.ndim == 0:
        return reshape(x, (1,))
    s, e = start_axis % x.ndim, stop_axis % x.ndim
    shape = x.shape[:s] + (math.prod(x.shape[s:e + 1]),) + x.shape[e + 1:]
    return apply("flatten", x, shape=shape, start_axis=s, stop_axis=e)


def unsqueeze(x: Tensor, axis: int) -> Tensor:
    axis = axis % (x.ndim + 1)
    return reshape(x, x.shape[:axis] + (1,) + x.shape[axis:])


def squeeze(x: Tensor, axis: int | None = None) -> Tensor:
    if axis is None:
        return reshape(x, tuple(n for n in x.shape if n != 1))
    axis = axis % x.ndim
    if x.shape[axis] != 1:
        return x
    return reshape(x, x.shape[:axis] + x.shape[axis + 1:])


@register("permute")
class Permute(Op):
    def forward(self, x, axes):
        return self.be.permute(x, axes)

    def backward(self, g):
        inv = tuple(int(i) for i in np.argsort(self.attrs["axes"]))
        return (self.be.permute(g, inv),)


def permute(x: Tensor, axes: Sequence[int]) -> Tensor:
    axes = tuple(int(a) % max(x.ndim, 1) for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"axes {axes} are not a permutation of {x.ndim} dims")
    if axes == tuple(range(x.ndim)):
        return x
    return apply("permute", x, axes=axes)


transpose = permute


@register("expand")
class Expand(Op):
    def forward(self, x, shape):
        if self.recording:
            self.saved = x.shape
        return self.be.expand(x, shape)

    def backward(self, g):
        from .common import sum_to

        return (sum_to(self.be, g, self.saved),)


def expand(x: Tensor, shape: Sequence[int]) -> Tensor:
    pad = len(shape) - x.ndim
    full = tuple(x.shape[i - pad] if s == -1 else int(s) for i, s in enumerate(shape))
    return apply("expand", x, shape=shapes.broadcast_shape(x.shape, full))


@register("getitem")
class GetItem(Op):
    def forward(self, x, key):
        if self.recording:
            self.saved = x.shape
        return self.be.getitem(x, key)

    def backward(self, g):
        return (self.be.getitem_grad(g, self.saved, self.attrs["key"]),)


def _host_key(key: Any) -> Any:
    """Indexing keys with tensors become numpy (indices are host data)."""
    if isinstance(key, tuple):
        return tuple(_host_key(k) for k in key)
    if isinstance(key, Tensor):
        return key.numpy()
    if isinstance(key, list):
        return np.asarray(key)
    return key


def getitem(x: Tensor, key: Any) -> Tensor:
    return apply("getitem", x, key=_host_key(key))


@register("concat")
class Concat(Op):
    def forward(self, *xs, axis):
        if self.recording:
            self.saved = [x.shape[axis] for x in xs]
        return self.be.concat(list(xs), axis)

    def backward(self, g):
        return tuple(self.be.split(g, self.saved, self.attrs["axis"]))


def concat(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise ValueError("concat needs at least one tensor")
    axis = axis % tensors[0].ndim
    from .. import dtypes
    from .elementwise import cast

    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = dtypes.promote(dt, t.dtype)
    return apply("concat", *[cast(t, dt) for t in tensors], axis=axis)


def stack(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    tensors = list(tensors)
    axis = axis % (tensors[0].ndim + 1)
    return concat([unsqueeze(t, axis) for t in tensors], axis)


def copy_between(x: Any, src: str, dst: str) -> Any:
    """A copy of backend array ``x`` from device ``src`` to ``dst`` ("cpu"/"cuda"). While
    vf.profiler records ops, the copy is recorded as a memcpy (host span ``cudaMemcpy HtoD``
    or ``DtoH``, and a Memcpy event on the device track) with its bytes and direction."""

    def copy() -> Any:
        host = _device.backend(src).to_numpy(x)
        return _device.backend(dst).asarray(np.array(host, copy=True))

    rec = _profiling.active
    if rec is None or not rec.ops or src == dst:
        return copy()
    kind = "HtoD" if dst == _device.CUDA else "DtoH"
    nbytes = math.prod(x.shape) * np.dtype(x.dtype).itemsize
    return rec.memcpy(kind, nbytes, copy)


@register("to_device")
class ToDevice(Op):
    """Host<->device copy. Runs on the source device's backend; the output lives on ``device``."""

    transfer = True

    def forward(self, x, device):
        return copy_between(x, self.device, device)

    def backward(self, g):
        # g lives on the destination device; bring it back to the source device
        return (copy_between(g, self.attrs["device"], self.device),)


def to_device(x: Tensor, device: str) -> Tensor:
    out = apply("to_device", x, device=device)
    out._device = device
    return out
