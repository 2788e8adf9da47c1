"""Optimizer base: parameter list, learning rate (float or scheduler), optional clipping, and
per-parameter state arrays. Subclasses provide one update kernel call per parameter.

Every update runs as a row-wise kernel: a dense parameter is viewed as one row (V = K = 1),
a row-sparse (embedding) gradient updates only its rows ("lazy" moments, like Paddle's
lazy_mode / torch's SparseAdam), so one kernel serves both cases.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable

import numpy as np

from .. import device as _device
from ..autograd import no_grad
from ..profiler import recorder as _profiling
from ..profiler.categories import OPTIMIZER
from ..sparse import RowSparseGrad
from ..tensor import Tensor
from .lr import LRScheduler

#: Called as ``hook(optimizer)`` before each ``step`` (before clipping). Why: data-parallel
#: training (``vf.distributed.DataParallel``) averages the gradients of its replica here, so
#: a plain optimizer over a wrapped model's parameters steps on the averaged gradients
#: (PaddlePaddle's documented loop) without this module knowing about distribution.
before_step: list[Callable[[Optimizer], None]] = []


class Optimizer:
    def __init__(self, parameters: Iterable[Tensor], learning_rate: float | LRScheduler,
                 weight_decay: float = 0.0, grad_clip: Callable[[list], Any] | None = None) -> None:
        self._params = [p for p in parameters]
        if not self._params:
            raise ValueError("optimizer got an empty parameter list")
        for p in self._params:
            if not isinstance(p, Tensor) or not p.requires_grad:
                raise TypeError("optimizer parameters must be tensors that require grad")
        self._lr = learning_rate
        self.weight_decay = float(weight_decay)
        self.grad_clip = grad_clip
        self.state: dict[int, dict[str, Any]] = {}
        self.step_count = 0
        self._row0: dict[str, Any] = {}
        self._views: dict[int, dict[str, tuple[Any, Any]]] = {}
        self._plans: dict[int, tuple] = {}  # id(p) -> (array, backend, (1, size) view, row0)
        #: None, or what shards the updates over data-parallel ranks (fleet's ``sharding``
        #: strategy): ``targets(opt)``, the tensors this rank updates instead of the
        #: parameters; ``exchange()``, after the update, gives every rank the whole;
        #: ``check_saved()`` before ``state_dict``, ``reload()`` after ``set_state_dict``
        self.sharding: Any = None

    # ------------------------------------------------------------ learning rate
    def get_lr(self) -> float:
        return self._lr() if isinstance(self._lr, LRScheduler) else float(self._lr)

    def set_lr(self, value: float) -> None:
        if isinstance(self._lr, LRScheduler):
            raise RuntimeError("the learning rate is driven by a scheduler")
        self._lr = float(value)

    @property
    def lr_scheduler(self) -> LRScheduler | None:
        return self._lr if isinstance(self._lr, LRScheduler) else None

    @property
    def parameters(self) -> list[Tensor]:
        return list(self._params)

    # ------------------------------------------------------------ stepping
    def zero_grad(self) -> None:
        rec = _profiling.active
        t0 = time.perf_counter_ns() if rec is not None else 0
        for p in self._params:
            p._grad = None
        if rec is not None and rec is _profiling.active:
            rec.span(OPTIMIZER, f"Optimizer.zero_grad#{type(self).__name__}.zero_grad", t0)

    clear_grad = zero_grad

    def _rows(self, p: Tensor):
        """(be, param 2-d view, grad 2-d rows, row indices) for the update kernels."""
        g = p._grad
        if isinstance(g, RowSparseGrad):
            g.coalesce()
            return _device.backend(p.device), p._data, g.values, g.indices
        # dense: the backend, the (1, size) view and the row index are cached per parameter
        # (rebuilt only when its array object changes): a step updates every parameter, and
        # this is most of the optimizer's Python time on a small model
        plan = self._plans.get(id(p))
        if plan is None or plan[0] is not p._data:
            be = _device.backend(p.device)
            row0 = self._row0.get(p.device)
            if row0 is None:
                row0 = self._row0[p.device] = be.asarray(np.zeros(1, np.int64))
            plan = self._plans[id(p)] = (p._data, be, be.reshape(p._data, (1, -1)), row0)
        be = plan[1]
        return be, plan[2], be.reshape(g._data, (1, -1)), plan[3]

    def _state(self, p: Tensor, *names: str) -> list[Any]:
        """Per-parameter state arrays shaped like p (zeros at first use); (1, size) views for
        dense gradients, full (V, D) arrays for row-sparse ones."""
        st = self.state.get(id(p))
        if st is None:
            st = self.state[id(p)] = {}
        sparse = isinstance(p._grad, RowSparseGrad)
        views = None if sparse else self._views.setdefault(id(p), {})
        out = []
        for name in names:
            arr = st.get(name)
            if arr is None:
                arr = st[name] = _device.backend(p.device).zeros(p.shape, p.dtype)
            if sparse:
                out.append(arr)
                continue
            hit = views.get(name)
            if hit is None or hit[0] is not arr:
                hit = views[name] = (arr, _device.backend(p.device).reshape(arr, (1, -1)))
            out.append(hit[1])
        return out

    @no_grad()
    def step(self) -> None:
        """Apply one update to every parameter that has a gradient."""
        for hook in before_step:
            hook(self)
        rec = _profiling.active
        if rec is not None:  # vf.profiler records: time the whole update as one span
            gpu = rec.gpu_begin(self._params[0].device)
            t0 = time.perf_counter_ns()
            self._step()
            if rec is _profiling.active:
                name = f"Optimizer.step#{type(self).__name__}.step"
                rec.span(OPTIMIZER, name, t0)
                if gpu is not None:
                    rec.gpu_end(gpu, name, OPTIMIZER, t0)
            return
        self._step()

    def _step(self) -> None:
        if self.grad_clip is not None:
            self.grad_clip([p for p in self._params if p.grad is not None])
        self.step_count += 1
        lr = self.get_lr()
        sharding = self.sharding
        for p in self._params if sharding is None else sharding.targets(self):
            if p.grad is not None:
                self._update(p, lr)
        if sharding is not None:
            sharding.exchange()

    def _update(self, p: Tensor, lr: float) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------ state
    def consolidate_state_dict(self) -> None:
        """With sharded updates, gather every rank's share of the state into this one (a
        collective: call it on every rank, then ``state_dict()`` on any); else nothing."""
        if self.sharding is not None:
            self.sharding.consolidate(self)

    def state_dict(self) -> dict[str, Any]:
        """Numpy copies of the per-parameter state, keyed by parameter position."""
        if self.sharding is not None:
            self.sharding.check_saved()
        state = {}
        for i, p in enumerate(self._params):
            for name, arr in self.state.get(id(p), {}).items():
                state[f"{i}.{name}"] = _device.backend(p.device).to_numpy(arr).copy()
        out: dict[str, Any] = {"optimizer": type(self).__name__, "step_count": self.step_count,
                               "state": state}
        if isinstance(self._lr, LRScheduler):
            out["lr_scheduler"] = self._lr.state_dict()
        else:
            out["lr"] = float(self._lr)
        return out

    def set_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict()``'s output. A state of another optimizer class, or one
        whose entries do not fit this optimizer's parameters, is refused before anything
        changes, with what differs named."""
        kind = state.get("optimizer")
        if kind is not None and kind != type(self).__name__:
            raise ValueError(f"optimizer state of {kind}, loaded into {type(self).__name__}: "
                             f"build the optimizer the state was saved from, or skip its "
                             f"state (Model.load(..., reset_optimizer=True))")
        entries = []
        for key, value in state["state"].items():
            i, name = key.split(".", 1)
            if not i.isdigit() or int(i) >= len(self._params):
                raise ValueError(f"optimizer state entry {key!r}: this optimizer has "
                                 f"{len(self._params)} parameters")
            p = self._params[int(i)]
            host = value.numpy() if isinstance(value, Tensor) else np.asarray(value)
            if host.shape != tuple(p.shape):
                raise ValueError(f"optimizer state entry {key!r}: shape {host.shape} where "
                                 f"parameter {i} is {tuple(p.shape)}")
            entries.append((p, name, host))
        self.step_count = int(state["step_count"])
        for p, name, host in entries:
            self.state.setdefault(id(p), {})[name] = _device.backend(p.device).asarray(
                np.array(host, dtype=p.dtype, copy=True))
        if "lr_scheduler" in state and isinstance(self._lr, LRScheduler):
            self._lr.set_state_dict(state["lr_scheduler"])
        elif "lr" in state and not isinstance(self._lr, LRScheduler):
            self._lr = float(state["lr"])
        if self.sharding is not None:
            self.sharding.reload()

    load_state_dict = set_state_dict
