"""The eager ``Tensor``: a backend array (numpy on "cpu", a Numba device array on "cuda"), its
device, and the autograd fields. All arithmetic goes through ``dispatch.apply`` via the
functions in ``ops``; this module only adapts Python syntax to those functions.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np

from . import autograd, dtypes
from . import device as _device
from .sparse import RowSparseGrad, accumulate


def _host_array(data: Any, dtype: np.dtype | None) -> np.ndarray:
    """Turn user data into a new contiguous numpy array of a supported dtype (python floats
    become float32, python ints int64, numpy arrays keep their dtype)."""
    if isinstance(data, Tensor):
        arr = np.array(data.numpy(), copy=True)
    elif isinstance(data, (np.ndarray, np.generic)):
        arr = np.array(data, copy=True)  # a tensor never aliases the caller's array
        if dtype is None and arr.dtype == np.float16:
            arr = arr.astype(np.float32)
    else:
        if isinstance(data, (list, tuple)) and any(isinstance(v, Tensor) for v in data):
            data = [v.numpy() if isinstance(v, Tensor) else v for v in data]
        arr = np.asarray(data)
        if dtype is None and arr.dtype == np.float64:
            arr = arr.astype(np.float32)
    if dtype is not None:
        arr = arr.astype(dtypes.as_dtype(dtype), copy=False)
    elif arr.dtype not in dtypes.SUPPORTED:
        if arr.dtype.kind in "iu":
            arr = arr.astype(np.int64)
        else:
            arr = arr.astype(dtypes.as_dtype(arr.dtype))
    return np.asarray(arr, order="C")


class Tensor:
    """An n-dimensional array on a device, with reverse-mode autograd.

    Create one with ``vf.tensor(data, dtype=None, device=None, requires_grad=False)``.
    """

    __slots__ = ("_data", "_device", "requires_grad", "_grad", "_ctx", "name", "__weakref__")
    __array_priority__ = 1000  # numpy defers to our reflected operators

    def __init__(self, data: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> None:
        dev = _device.normalize(device if device is not None else
                                (data.device if isinstance(data, Tensor) else None))
        host = _host_array(data, dtype)
        be = _device.backend(dev)
        self._data = be.asarray(host)
        self._device = dev
        self._grad: Any = None
        self._ctx = None
        self.name: str | None = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def wrap(cls, data: Any, device: str, ctx: Any = None) -> Tensor:
        """A tensor whose memory is the backend array ``data``, not a copy (``Tensor(...)``
        always copies): for arrays the framework owns, an op's output (``ctx``: the node
        that made it, for autograd) or the all-reduce's buffer a gradient is a slot of."""
        t = object.__new__(Tensor)
        t._data = data
        t._device = device
        t._grad = None
        t._ctx = ctx
        t.name = None
        t.requires_grad = ctx is not None
        return t

    # ------------------------------------------------------------ metadata
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._data.shape)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self._data.dtype)

    @property
    def device(self) -> str:
        return self._device

    @property
    def ndim(self) -> int:
        return len(self._data.shape)

    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def size(self) -> int:
        """Number of elements (numpy/Paddle style)."""
        return self.numel()

    def dim(self) -> int:
        return self.ndim

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    @property
    def is_leaf(self) -> bool:
        return self._ctx is None

    @property
    def grad_fn(self) -> Any:
        return self._ctx

    # ------------------------------------------------------------ autograd
    @property
    def grad(self) -> Tensor | RowSparseGrad | None:
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | RowSparseGrad | None) -> None:
        self._grad = value

    def requires_grad_(self, flag: bool = True) -> Tensor:
        if flag and not dtypes.is_float(self.dtype):
            raise TypeError(f"only float tensors can require gradients, not {self.dtype}")
        self.requires_grad = bool(flag)
        return self

    def _accumulate_grad(self, g: Any) -> None:
        sparse = isinstance(g, RowSparseGrad)
        if self._grad is None:
            self._grad = g if sparse else Tensor.wrap(g, self._device)
            return
        prev = self._grad if isinstance(self._grad, RowSparseGrad) else self._grad._data
        new = accumulate(g.be if sparse else _device.backend(self._device), prev, g)
        self._grad = new if isinstance(new, RowSparseGrad) else Tensor.wrap(new, self._device)

    def backward(self, grad: Tensor | None = None, retain_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``; a non-scalar tensor needs
        the upstream ``grad``."""
        if not self.requires_grad:
            raise RuntimeError("backward() on a tensor that does not require grad (was it "
                               "computed under no_grad, or from inputs without requires_grad?)")
        be = _device.backend(self._device)
        if grad is None:
            if self.numel() != 1:
                raise RuntimeError("backward() without a gradient needs a 1-element tensor; "
                                   f"got shape {self.shape}")
            g = be.full(self.shape, 1.0, self.dtype)
        else:
            gt = grad if isinstance(grad, Tensor) else Tensor(grad, dtype=self.dtype)
            if gt.shape != self.shape:
                raise ValueError(f"grad shape {gt.shape} != tensor shape {self.shape}")
            g = gt.to(self._device)._data
        autograd.backward(self, g, retain_graph=retain_graph)

    def register_hook(self, hook: Any) -> Any:
        """Call ``hook(grad)`` with this tensor's gradient during backward (a non-None result
        replaces it); returns a handle whose ``remove()`` unregisters it. See ``hooks.py``."""
        from .hooks import register_tensor_hook

        return register_tensor_hook(self, hook)

    def detach(self) -> Tensor:
        """Same data, cut from the graph."""
        return Tensor.wrap(self._data, self._device)

    def clear_grad(self) -> None:
        self._grad = None

    zero_grad = clear_grad

    # ------------------------------------------------------------ conversion
    def numpy(self) -> np.ndarray:
        """The data as a numpy array (a copy from the GPU; the same memory on the CPU)."""
        return _device.backend(self._device).to_numpy(self._data)

    def set_value(self, value: Any) -> None:
        """Overwrite the data in place with ``value`` (an array or tensor of this shape,
        cast to this dtype), as PaddlePaddle's ``Tensor.set_value``; not recorded by
        autograd. Views of the data (a parameter's, an optimizer's) see the new values."""
        host = value.numpy() if isinstance(value, Tensor) else np.asarray(value)
        if tuple(host.shape) != self.shape:
            raise ValueError(f"set_value: value of shape {tuple(host.shape)} for a tensor of "
                             f"shape {self.shape}")
        be = _device.backend(self._device)
        be.assign_(self._data, be.asarray(np.ascontiguousarray(host, dtype=self.dtype)))

    def use_memory(self, array: Any) -> None:
        """Copy the data into ``array`` (this device's array of the same shape and dtype) and
        keep it there from now on: the tensor stays the same object (a parameter stays its
        layer's and its optimizer's) while its memory becomes, say, a view of one flat
        buffer that a collective fills (sharded data-parallel updates)."""
        if tuple(array.shape) != self.shape or np.dtype(array.dtype) != self.dtype:
            raise ValueError(f"use_memory: array {tuple(array.shape)} {array.dtype} for a "
                             f"tensor {self.shape} {self.dtype}")
        be = _device.backend(self._device)
        be.assign_(array, self._data)
        self._data = array

    def item(self) -> Any:
        if self.numel() != 1:
            raise ValueError(f"item() needs a 1-element tensor, got shape {self.shape}")
        return self.numpy().reshape(-1)[0].item()

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self.numpy()
        return arr.astype(dtype) if dtype is not None else arr

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        return bool(self.item())

    def to(self, device: Any = None, dtype: Any = None) -> Tensor:
        """Move to ``device`` and/or cast to ``dtype``; differentiable, returns self when
        nothing changes."""
        out = self
        if dtype is not None and dtypes.as_dtype(dtype) != self.dtype:
            out = out.astype(dtype)
        if device is not None and _device.normalize(device) != out._device:
            out = ops.shape.to_device(out, _device.normalize(device))
        return out

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def cuda(self) -> Tensor:
        return self.to("cuda")

    def astype(self, dtype: Any) -> Tensor:
        return ops.elementwise.cast(self, dtype)

    def float(self) -> Tensor:
        return self.astype(dtypes.float32)

    def double(self) -> Tensor:
        return self.astype(dtypes.float64)

    def long(self) -> Tensor:
        return self.astype(dtypes.int64)

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), precision=4, separator=", ", threshold=50)
        extra = f", device={self._device!r}" if self._device != "cpu" else ""
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"tensor({body}, dtype={self.dtype}{extra}{grad})"

    # ------------------------------------------------------------ arithmetic
    def __add__(self, o: Any) -> Tensor:
        return ops.elementwise.add(self, o)

    def __radd__(self, o: Any) -> Tensor:
        return ops.elementwise.add(o, self)

    def __sub__(self, o: Any) -> Tensor:
        return ops.elementwise.sub(self, o)

    def __rsub__(self, o: Any) -> Tensor:
        return ops.elementwise.sub(o, self)

    def __mul__(self, o: Any) -> Tensor:
        return ops.elementwise.mul(self, o)

    def __rmul__(self, o: Any) -> Tensor:
        return ops.elementwise.mul(o, self)

    def __truediv__(self, o: Any) -> Tensor:
        return ops.elementwise.div(self, o)

    def __rtruediv__(self, o: Any) -> Tensor:
        return ops.elementwise.div(o, self)

    def __pow__(self, o: Any) -> Tensor:
        return ops.elementwise.pow(self, o)

    def __rpow__(self, o: Any) -> Tensor:
        return ops.elementwise.pow(o, self)

    def __neg__(self) -> Tensor:
        return ops.elementwise.neg(self)

    def __abs__(self) -> Tensor:
        return ops.elementwise.abs(self)

    def __matmul__(self, o: Any) -> Tensor:
        return ops.linalg.matmul(self, o)

    def __rmatmul__(self, o: Any) -> Tensor:
        return ops.linalg.matmul(o, self)

    def __eq__(self, o: Any) -> Tensor:  # type: ignore[override]
        return ops.elementwise.compare("eq", self, o)

    def __ne__(self, o: Any) -> Tensor:  # type: ignore[override]
        return ops.elementwise.compare("ne", self, o)

    def __lt__(self, o: Any) -> Tensor:
        return ops.elementwise.compare("lt", self, o)

    def __le__(self, o: Any) -> Tensor:
        return ops.elementwise.compare("le", self, o)

    def __gt__(self, o: Any) -> Tensor:
        return ops.elementwise.compare("gt", self, o)

    def __ge__(self, o: Any) -> Tensor:
        return ops.elementwise.compare("ge", self, o)

    __hash__ = object.__hash__

    def __getitem__(self, key: Any) -> Tensor:
        return ops.shape.getitem(self, key)

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    # ------------------------------------------------------------ methods
    def exp(self) -> Tensor:
        return ops.elementwise.exp(self)

    def log(self) -> Tensor:
        return ops.elementwise.log(self)

    def sqrt(self) -> Tensor:
        return ops.elementwise.sqrt(self)

    def tanh(self) -> Tensor:
        return ops.elementwise.tanh(self)

    def sigmoid(self) -> Tensor:
        return ops.elementwise.sigmoid(self)

    def relu(self) -> Tensor:
        return ops.elementwise.relu(self)

    def abs(self) -> Tensor:
        return ops.elementwise.abs(self)

    def pow(self, e: Any) -> Tensor:
        return ops.elementwise.pow(self, e)

    def matmul(self, o: Any) -> Tensor:
        return ops.linalg.matmul(self, o)

    def sum(self, axis: Any = None, keepdim: bool = False) -> Tensor:
        return ops.reduction.sum(self, axis, keepdim)

    def mean(self, axis: Any = None, keepdim: bool = False) -> Tensor:
        return ops.reduction.mean(self, axis, keepdim)

    def max(self, axis: Any = None, keepdim: bool = False) -> Tensor:
        return ops.reduction.max(self, axis, keepdim)

    def min(self, axis: Any = None, keepdim: bool = False) -> Tensor:
        return ops.reduction.min(self, axis, keepdim)

    def argmax(self, axis: int | None = None, keepdim: bool = False) -> Tensor:
        return ops.reduction.argmax(self, axis, keepdim)

    def reshape(self, *shape: Any) -> Tensor:
        return ops.shape.reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape)

    view = reshape

    def flatten(self, start_axis: int = 0, stop_axis: int = -1) -> Tensor:
        return ops.shape.flatten(self, start_axis, stop_axis)

    def transpose(self, *axes: Any) -> Tensor:
        """``transpose()`` reverses axes; ``transpose(perm)`` permutes (Paddle/numpy);
        ``transpose(a, b)`` swaps two axes (PyTorch)."""
        if not axes:
            return ops.shape.permute(self, tuple(range(self.ndim))[::-1])
        if len(axes) == 1 and not isinstance(axes[0], int):
            return ops.shape.permute(self, tuple(axes[0]))
        if len(axes) == 2:
            perm = list(range(self.ndim))
            a, b = (int(x) % self.ndim for x in axes)
            perm[a], perm[b] = perm[b], perm[a]
            return ops.shape.permute(self, tuple(perm))
        return ops.shape.permute(self, tuple(axes))

    def permute(self, *axes: Any) -> Tensor:
        perm = tuple(axes[0]) if len(axes) == 1 and not isinstance(axes[0], int) else axes
        return ops.shape.permute(self, perm)

    @property
    def T(self) -> Tensor:
        return ops.shape.permute(self, tuple(range(self.ndim))[::-1])

    def unsqueeze(self, axis: int) -> Tensor:
        return ops.shape.unsqueeze(self, axis)

    def squeeze(self, axis: int | None = None) -> Tensor:
        return ops.shape.squeeze(self, axis)

    def expand(self, *shape: Any) -> Tensor:
        target = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return ops.shape.expand(self, target)


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Create a tensor from data (lists, numbers, numpy arrays, tensors): always a copy."""
    return Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def as_tensor(value: Any, like: Tensor | None = None) -> Tensor:
    """Coerce an operand: tensors pass through; numbers take ``like``'s dtype and device
    (a float with an integer tensor gives float32), arrays keep their dtype."""
    if isinstance(value, Tensor):
        return value
    dev = like.device if like is not None else None
    if like is not None and isinstance(value, (bool, int, float, np.number)):
        dt = like.dtype
        if isinstance(value, (float, np.floating)) and not dtypes.is_float(dt):
            dt = dtypes.float32
        return Tensor(np.asarray(value, dtype=dt), device=dev)
    return Tensor(value, device=dev)


from . import ops  # noqa: E402  (ops import Tensor from this module)
