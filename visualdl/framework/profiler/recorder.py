"""The recorder: what runs inside the training step while ``vf.profiler`` records.

Why it looks like this: recording must cost well under a microsecond per event, so each hook
takes ``perf_counter_ns()`` and appends one tuple to a list; names, args and JSON are built
only when the trace is asked for (``trace.build``). Nothing here allocates per event beyond
that tuple (and the input shapes, with ``record_shapes``).

Hooks, all installed by ``start()`` and removed by ``stop()``:

* ``dispatch._profiler``: ``op_begin``/``op_end`` around every op (forward ops);
* ``autograd._profile_backward``: wraps each node's ``backward`` (backward ops, named
  ``<op>_grad`` and linked to the forward op by ``Sequence number`` as PyTorch does);
* ``active`` (this module): spans from the DataLoader, ``Model.fit``'s phases, the
  optimizers, ``RecordEvent`` and the Profiler's ``ProfilerStep#N``;
* a ``numba.core.event`` listener for ``numba:compiler_lock`` and ``numba:compile``: compile
  (and cached-kernel load) spans, nested inside the op whose first call needed them;
* with ``gpu``: a pair of CUDA events around each op on "cuda" (kernel time on the device);
* ``memcpy``: host<->device copies (``Tensor.to``, ``Layer.to``, DataLoader batches) as a
  Runtime span on the host and a Memcpy event on the device track, with bytes and direction;
* with ``memory``: ``MemoryEvents`` on each op's output and each backward gradient;
* ``hooks.layer_scope``: a :class:`LayerScope` that every ``Layer.__call__`` runs through,
  so each op records the layer path that ran it (``features/2``, as ``vf.onnx`` names the
  nodes: the graph view maps profiled time onto the exported graph with it); a backward op
  records its forward op's layer.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from .. import autograd as _autograd
from .. import dispatch as _dispatch
from .. import hooks as _hooks
from ..memory import MemoryEvents
from .categories import BACKWARD, COMPILE, MEMCPY, OPERATOR, RUNTIME

# Kineto's names for the device side of a copy (the host side is "cudaMemcpy <kind>")
_MEMCPY_NAMES = {"HtoD": "Memcpy HtoD (Pageable -> Device)",
                 "DtoH": "Memcpy DtoH (Device -> Pageable)",
                 "DtoD": "Memcpy DtoD (Device -> Device)"}

active: Recorder | None = None  # the recorder spans go to, or None: one global read to check

_now = time.perf_counter_ns
_tid = threading.get_ident  # no syscall (get_native_id is one): mapped to OS ids in native_ids


def _compile_listener_class() -> type | None:
    try:
        from numba.core import event as nev
    except ImportError:  # pragma: no cover - numba without its event API
        return None

    class CompileListener(nev.Listener):
        """Times Numba's compiler: each outermost hold of its compiler lock (compiling, or
        loading a cached kernel from disk: both are first-call costs, not op time) and,
        nested inside, each true compilation ("numba:compile", named by its function)."""

        def __init__(self, rec: Recorder) -> None:
            self.rec = rec
            self.stack: list[int] = []
            self.lock_depth = 0
            self.lock_t0 = 0
            self.compiled: list[str] = []

        def notify(self, event: Any) -> None:
            if event.kind == "numba:compiler_lock":
                if event.is_start:
                    self.lock_depth += 1
                    if self.lock_depth == 1:
                        self.lock_t0, self.compiled = _now(), []
                elif self.lock_depth > 0:
                    self.lock_depth -= 1
                    if self.lock_depth == 0:
                        name = self.compiled[-1] if self.compiled else "load cached kernel"
                        self.rec.span(COMPILE, f"numba: {name}", self.lock_t0, _now(),
                                      {"Compiled": list(self.compiled)})
                return
            super().notify(event)

        def on_start(self, event: Any) -> None:
            self.stack.append(_now())

        def on_end(self, event: Any) -> None:
            if not self.stack:
                return
            t0 = self.stack.pop()
            data = event.data if isinstance(event.data, dict) else {}
            disp = data.get("dispatcher")
            fn = getattr(disp, "py_func", None)
            name = getattr(fn, "__qualname__", None) or type(disp).__name__
            self.compiled.append(name)
            sig = ", ".join(str(a) for a in data.get("args", ()) or ())
            self.rec.span(COMPILE, name, t0, _now(),
                          {"Signature": f"({sig})", "Module": getattr(fn, "__module__", "")})

    return CompileListener


class LayerScope:
    """The path of the layer running now, kept while a recorder records ops.

    The outermost layer called (the model) is the root: its sub-layers are named by the last
    part of their dotted names, and a nested call adds its name to the path, as ``vf.jit``'s
    tracer does, so the path equals the scope ``vf.onnx`` writes into node names. A layer
    called outside the root's tree is named by its class. ``path`` is rebuilt only when a
    layer is entered or left: an op reads it as it is.
    """

    def __init__(self) -> None:
        self.path = ""
        self._stack: list[str] = []
        self._names: dict[int, str] = {}
        self._root: int | None = None

    def call(self, layer: Any, args: tuple, kwargs: dict) -> Any:
        if not self._stack and self._root != id(layer):
            self._root = id(layer)
            self._names = {id(sub): name.rsplit(".", 1)[-1]
                           for name, sub in layer.named_sublayers()}
        if self._stack or self._root != id(layer):
            name = self._names.get(id(layer)) or type(layer).__name__
        else:
            name = ""  # the root adds nothing to the path
        self._stack.append(name)
        before = self.path
        if name:
            self.path = f"{before}/{name}" if before else name
        try:
            d = layer.__dict__
            if d.get(_hooks.PRE) or d.get(_hooks.POST):
                return _hooks.call_with_hooks(layer, args, kwargs)
            return layer.forward(*args, **kwargs)
        finally:
            self._stack.pop()
            self.path = before


def _cuda_event() -> Any:
    """A recorded CUDA event on the default stream (the one our kernels launch on)."""
    from numba import cuda

    try:
        e = cuda.event(timing=True)
    except TypeError:  # the simulator's Event takes no arguments
        e = cuda.event()
    e.record()
    return e


class Recorder:
    """Events of one recording window. ``ops``: record ops (False for ``timer_only``)."""

    def __init__(self, *, ops: bool = True, shapes: bool = False, memory: bool = False,
                 gpu: bool = False) -> None:
        self.ops, self.shapes, self.gpu = ops, shapes, gpu
        # (category, name, t0 ns, t1 ns, thread id, args); args: None, a dict, or for ops a
        # tuple (sequence number, device, input shapes or None, forward name or None,
        # layer scope)
        self.events: list[tuple] = []
        self.mem_events: list[tuple] = []  # MemoryEvents rows
        # (name, cat, start event, end event, t0, t1, seq); for a Memcpy, its args dict
        # (Bytes, Kind, Direction) in place of the sequence number
        self.kernels: list[tuple] = []
        self.memory = MemoryEvents(self.mem_events) if memory else None
        self.start_ns = self.stop_ns = 0
        self.start_epoch_ns = 0
        self.gpu_base: tuple[Any, int] | None = None  # (CUDA event, host ns) at start
        self._seq = 0
        self._fwd: dict[int, tuple[int, str]] = {}  # id(op) -> (its forward seq, its layer)
        self._listener: Any = None
        self.native_ids: dict[int, int] = {}  # threading ident -> OS thread id
        self.recording = False
        self.scope = LayerScope()

    # ------------------------------------------------------------ lifetime
    def start(self) -> None:
        global active
        if active is not None:
            raise RuntimeError("another vf.profiler.Profiler is already recording; stop it "
                               "first (one recorder per process)")
        if self.gpu:
            from numba import cuda

            cuda.synchronize()
            self.gpu_base = (_cuda_event(), _now())
        self.native_ids = {_tid(): threading.get_native_id()}
        self.start_epoch_ns = time.time_ns()
        self.start_ns = _now()
        cls = _compile_listener_class() if self.ops else None
        if cls is not None:
            from numba.core import event as nev

            self._listener = cls(self)
            nev.register("numba:compile", self._listener)
            nev.register("numba:compiler_lock", self._listener)
        self.recording = True
        active = self
        if self.ops:
            _dispatch._profiler = self
            _autograd._profile_backward = self.backward
            _hooks.layer_scope = self.scope

    def stop(self) -> None:
        global active
        if not self.recording:
            return
        self.stop_ns = _now()
        self.native_ids.update((t.ident, t.native_id) for t in threading.enumerate()
                               if t.ident is not None and t.native_id is not None)
        self.recording = False
        if active is self:
            active = None
        if _dispatch._profiler is self:
            _dispatch._profiler = None
        if _autograd._profile_backward == self.backward:
            _autograd._profile_backward = None
        if _hooks.layer_scope is self.scope:
            _hooks.layer_scope = None
        if self._listener is not None:
            from numba.core import event as nev

            nev.unregister("numba:compile", self._listener)
            nev.unregister("numba:compiler_lock", self._listener)
            self._listener = None
        if self.memory is not None:
            self.memory.close()
        self._fwd.clear()

    # ------------------------------------------------------------ hooks (hot)
    def op_begin(self, device: str, cls: Any = None) -> Any:
        # a copy's device time is the Memcpy event ``memcpy`` records, not a kernel
        if self.gpu and device == "cuda" and not (cls is not None and cls.transfer):
            return (_now(), _cuda_event())
        return _now()

    def op_end(self, t0: Any, op: Any, inputs: tuple, data: Any) -> None:
        t1 = _now()
        self._seq = seq = self._seq + 1
        scope = self.scope.path
        if op.needs:
            self._fwd[id(op)] = (seq, scope)
        shapes = [None if t is None else t._data.shape for t in inputs] if self.shapes else None
        name = op.name
        if type(t0) is tuple:  # on the GPU: close the kernel's event pair
            t0, e0 = t0
            self.kernels.append((name, OPERATOR, e0, _cuda_event(), t0, t1, seq))
        tid = _tid()
        if tid not in self.native_ids:  # a thread's first event: learn its OS id
            self.native_ids[tid] = threading.get_native_id()
        self.events.append((OPERATOR, name, t0, t1, tid, (seq, op.device, shapes, None, scope)))
        if self.memory is not None:
            self.memory.alloc(data, op.device, t1 - 1, tid, name,
                              tuple(t._data for t in inputs if t is not None))

    def backward(self, node: Any, g: Any) -> tuple:
        """Run ``node.backward(g)`` timed, as the backward op ``<name>_grad``."""
        device = node.device
        e0 = _cuda_event() if self.gpu and device == "cuda" and not node.transfer else None
        t0 = _now()
        grads = node.backward(g)
        t1 = _now()
        name = node.name
        seq, scope = self._fwd.pop(id(node), (None, ""))
        shapes = [tuple(getattr(g, "shape", ()))] if self.shapes else None
        if e0 is not None:
            self.kernels.append((name + "_grad", BACKWARD, e0, _cuda_event(), t0, t1, seq))
        tid = _tid()
        if tid not in self.native_ids:
            self.native_ids[tid] = threading.get_native_id()
        self.events.append((BACKWARD, name + "_grad", t0, t1, tid,
                            (seq, device, shapes, name, scope)))
        if self.memory is not None:
            for gi in grads:
                if gi is not None:
                    self.memory.alloc(getattr(gi, "values", gi), device, t1 - 1, tid,
                                      name + "_grad", (g,))
        return grads

    def span(self, cat: str, name: str, t0: int, t1: int | None = None,
             args: dict | None = None) -> None:
        """A finished span (``t0``/``t1`` from ``time.perf_counter_ns``; ``t1``: now)."""
        tid = _tid()
        if tid not in self.native_ids:
            self.native_ids[tid] = threading.get_native_id()
        self.events.append((cat, name, t0, _now() if t1 is None else t1, tid, args))

    def gpu_begin(self, device: str) -> Any:
        """A CUDA event opening device work outside ops (the optimizer's kernels), or None."""
        return _cuda_event() if self.gpu and device == "cuda" else None

    def gpu_end(self, e0: Any, name: str, cat: str, t0: int) -> None:
        self.kernels.append((name, cat, e0, _cuda_event(), t0, _now(), None))

    def copy_to_device(self, make: Any, nbytes: int) -> Any:
        """Run ``make()`` (which copies ``nbytes`` from the host to the GPU) as a memcpy (see
        ``memcpy``); returns what ``make`` returned."""
        return self.memcpy("HtoD", nbytes, make)

    def memcpy(self, kind: str, nbytes: int, copy: Any) -> Any:
        """Run ``copy()``, a host<->device copy of ``nbytes`` (``kind``: "HtoD", "DtoH" or
        "DtoD"), as Kineto shows one: a Runtime span ``cudaMemcpy <kind>`` on the host thread
        and, with the GPU target, a Memcpy event on the device track timed by CUDA events,
        both with ``Bytes`` and ``Kind`` in their args. The dashboard's overview counts the
        device event's time as GPU memcpy. Returns what ``copy`` returned."""
        e0 = _cuda_event() if self.gpu else None
        t0 = _now()
        out = copy()
        t1 = _now()
        args = {"Bytes": int(nbytes), "Kind": kind, "Direction": kind}
        self.span(RUNTIME, f"cudaMemcpy {kind}", t0, t1, args)
        if e0 is not None:
            self.kernels.append((_MEMCPY_NAMES.get(kind, f"Memcpy {kind}"), MEMCPY, e0,
                                 _cuda_event(), t0, t1, args))
        return out

    def track(self, data: Any, device: str, op: str | None = None) -> None:
        """Count a buffer made outside an op (a DataLoader batch) when memory is profiled."""
        if self.memory is not None:
            self.memory.alloc(data, device, _now(), _tid(), op)
