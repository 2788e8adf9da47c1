"""``paddle.distributed.fleet``'s collective (data-parallel) calls, with Paddle's signatures.

``distributed_optimizer`` returns the optimizer wrapped so that existing code keeps its
type checks; the averaging itself runs at the start of any optimizer's ``step`` over a
``DataParallel`` model's parameters (see parallel.py), so wrapping or not never averages
twice. Every other attribute (learning rate, scheduler, state dicts) is the wrapped
optimizer's, so callbacks and checkpoints see no difference. ::

    from visualdl.framework.distributed import fleet
    fleet.init(is_collective=True)
    net = fleet.distributed_model(net)                  # DataParallel(net)
    opt = fleet.distributed_optimizer(vf.optim.Adam(parameters=net.parameters()))
    loss.backward(); opt.step(); opt.clear_grad()

``strategy.sharding = True`` (stage 1, the only one here) shards the optimizer's updates and
state over the ranks (sharding.py); its state is then saved after
``opt.consolidate_state_dict()`` on every rank.
"""

from __future__ import annotations

from typing import Any

from ..nn.layer import Layer
from .env import communicator, get_rank, get_world_size, init_parallel_env
from .parallel import DataParallel
from .sharding import Sharding

#: DistributedStrategy switches of features other than plain data parallelism: set True,
#: distributed_optimizer refuses them rather than silently training without them.
UNSUPPORTED = ("amp", "recompute", "pipeline", "tensor_parallel",
               "gradient_merge", "lars", "lamb", "dgc", "localsgd", "adaptive_localsgd",
               "a_sync", "asp", "qat")


class DistributedStrategy:
    """Paddle's strategy object: attributes are free to set (configs included); plain data
    parallelism needs none, and the features in ``UNSUPPORTED`` are off by default.
    ``sharding``: each rank updates 1/N of the parameters (``sharding_configs``: stage 1)."""

    def __init__(self, sharding: bool = False) -> None:
        for name in UNSUPPORTED:
            setattr(self, name, False)
        self.sharding = bool(sharding)
        self.sharding_configs: dict[str, Any] = {}

    def sharding_problem(self, world_size: int) -> str | None:
        """Why this strategy's sharding cannot run here, in words; None when it can."""
        if not self.sharding:
            return None
        stage = self.sharding_configs.get("stage", 1)
        if stage != 1:
            return f"sharding stage {stage} is not supported (stage 1: the optimizer's updates)"
        degree = self.sharding_configs.get("sharding_degree", world_size)
        if degree != world_size:
            return (f"sharding_degree {degree} with {world_size} ranks: sharding spans the "
                    f"whole group here (no hybrid parallelism)")
        return None

    def enabled_unsupported(self) -> list[str]:
        return [name for name in UNSUPPORTED if getattr(self, name, False) is True]


class DistributedOptimizer:
    """Wraps an optimizer; ``step`` is the wrapped one's (which averages, see above)."""

    def __init__(self, optimizer: Any, strategy: DistributedStrategy | None = None) -> None:
        if isinstance(optimizer, DistributedOptimizer):
            raise TypeError("distributed_optimizer: the optimizer is already distributed")
        if not hasattr(optimizer, "step") or not hasattr(optimizer, "parameters"):
            raise TypeError(f"distributed_optimizer needs a vf.optim optimizer, got "
                            f"{type(optimizer).__name__}")
        unsupported = strategy.enabled_unsupported() if strategy is not None else []
        if unsupported:
            raise NotImplementedError(f"DistributedStrategy: {', '.join(unsupported)} not "
                                      f"supported (visualdl trains data-parallel only)")
        strategy = strategy or DistributedStrategy()
        problem = strategy.sharding_problem(get_world_size())
        if problem is not None:
            raise NotImplementedError(f"DistributedStrategy: {problem}")
        if strategy.sharding and not hasattr(optimizer, "sharding"):
            raise TypeError(f"sharding shards a vf.optim optimizer's updates, got "
                            f"{type(optimizer).__name__}")
        if strategy.sharding and optimizer.sharding is None:
            optimizer.sharding = Sharding(communicator())
        object.__setattr__(self, "inner", optimizer)
        object.__setattr__(self, "user_defined_strategy", strategy)

    def step(self) -> None:
        self.inner.step()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.inner, name, value)


def init(role_maker: Any = None, is_collective: bool = False, strategy: Any = None,
         log_level: Any = None, timeout_s: float | None = None) -> Any:
    """Join the group (``init_parallel_env``); returns its communicator. Paddle's arguments
    are accepted: collective or not, the group is the launcher's."""
    del role_maker, is_collective, strategy, log_level
    return init_parallel_env(timeout_s)


def worker_index() -> int:
    return get_rank()


def worker_num() -> int:
    return get_world_size()


def distributed_model(layer: Layer) -> DataParallel:
    return layer if isinstance(layer, DataParallel) else DataParallel(layer)


def distributed_optimizer(optimizer: Any, strategy: DistributedStrategy | None = None
                          ) -> DistributedOptimizer:
    if isinstance(optimizer, DistributedOptimizer):
        return optimizer
    return DistributedOptimizer(optimizer, strategy)
