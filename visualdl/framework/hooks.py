"""Forward hooks on layers and gradient hooks on tensors, each removable through a handle.

Why hooks live here and not in ``Layer``/``autograd``: the hot paths (``Layer.__call__``, the
backward loop) only check whether any hook exists -- one dict lookup -- and call into this
module when one does, so a model without hooks pays nothing measurable.

* ``layer.register_forward_pre_hook(fn)``: ``fn(layer, args)`` before ``forward``; a non-None
  result replaces the positional arguments (a tuple, or a single value).
* ``layer.register_forward_hook(fn)``: ``fn(layer, args, output)`` after ``forward``; a
  non-None result replaces the output.
* ``tensor.register_hook(fn)``: ``fn(grad)`` with the gradient flowing into the tensor during
  backward; a non-None result replaces it. On a leaf (a parameter) the hook sees the gradient
  of this backward pass before it is accumulated into ``.grad``; a row-sparse gradient
  (embedding) is passed as the ``RowSparseGrad`` itself.

Every ``register_*`` returns a ``RemovableHandle``; ``handle.remove()`` (or leaving a
``with handle:`` block) takes the hook out again.
"""

from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .nn.layer import Layer
    from .tensor import Tensor

PRE = "_forward_pre_hooks"
POST = "_forward_hooks"
#: While a profiler records ops: the recorder's layer scope (``profiler.recorder.LayerScope``),
#: through which every ``Layer.__call__`` runs so that each op knows the layer that ran it.
layer_scope: Any = None
_ids = itertools.count()

# Gradient hooks by id(owner): the autograd node (Op) of a non-leaf tensor, or the leaf tensor
# itself. Keyed by id with a weakref finalizer rather than a WeakKeyDictionary because
# Tensor.__eq__ is elementwise: a weak-key lookup could compare two tensors.
_grad_hooks: dict[int, OrderedDict[int, Callable]] = {}


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook (idempotent)."""

    __slots__ = ("_store", "id")

    def __init__(self, store: OrderedDict[int, Callable]) -> None:
        self._store = store
        self.id = next(_ids)

    def remove(self) -> None:
        self._store.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


# ---------------------------------------------------------------- layer hooks


def add_layer_hook(layer: Layer, phase: str, fn: Callable) -> RemovableHandle:
    """Register ``fn`` in ``layer``'s ``phase`` store (PRE or POST), creating it on first use."""
    if not callable(fn):
        raise TypeError(f"hook must be callable, got {type(fn).__name__}")
    store = layer.__dict__.get(phase)
    if store is None:
        store = OrderedDict()
        object.__setattr__(layer, phase, store)
    handle = RemovableHandle(store)
    store[handle.id] = fn
    return handle


def call_with_hooks(layer: Layer, args: tuple, kwargs: dict) -> Any:
    """Run ``layer.forward`` between its pre-hooks and its forward hooks."""
    d = layer.__dict__
    pre = d.get(PRE)
    if pre:
        for fn in list(pre.values()):
            result = fn(layer, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    out = layer.forward(*args, **kwargs)
    post = d.get(POST)
    if post:
        for fn in list(post.values()):
            result = fn(layer, args, out)
            if result is not None:
                out = result
    return out


# ---------------------------------------------------------------- gradient hooks


def register_tensor_hook(tensor: Tensor, fn: Callable) -> RemovableHandle:
    """Hook the gradient of ``tensor`` (see the module docstring)."""
    if not callable(fn):
        raise TypeError(f"hook must be callable, got {type(fn).__name__}")
    if not tensor.requires_grad:
        raise RuntimeError("cannot register a gradient hook on a tensor that does not require "
                           "grad")
    owner: Any = tensor._ctx if tensor._ctx is not None else tensor
    key = id(owner)
    store = _grad_hooks.get(key)
    if store is None:
        store = _grad_hooks[key] = OrderedDict()
        weakref.finalize(owner, _grad_hooks.pop, key, None)
    handle = RemovableHandle(store)
    store[handle.id] = fn
    return handle


def run_grad_hooks(owner: Any, grad: Any, device: str) -> Any:
    """Apply the hooks registered for ``owner`` (node or leaf) to a backend gradient array
    (or a RowSparseGrad); returns the possibly replaced gradient in the same form."""
    store = _grad_hooks.get(id(owner))
    if not store:
        return grad
    from .sparse import RowSparseGrad
    from .tensor import Tensor

    sparse = isinstance(grad, RowSparseGrad)
    value: Any = grad if sparse else Tensor.wrap(grad, device)
    for fn in list(store.values()):
        result = fn(value)
        if result is not None:
            value = result
    if sparse or not isinstance(value, Tensor):
        return value
    return value._data


def has_grad_hooks() -> bool:
    return bool(_grad_hooks)
