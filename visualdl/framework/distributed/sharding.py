"""Sharded optimizer updates (ZeRO stage 1; PaddlePaddle's ``sharding`` strategy, stage 1).

In plain data parallelism every rank applies the same update to the same averaged gradients:
N times the optimizer's work. SGD, momentum, Adam and AdamW update each element from that
element's parameter, gradient and state alone, so here each rank updates one contiguous 1/N
of every gradient bucket and an all-gather then gives every rank the whole: the same numbers
as the unsharded update, element for element. For the digits MLP that update (Adam) is a
third of a step, so this is what takes two workers past 1.7x one (bench/distributed.py).

The gradients stay averaged in full on every rank (clipping, callbacks and histograms see
them as before). The parameters become views of one flat buffer per bucket (what the
all-gather fills); a parameter whose array is replaced is copied back in at the next step.
The optimizer's state (Adam's moments) lives with the rank that owns it: ``consolidate``
gathers it on every rank, which the checkpoint callbacks do before rank 0 saves, and
``fit`` when training ends; ``state_dict`` without it raises instead of saving a partial
state.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .. import device as _device
from ..profiler import recorder as _recorder
from ..profiler.categories import COMMUNICATION
from ..tensor import Tensor
from .communicator import Communicator
from .errors import DistributedError
from .parallel import replica_of


class _Shard:
    """One bucket's flat parameter buffer, and the range of it this rank updates."""

    def __init__(self, bucket: Any, rank: int, world: int) -> None:
        self.bucket = bucket
        n = bucket.buffer.size
        self.per = -(-n // world)  # equal blocks for the all-gather; the tail is padding
        self.flat = np.zeros(self.per * world, bucket.buffer.dtype)
        self.links: list[tuple[Tensor, np.ndarray, int]] = []  # (parameter, view, offset)
        start = 0
        for p, _ in bucket.slots:
            self.links.append((p, self.flat[start:start + p.numel()].reshape(p.shape), start))
            start += p.numel()
        self.lo, self.hi = min(n, rank * self.per), min(n, (rank + 1) * self.per)
        self.target = Tensor.wrap(self.flat[self.lo:self.hi], _device.CPU).requires_grad_()
        self.target.grad = Tensor.wrap(bucket.buffer[self.lo:self.hi], _device.CPU)

    def link(self) -> None:
        """Each parameter's array is its view of the flat buffer (copied in if it is not)."""
        for p, view, _ in self.links:
            if p.numpy() is not view:  # on the CPU, numpy() is the tensor's own array
                if p.device != _device.CPU:
                    raise DistributedError(None, f"sharding: a {tuple(p.shape)} parameter is "
                                                 f"on {p.device}; sharded updates run on the CPU")
                p.use_memory(view)

    def gradients_ready(self) -> bool:
        """Whether the bucket holds every parameter's gradient (it does after an averaging
        sync); a gradient set otherwise is copied in. False when none has one."""
        grads = [p.grad for p, _ in self.bucket.slots]
        if all(g is None for g in grads):
            return False
        for (p, slot), g in zip(self.bucket.slots, grads):
            if g is None:
                raise DistributedError(None, f"sharding: the {tuple(p.shape)} parameter has no "
                                             f"gradient at this step while others have one")
            if g.numpy() is not slot:
                slot[...] = g.numpy()
        return True


class Sharding:
    """Set as ``optimizer.sharding``; binds to the optimizer's ``DataParallel`` model at the
    first step (whatever the order they were made in)."""

    def __init__(self, comm: Communicator) -> None:
        self.comm = comm
        self.shards: list[_Shard] | None = None
        self.stale = False  # the per-parameter state was loaded: the shards take it anew
        self.unsaved = False  # shards updated since the per-parameter state was last whole
        self.updated = False  # this step updated a shard (so the ranks exchange them)
        self.exchange_seconds = 0.0  # in all-gathers so far (bench/distributed.py)

    # ---------------------------------------------------------------- the step
    def targets(self, optimizer: Any) -> list[Tensor]:
        """What this rank updates: its range of each bucket, the bucket's averaged
        gradients as the range's gradient. In a world of one, the parameters themselves."""
        if self.comm.world_size == 1:
            return optimizer.parameters
        if self.shards is None:
            self.shards = self._bind(optimizer)
            self.stale = True
        if self.stale:
            self._scatter_state(optimizer)
        out = []
        for shard in self.shards:
            shard.link()
            if shard.gradients_ready():
                out.append(shard.target)
        self.updated = bool(out)
        self.unsaved = self.unsaved or self.updated
        return out

    def exchange(self) -> None:
        """Every rank's updated range to every rank: the parameters are whole again."""
        if not self.updated:  # nothing this step (or a world of one: the parameters were)
            return
        rec = _recorder.active
        start = time.perf_counter()
        for shard in self.shards:
            began = time.perf_counter_ns()
            self.comm.all_gather(shard.flat)
            if rec is not None and rec is _recorder.active:
                rec.span(COMMUNICATION, "allgather", began, None, {
                    "Collective name": "allgather", "In msg nelems": int(shard.per),
                    "dtype": str(shard.flat.dtype), "Group size": self.comm.world_size})
        self.exchange_seconds += time.perf_counter() - start

    def _bind(self, optimizer: Any) -> list[_Shard]:
        params = optimizer.parameters
        dp = replica_of(params)
        if dp is None:
            raise DistributedError(None, "sharding needs the optimizer's parameters in a "
                                         "DataParallel model (fleet.distributed_model, or "
                                         "Model.fit(distributed=...))")
        if {id(p) for p in params} != {id(p) for p in dp.trained_parameters}:
            raise DistributedError(None, f"sharding: the optimizer holds {len(params)} "
                                         f"parameters and the DataParallel model trains "
                                         f"{len(dp.trained_parameters)}; one optimizer must "
                                         f"hold them all to shard their updates")
        return [_Shard(b, self.comm.rank, self.comm.world_size) for b in dp.buckets]

    # ---------------------------------------------------------------- the state
    def consolidate(self, optimizer: Any) -> None:
        """Every rank's share of the optimizer state gathered into its per-parameter state,
        on every rank (a collective: all ranks call it, at the same step)."""
        if self.shards is not None and not self.stale:
            for shard in self.shards:
                self._gather_state(optimizer, shard)
        self.unsaved = False

    def _gather_state(self, optimizer: Any, shard: _Shard) -> None:
        mine = optimizer.state.get(id(shard.target), {})
        for name in sorted(mine):
            whole = np.zeros_like(shard.flat)
            start = self.comm.rank * shard.per
            whole[start:start + shard.hi - shard.lo] = mine[name].reshape(-1)  # host arrays
            self.comm.all_gather(whole)
            for p, _, k in shard.links:
                optimizer.state.setdefault(id(p), {})[name] = (
                    whole[k:k + p.numel()].reshape(p.shape).copy())

    def check_saved(self) -> None:
        """Refuse to hand out a state dict that misses the other ranks' shares."""
        if self.unsaved:
            raise DistributedError(None, f"the optimizer's state is sharded over "
                                         f"{self.comm.world_size} ranks (DistributedStrategy"
                                         f".sharding): call consolidate_state_dict() on every "
                                         f"rank before state_dict() (the checkpoint callbacks "
                                         f"and fit_on_ray do)")

    def reload(self) -> None:
        """After ``set_state_dict``: the shards take their ranges of the loaded state."""
        self.stale, self.unsaved = True, False

    def _scatter_state(self, optimizer: Any) -> None:
        for shard in self.shards or []:
            state: dict[str, np.ndarray] = {}
            for p, _, k in shard.links:
                for name, arr in optimizer.state.get(id(p), {}).items():
                    whole = state.setdefault(name, np.zeros_like(shard.flat))
                    whole[k:k + p.numel()] = _device.backend(p.device).to_numpy(arr).reshape(-1)
            optimizer.state[id(shard.target)] = {
                name: whole[shard.lo:shard.hi].copy() for name, whole in state.items()}
        self.stale = False
