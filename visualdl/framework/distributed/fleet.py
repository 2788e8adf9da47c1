"""``fleet.distributed_optimizer``: PaddlePaddle's name for "this optimizer, data-parallel".

The returned optimizer averages the gradients of every ``DataParallel`` replica holding its
parameters (``DataParallel.sync_gradients``) and then steps as the wrapped one would; every
other attribute (learning rate, scheduler, state dicts) is the wrapped optimizer's, so
callbacks and checkpoints see no difference. ``init`` is ``init_parallel_env``. ::

    from visualdl.framework.distributed import fleet
    fleet.init()
    net = fleet.distributed_model(net)                  # DataParallel(net)
    opt = fleet.distributed_optimizer(vf.optim.Adam(net.parameters()))
    loss.backward(); opt.step(); opt.clear_grad()
"""

from __future__ import annotations

from typing import Any

from ..nn.layer import Layer
from .env import init_parallel_env
from .parallel import DataParallel, sync_all


class DistributedOptimizer:
    """Wraps an optimizer: ``step`` first averages the gradients over the ranks."""

    def __init__(self, optimizer: Any) -> None:
        if isinstance(optimizer, DistributedOptimizer):
            raise TypeError("distributed_optimizer: the optimizer is already distributed")
        if not hasattr(optimizer, "step") or not hasattr(optimizer, "parameters"):
            raise TypeError(f"distributed_optimizer needs a vf.optim optimizer, got "
                            f"{type(optimizer).__name__}")
        object.__setattr__(self, "inner", optimizer)

    def step(self) -> None:
        sync_all(self.inner.parameters)
        self.inner.step()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.inner, name, value)


def init(timeout_s: float | None = None) -> Any:
    """Join the group (``init_parallel_env``); returns its communicator."""
    return init_parallel_env(timeout_s)


def distributed_model(layer: Layer) -> DataParallel:
    return layer if isinstance(layer, DataParallel) else DataParallel(layer)


def distributed_optimizer(optimizer: Any) -> DistributedOptimizer:
    return optimizer if isinstance(optimizer, DistributedOptimizer) else DistributedOptimizer(optimizer)
