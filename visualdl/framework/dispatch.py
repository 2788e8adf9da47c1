"""The single dispatch point every op goes through.

``apply(name, *inputs, **attrs)`` looks the op up in the registry, picks the kernel backend from
the inputs' device, runs the op's forward, records the autograd node when a gradient is needed,
and finally shows the call to any registered observer. Observers are how a tracer (ONNX
export) sees every op -- its type, attributes, inputs and output -- without the ops knowing
about them.

The profiler needs the op's time, so it is not an observer: while ``vf.profiler`` records,
``_profiler`` holds its recorder and ``apply`` calls ``op_begin`` before and ``op_end`` after
the op. When nothing records, that costs one global read per op. ``op_begin`` gets the op's class
too: a host<->device copy (``ToDevice``, ``transfer = True``) is timed as a memcpy, not as a
kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, ClassVar

from . import device as _device
from .autograd import _state as _grad_state
from .device import _BACKENDS

if TYPE_CHECKING:
    from .tensor import Tensor

_REGISTRY: dict[str, type[Op]] = {}
_observers: list[Callable[[Op, tuple, Any], None]] = []
_profiler: Any = None  # the active vf.profiler recorder (see profiler/recorder.py), or None


class Op:
    """One call of an op: forward on backend arrays, and (if recorded) the autograd node.

    Subclasses implement ``forward(*arrays, **attrs) -> array`` and
    ``backward(grad) -> tuple`` (one entry per input, None where no gradient is needed);
    ``self.needs`` says which inputs need one (empty tuple when no graph is recorded), so
    forward can skip saving what backward will not use.
    """

    name: ClassVar[str] = ""
    differentiable: ClassVar[bool] = True
    transfer: ClassVar[bool] = False  # a host<->device copy (the profiler records a memcpy)
    __slots__ = ("be", "device", "attrs", "inputs", "needs", "saved", "__weakref__")

    def __init__(self, be: Any, device: str, attrs: dict[str, Any], needs: tuple[bool, ...]):
        self.be = be
        self.device = device
        self.attrs = attrs
        self.needs = needs
        self.inputs: tuple | None = None
        self.saved: Any = None

    @property
    def recording(self) -> bool:
        return bool(self.needs)

    def forward(self, *xs: Any, **attrs: Any) -> Any:
        raise NotImplementedError

    def backward(self, g: Any) -> tuple:
        raise NotImplementedError(f"op {self.name!r} has no gradient")

    def release(self) -> None:
        """Drop saved arrays and inputs once backward has used them."""
        self.saved = None
        self.inputs = None

    def __repr__(self) -> str:
        return f"<op {self.name}>"


def register(name: str) -> Callable[[type[Op]], type[Op]]:
    """Class decorator: make ``cls`` the implementation of op ``name``."""

    def deco(cls: type[Op]) -> type[Op]:
        if name in _REGISTRY:
            raise ValueError(f"op {name!r} registered twice")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return deco


def registered_ops() -> dict[str, type[Op]]:
    """A copy of the op registry (name -> class), e.g. for an exporter's coverage check."""
    return dict(_REGISTRY)


def add_observer(fn: Callable[[Op, tuple, Any], None]) -> Callable[[], None]:
    """Call ``fn(op, inputs, output)`` after every op; returns a function that removes it."""
    _observers.append(fn)

    def remove() -> None:
        if fn in _observers:
            _observers.remove(fn)

    return remove


def apply(name: str, *inputs: Tensor | None, **attrs: Any) -> Tensor:
    """Run op ``name`` on tensors (None allowed for optional inputs) with keyword attributes.

    This runs once per op call, so it is written for speed (a training step of a small MLP
    spends a tenth of its time here): one pass over the inputs for the device and the
    requires-grad flags, the backend from the device module's cache, and Tensor bound once."""
    cls = _REGISTRY[name]
    device = None
    grads = False
    for t in inputs:
        if t is not None:
            if device is None:
                device = t._device
            elif t._device != device:
                raise RuntimeError(f"{name}: inputs are on different devices "
                                   f"({device} and {t._device}); move them with .to()")
            if t.requires_grad:
                grads = True
    if device is None:
        raise ValueError(f"{name}: needs at least one tensor input")
    be = _BACKENDS.get(device) or _device.backend(device)
    prof = _profiler
    if prof is not None:
        t0 = prof.op_begin(device, cls)
    needs: tuple[bool, ...] = ()
    if grads and cls.differentiable and getattr(_grad_state, "enabled", True):
        needs = tuple(t is not None and t.requires_grad for t in inputs)
    op = cls(be, device, attrs, needs)
    data = op.forward(*[None if t is None else t._data for t in inputs], **attrs)
    if needs:
        out = _make(data, device, op)
        op.inputs = inputs
    else:
        out = _make(data, device)
    if prof is not None:
        prof.op_end(t0, op, inputs, data)
    if _observers:
        for fn in list(_observers):
            fn(op, inputs, out)
    return out


def _bind_tensor() -> None:
    """Bind ``Tensor.wrap`` once tensor.py is importable (it imports this module)."""
    global _make
    from .tensor import Tensor

    _make = Tensor.wrap


def _make(data: Any, device: str, ctx: Any = None) -> Tensor:  # replaced on first call
    _bind_tensor()
    return _make(data, device, ctx)
