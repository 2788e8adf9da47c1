"""``DataParallel``: a replica of the model on each rank, gradients averaged by all-reduce.

At wrapping, every rank's model signature (each state entry's name, shape and dtype, and
whether each parameter is trained) is gathered and compared, so ranks built with different
models -- or freezing different layers, which would give them buckets of different sizes --
fail at once with the rank named, before any collective could pair mismatched buffers; then
rank 0's parameters and buffers are broadcast, so all replicas start equal.

Before the step, ``sync_gradients`` packs the gradients, divided by the world size, into flat
buckets (last layers first, up to ``bucket_size_mb`` each) and starts each bucket's
all-reduce as soon as it is packed (so the reduction of one bucket overlaps the packing of
the next); on the CPU the reduced buffers then are the gradients, with no copy back. Then
rank 0's buffers (BatchNorm's running statistics, which each rank's forward updated from its
own shard) are broadcast, so the replicas stay equal.
It runs at the start of every optimizer's ``step`` (``optim.optimizer.before_step``) that
holds the replica's parameters and finds gradients a backward pass produced since the last
sync: so a plain optimizer (PaddlePaddle's documented loop), ``fleet.distributed_optimizer``
and ``Model.fit(distributed=True)`` all average exactly once per step, and inside
``no_sync()`` not at all (gradient accumulation). Our backward engine accumulates leaf
gradients at its very end, so the reduction cannot start inside backward;
docs/distributed.md gives the measured share of the all-reduce that this leaves on the table.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import device as _device
from ..nn.layer import Layer
from ..optim import optimizer as _optimizer
from ..profiler import recorder as _recorder
from ..profiler.categories import COMMUNICATION
from ..sparse import RowSparseGrad
from ..tensor import Tensor
from .communicator import Communicator
from .env import communicator
from .errors import DistributedError

_live: weakref.WeakSet[DataParallel] = weakref.WeakSet()


def model_signature(layer: Layer) -> list[tuple[str, tuple[int, ...], str, bool | None]]:
    """(name, shape, dtype, trained) of every state entry: what must agree across ranks.
    ``trained`` is the parameter's ``requires_grad`` (None for a buffer): the trained
    parameters are the ones bucketed and reduced, so they must be the same everywhere."""
    trained = {name: p.requires_grad for name, p in layer.named_parameters()}
    return [(name, tuple(t.shape), str(t.dtype), trained.get(name))
            for name, t in layer.state_dict().items()]


def _signature_difference(mine: list, theirs: list) -> str | None:
    """How ``theirs`` differs from ``mine`` (rank 0's), in words; None when equal."""
    if mine == theirs:
        return None
    a, b = {n: (s, d) for n, s, d, _ in mine}, {n: (s, d) for n, s, d, _ in theirs}
    missing, extra = [n for n in a if n not in b], [n for n in b if n not in a]
    if missing or extra:
        return (f"{len(theirs)} state entries against rank 0's {len(mine)} (missing "
                f"{missing[:5]}, extra {extra[:5]})")
    for name in a:
        if a[name] != b[name]:
            return (f"{name!r} is {b[name][0]} {b[name][1]} where rank 0 has "
                    f"{a[name][0]} {a[name][1]}")
    return _trained_difference(mine, theirs) or "the same entries in another order"


def _trained_difference(mine: list, theirs: list) -> str | None:
    """Which parameters one side trains and the other freezes, in words; None if none."""
    a, b = {e[0]: e[3] for e in mine}, {e[0]: e[3] for e in theirs}
    frozen = [n for n in a if a[n] and b[n] is False]
    trained = [n for n in a if a[n] is False and b[n]]
    if not (frozen or trained):
        return None
    words = []
    if frozen:
        words.append(f"it freezes {frozen} (requires_grad=False) which rank 0 trains")
    if trained:
        words.append(f"it trains {trained} which rank 0 freezes")
    return "its trainable parameters differ: " + "; ".join(words)


def check_same_everywhere(comm: Communicator, what: str, value: Any,
                          describe: Any = None) -> list[Any]:
    """Gather ``value`` from every rank; raise on every rank (so none is left waiting in a
    later collective) a DistributedError naming the first rank whose value differs from
    rank 0's. ``describe(rank0_value, other)`` words the difference (None: equal)."""
    values = comm.all_gather_object(value)
    for rank, other in enumerate(values[1:], start=1):
        why = (describe(values[0], other) if describe is not None
               else None if other == values[0] else f"{other!r} where rank 0 has {values[0]!r}")
        if why is not None:
            raise DistributedError(rank, f"{what} differs from rank 0's: {why}")
    return values


class _Bucket:
    """One flat buffer and a view of it shaped like each of its parameters.

    On the CPU the averaged gradients are left in the buffer: each parameter's ``grad``
    becomes its view, so no copy comes back out (as PyTorch's ``gradient_as_bucket_view``;
    a ``grad`` kept from an earlier step is overwritten by the next sync, as there)."""

    def __init__(self, params: list[Tensor], dtype: np.dtype) -> None:
        self.buffer = np.empty(sum(p.numel() for p in params), dtype)
        self.slots: list[tuple[Tensor, np.ndarray]] = []
        start = 0
        for p in params:
            end = start + p.numel()
            self.slots.append((p, self.buffer[start:end].reshape(p.shape)))
            start = end

    def pack(self, scale: float) -> None:
        """Each gradient x ``scale`` into its slot: the copy and the averaging's division
        in one pass (the sum of g / world is the mean)."""
        for p, view in self.slots:
            g = p.grad
            if g is None:
                view.fill(0)  # a parameter unused here may be used on another rank
            elif isinstance(g, RowSparseGrad):
                raise DistributedError(None, f"DataParallel: {tuple(p.shape)} parameter has a "
                                             f"row-sparse gradient (Embedding(sparse=True)); "
                                             f"use a dense embedding for data-parallel training")
            else:
                np.multiply(g.numpy(), scale, out=view, casting="same_kind")

    def unpack(self) -> None:
        """Each gradient = its slot of the reduced buffer."""
        for p, view in self.slots:
            if p.device == _device.CPU:
                g = p.grad
                if g is None or g.numpy() is not view:
                    p.grad = Tensor.wrap(view, p.device)  # no copy: the buffer is the grad
            elif p.grad is None:
                p.grad = Tensor(view.copy(), device=p.device)
            else:
                p.grad.set_value(view)


class DataParallel(Layer):
    """Wrap ``layer`` for data-parallel training on the current group (``init_parallel_env``).

    The wrapper shares the layer's parameters, buffers and sub-layers under the same names,
    so checkpoints, histogram tags and ``state_dict`` are those of the plain layer.
    ``bucket_size_mb`` bounds each all-reduce's buffer (smaller: more, earlier reductions);
    ``comm_buffer_size`` is PaddlePaddle's name for it."""

    def __init__(self, layer: Layer, comm: Communicator | None = None,
                 bucket_size_mb: float = 4.0, *, comm_buffer_size: float | None = None) -> None:
        if comm_buffer_size is not None:
            bucket_size_mb = comm_buffer_size
        if not isinstance(layer, Layer):
            raise TypeError(f"DataParallel wraps a vf.nn.Layer, got {type(layer).__name__}")
        if isinstance(layer, DataParallel):
            raise TypeError("DataParallel: the layer is already wrapped")
        super().__init__()
        for name in ("_parameters", "_buffers", "_non_persistent", "_sub_layers"):
            object.__setattr__(self, name, getattr(layer, name))
        object.__setattr__(self, "_layers", layer)
        object.__setattr__(self, "comm", comm if comm is not None else communicator())
        check_same_everywhere(self.comm, "the model", model_signature(layer),
                              _signature_difference)
        self._broadcast_state()
        object.__setattr__(self, "_buckets", self._make_buckets(bucket_size_mb))
        # the bucketed parameters, and the gradient each held at the last sync: a backward
        # pass since then gives a parameter a new grad object (``grads_pending``)
        params = [p for b in self._buckets for p, _ in b.slots]
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_param_ids", frozenset(id(p) for p in params))
        object.__setattr__(self, "_synced_grads", [None] * len(params))
        object.__setattr__(self, "_sync_enabled", True)
        # found once, as the buckets' parameters are: the running statistics are updated in
        # place, and walking the sub-layers each step cost 8-16 us (bench/distributed.py)
        object.__setattr__(self, "_synced_buffers", layer.buffers())
        # seconds spent in sync_gradients so far (bench/distributed.py: the all-reduce's share)
        object.__setattr__(self, "sync_seconds", 0.0)
        _live.add(self)

    def _broadcast_state(self) -> None:
        """Rank 0's parameters and buffers on every rank."""
        self._broadcast(list(self._layers.state_dict().values()))

    def _broadcast(self, tensors: list[Tensor]) -> None:
        """Rank 0's values of ``tensors`` on every rank (one broadcast per dtype)."""
        if self.comm.world_size == 1 or not tensors:
            return
        by_dtype: dict[str, list[Tensor]] = {}
        for t in tensors:
            by_dtype.setdefault(str(t.dtype), []).append(t)
        for group in by_dtype.values():
            flat = np.concatenate([t.numpy().reshape(-1) for t in group])
            self.comm.broadcast(flat, src=0)
            start = 0
            for t in group:
                n = t.numel()
                t.set_value(flat[start:start + n].reshape(t.shape))
                start += n

    def _make_buckets(self, bucket_size_mb: float) -> list[_Bucket]:
        limit = max(1, int(bucket_size_mb * 2**20))
        buckets: list[_Bucket] = []
        group: list[Tensor] = []
        size = 0
        params = [p for p in self._layers.parameters() if p.requires_grad]
        for p in reversed(params):  # backward produces the last layers' gradients first
            nbytes = p.numel() * np.dtype(p.dtype).itemsize
            if group and (size + nbytes > limit or p.dtype != group[0].dtype):
                buckets.append(_Bucket(group, np.dtype(group[0].dtype)))
                group, size = [], 0
            group.append(p)
            size += nbytes
        if group:
            buckets.append(_Bucket(group, np.dtype(group[0].dtype)))
        return buckets

    @property
    def num_buckets(self) -> int:
        return len(self._buckets)

    @property
    def buckets(self) -> list[_Bucket]:
        """The gradient buckets, in all-reduce order (each ``buffer`` and its ``slots``)."""
        return list(self._buckets)

    @property
    def trained_parameters(self) -> list[Tensor]:
        """The parameters whose gradients are averaged, in bucket order."""
        return list(self._params)

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Steps inside the block do not average (PaddlePaddle's and PyTorch's ``no_sync``):
        for gradient accumulation, ``backward`` several batches inside it; the first step
        after it averages everything accumulated, once."""
        before = self._sync_enabled
        object.__setattr__(self, "_sync_enabled", False)
        try:
            yield
        finally:
            object.__setattr__(self, "_sync_enabled", before)

    def grads_pending(self) -> bool:
        """Whether a backward pass left gradients here since the last ``sync_gradients``:
        what makes a step average, so no path averages the same gradients twice."""
        return any(p._grad is not None and p._grad is not g
                   for p, g in zip(self._params, self._synced_grads))

    def sync_gradients(self) -> None:
        """Average every parameter's gradient over the ranks (in place), and give every
        rank rank 0's buffers (a BatchNorm's running statistics, updated by this step's
        forward on each rank's own shard), as PyTorch's DDP does (``broadcast_buffers``):
        the replicas stay equal, so do their evaluations and checkpoints.

        Each all-reduce is a ``Communication`` span in a running profile (the profiler's
        distributed view splits each rank's step by them)."""
        world = self.comm.world_size
        if world == 1:
            return
        self._sync(world)
        object.__setattr__(self, "_synced_grads", [p._grad for p in self._params])

    def _sync(self, world: int) -> None:
        start = time.perf_counter()
        rec = _recorder.active
        pending = []
        for bucket in self._buckets:
            bucket.pack(1.0 / world)
            began = time.perf_counter_ns()
            pending.append((self.comm.allreduce(bucket.buffer, async_op=True), began))
        for bucket, (work, began) in zip(self._buckets, pending):
            work.wait()
            if rec is not None and rec is _recorder.active:
                rec.span(COMMUNICATION, "allreduce", began, None, {
                    "Collective name": "allreduce", "In msg nelems": int(bucket.buffer.size),
                    "dtype": str(bucket.buffer.dtype), "Group size": world})
            bucket.unpack()
        self._broadcast(self._synced_buffers)
        object.__setattr__(self, "sync_seconds", self.sync_seconds + time.perf_counter() - start)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._layers(*args, **kwargs)

    def train(self, mode: bool = True) -> Layer:
        super().train(mode)
        self._layers.train(mode)
        return self


def replica_of(parameters: list[Tensor]) -> DataParallel | None:
    """The live DataParallel whose averaged parameters include the first of ``parameters``."""
    first = id(parameters[0]) if parameters else None
    return next((dp for dp in list(_live) if first in dp._param_ids), None)


def sync_before_step(optimizer: Any) -> None:
    """``sync_gradients`` of each live DataParallel that holds any of ``optimizer``'s
    parameters and has gradients pending, unless inside its ``no_sync()``: run by every
    optimizer's ``step`` (``before_step``), so each path averages once per step."""
    if not _live:
        return
    ids = {id(p) for p in optimizer.parameters}
    for dp in list(_live):
        if dp._sync_enabled and not ids.isdisjoint(dp._param_ids) and dp.grads_pending():
            dp.sync_gradients()


_optimizer.before_step.append(sync_before_step)
