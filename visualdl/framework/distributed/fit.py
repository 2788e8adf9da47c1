"""What ``Model.fit(..., distributed=True)`` does to a model and its training data.

The model's network becomes a ``DataParallel`` replica and its optimizer a
``fleet.distributed_optimizer`` (so each step averages gradients); the training data is
sharded by rank with a ``DistributedBatchSampler`` whose shuffle seed is rank 0's. Before the
first step every rank's dataset size and batch size are compared, then (by ``SameSettings``
at the start of training, where ``epochs`` is known) its steps per epoch, epochs,
drop_last and shuffle: a rank that differs would otherwise run a different number of steps
and leave its peers waiting in an all-reduce, or train on shards that do not add up to the
global batches, so it fails at once with its rank and the setting named.
"""

from __future__ import annotations

from typing import Any

from .. import dataloader as _data
from ..callbacks import Callback
from ..callbacks.checkpoint import gather_optimizer_state
from .env import init_parallel_env
from .fleet import (DistributedOptimizer, DistributedStrategy, distributed_model,
                    distributed_optimizer)
from .parallel import check_same_everywhere
from .sampler import DistributedBatchSampler


def prepare_model(model: Any, strategy: DistributedStrategy | None = None) -> Any:
    """Make ``model`` (a ``vf.Model``) data-parallel in place, its optimizer distributed with
    ``strategy`` (``sharding=True``: sharded updates); returns the communicator."""
    if strategy is not None and not isinstance(strategy, DistributedStrategy):
        raise TypeError(f"fit(distributed=...) takes True or a fleet.DistributedStrategy, got "
                        f"{type(strategy).__name__}")
    comm = init_parallel_env()
    model.network = distributed_model(model.network)
    if model.optimizer is not None:
        if strategy is not None and isinstance(model.optimizer, DistributedOptimizer):
            model.optimizer = model.optimizer.inner  # the strategy given to fit decides
        model.optimizer = distributed_optimizer(model.optimizer, strategy)
    return comm


def shard(comm: Any, data: Any, batch_size: int, shuffle: bool, drop_last: bool,
          device: str | None) -> _data.DataLoader:
    """A loader of this rank's share of ``data`` (a Dataset, a DataLoader or (x, y) arrays):
    per-rank batches of ``batch_size``, the same global order on every rank."""
    seed = None
    if isinstance(data, _data.DataLoader):
        if data.batch_sampler is not None:
            raise ValueError("fit(distributed=True) shards the data itself: pass the dataset "
                             "(or a DataLoader without batch_sampler)")
        loader = data
        data, batch_size, shuffle = loader.dataset, loader.batch_size, loader.shuffle
        drop_last, seed = loader.drop_last, loader.seed
    elif isinstance(data, tuple):
        data = _data.TensorDataset(*data)
    if not isinstance(data, _data.Dataset):
        raise TypeError(f"fit(distributed=True) needs a Dataset, a DataLoader or (x, y) "
                        f"arrays to shard by rank, got {type(data).__name__}")
    seed = int(_data.DataLoader(data, 1).seed) if seed is None else seed
    check_same_everywhere(comm, "the training data (samples, batch_size)",
                          (len(data), int(batch_size)))
    seed = comm.all_gather_object(seed)[0]  # rank 0's: one order everywhere
    sampler = DistributedBatchSampler(len(data), batch_size, comm.world_size, comm.rank,
                                      shuffle=shuffle, drop_last=drop_last, seed=seed)
    return _data.DataLoader(data, batch_size, device=device, batch_sampler=sampler)


def _settings_difference(mine: dict, theirs: dict) -> str | None:
    """The settings in which ``theirs`` differs from ``mine`` (rank 0's), in words."""
    diff = [f"{k}={theirs[k]!r} where rank 0 has {k}={mine[k]!r}" for k in mine
            if theirs.get(k) != mine[k]]
    return "; ".join(diff) or None


class SameSettings(Callback):
    """At the start of training, every rank's steps per epoch, epochs, drop_last and
    shuffle compared with rank 0's (``check_same_everywhere``): a DistributedError naming
    the rank and the setting, on every rank, instead of a hang or inconsistent shards."""

    def __init__(self, comm: Any) -> None:
        self.comm = comm

    def on_train_begin(self, logs: dict | None = None) -> None:
        sampler = self.model.train_loader.batch_sampler
        check_same_everywhere(self.comm, "the training setup", {
            "steps per epoch": len(sampler), "epochs": int(self.params["epochs"]),
            "drop_last": sampler.drop_last, "shuffle": sampler.shuffle},
            _settings_difference)


class WholeOptimizerState(Callback):
    """When training ends, a sharded optimizer's state gathered on every rank (all ranks are
    here together): a ``model.save`` on rank 0 after ``fit`` then saves it whole."""

    def on_train_end(self, logs: dict | None = None) -> None:
        gather_optimizer_state(self.model)


def callbacks(comm: Any = None) -> list:
    """Callbacks a distributed fit adds in front of the user's: first ``SameSettings``,
    ``WholeOptimizerState``; under Ray Train (inside ``ray_train.fit_on_ray``), resuming
    from and reporting checkpoints through Ray."""
    from . import env, ray_train

    cbks: list = [SameSettings(comm if comm is not None else env.communicator()),
                  WholeOptimizerState()]
    if ray_train.options() is not None:
        cbks.append(ray_train.ElasticCheckpoint())
    return cbks
