"""Reverse-mode autograd: the grad-mode switch and the backward engine.

Each differentiable op call leaves one node (its ``Op`` instance) on its output tensor; a
node's ``inputs`` are the input tensors. ``backward`` walks the nodes once in reverse
topological order, calling each node's ``backward`` with the gradient of its output, and
accumulates into the ``.grad`` of leaf tensors that require it. Gradients are raw backend
arrays inside the engine (no graph is built for them: no higher-order gradients).
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from . import hooks as _hooks
from .sparse import accumulate

if TYPE_CHECKING:
    from .dispatch import Op
    from .tensor import Tensor

_state = threading.local()
# set by vf.profiler while it records: ``(node, grad) -> input grads``, timing node.backward
_profile_backward: Callable[[Any, Any], tuple] | None = None
F = TypeVar("F", bound=Callable[..., Any])


def is_grad_enabled() -> bool:
    return getattr(_state, "enabled", True)


def set_grad_enabled(mode: bool) -> None:
    _state.enabled = bool(mode)


class _GradMode:
    """Context manager and decorator that sets grad mode for its body."""

    mode = True

    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        set_grad_enabled(self.mode)

    def __exit__(self, *exc: object) -> None:
        set_grad_enabled(self._prev)

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(_GradMode):
    """Disable graph recording (evaluation, parameter updates): ops then save nothing."""

    mode = False


class enable_grad(_GradMode):
    mode = True


def _topological(root: Op) -> list[Op]:
    """Nodes reachable from ``root``, each after every node that consumes its output.
    (Nodes are hashed by identity: ``Op`` defines no equality.)"""
    order: list[Op] = []
    seen = {root}
    stack: list[tuple[Op, int]] = [(root, 0)]
    while stack:
        node, i = stack.pop()
        inputs = node.inputs or ()
        n = len(inputs)
        while i < n:
            t = inputs[i]
            i += 1
            parent = t._ctx if t is not None else None
            if parent is not None and parent not in seen:
                seen.add(parent)
                stack.append((node, i))
                stack.append((parent, 0))
                break
        else:
            order.append(node)
    order.reverse()
    return order


def backward(tensor: Tensor, grad: Any, retain_graph: bool = False) -> None:
    """Propagate ``grad`` (backend array shaped like ``tensor``) to every leaf that requires
    grad. Frees each node's saved arrays afterwards unless ``retain_graph``."""
    hooked = _hooks.has_grad_hooks()
    if tensor._ctx is None:
        if tensor.requires_grad:
            tensor._accumulate_grad(_hooks.run_grad_hooks(tensor, grad, tensor._device)
                                    if hooked else grad)
        return
    grads: dict[Op, Any] = {tensor._ctx: grad}  # pending output gradient per node
    leaves: dict[int, tuple[Tensor, Any]] = {}
    prof = _profile_backward
    for node in _topological(tensor._ctx):
        g = grads.pop(node, None)
        if g is None:
            continue
        if node.inputs is None:
            raise RuntimeError("trying to backward through the graph a second time; pass "
                               "retain_graph=True to the first backward()")
        if hooked:  # gradient hooks of the node's output tensor (see hooks.py)
            g = _hooks.run_grad_hooks(node, g, node.device)
        in_grads = node.backward(g) if prof is None else prof(node, g)
        for t, gi in zip(node.inputs, in_grads):
            if gi is None or t is None or not t.requires_grad:
                continue
            parent = t._ctx
            if parent is None:
                prev = leaves.get(id(t))
                leaves[id(t)] = (t, gi if prev is None else accumulate(node.be, prev[1], gi))
            else:
                prev = grads.get(parent)
                grads[parent] = gi if prev is None else accumulate(node.be, prev, gi)
        if not retain_graph:
            node.release()
    for t, g in leaves.values():
        t._accumulate_grad(_hooks.run_grad_hooks(t, g, t._device) if hooked else g)
