"""PaddlePaddle's tensor collectives (``paddle.distributed.all_reduce`` and friends), on the
group's ``Communicator``.

For code written against Paddle's API that exchanges values itself: a metric summed over
the ranks, a seed or a vocabulary broadcast from rank 0, a barrier before rank 0 writes a
file the others read. Each call first checks that every rank passed a tensor of the same
shape and dtype (one small all-gather): a rank that differs fails on every rank with a
``DistributedError`` naming it, where the collective library would otherwise truncate a
message, mix unrelated buffers or wait for ever. Only the whole group (``group=None``)
exists here. MAX, MIN and PROD are reduced locally, in rank order, from an all-gather (the
communicator sums only), so every rank computes the same result.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..tensor import Tensor
from .communicator import Communicator, Done
from .env import communicator, get_rank, get_world_size
from .parallel import check_same_everywhere


__all__ = ["ReduceOp", "ParallelEnv", "barrier", "all_reduce", "broadcast", "all_gather",
           "all_gather_object"]


class ReduceOp:
    """How ``all_reduce`` combines the ranks' values (Paddle's names)."""

    SUM = "sum"
    AVG = "avg"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


_LOCAL = {ReduceOp.MAX: np.max, ReduceOp.MIN: np.min, ReduceOp.PROD: np.prod}


def barrier(group: Any = None) -> None:
    """Wait until every rank got here."""
    _comm(group).barrier()


def all_reduce(tensor: Tensor, op: str = ReduceOp.SUM, group: Any = None,
               sync_op: bool = True) -> Done | None:
    """``tensor`` combined over the ranks by ``op``, in place on every rank."""
    comm = _comm(group)
    host = _host(comm, "all_reduce", tensor)
    if op in (ReduceOp.SUM, ReduceOp.AVG):
        if op == ReduceOp.AVG and not np.issubdtype(host.dtype, np.floating):
            raise ValueError(f"all_reduce: ReduceOp.AVG needs a floating tensor, got "
                             f"{host.dtype}")
        comm.allreduce(host)
        if op == ReduceOp.AVG:
            host /= comm.world_size
    elif op in _LOCAL:
        host = _LOCAL[op](_gathered(comm, host), axis=0)
    else:
        raise ValueError(f"all_reduce: op must be one of ReduceOp.SUM, AVG, MAX, MIN, PROD, "
                         f"got {op!r}")
    tensor.set_value(host)
    return None if sync_op else Done()


def broadcast(tensor: Tensor, src: int = 0, group: Any = None,
              sync_op: bool = True) -> Done | None:
    """Rank ``src``'s ``tensor`` on every rank, in place."""
    comm = _comm(group)
    if not 0 <= int(src) < comm.world_size:
        raise ValueError(f"broadcast: src={src} is not a rank of this group of "
                         f"{comm.world_size}")
    host = _host(comm, "broadcast", tensor)
    comm.broadcast(host, src=int(src))
    tensor.set_value(host)
    return None if sync_op else Done()


def all_gather(tensor_list: list, tensor: Tensor, group: Any = None,
               sync_op: bool = True) -> Done | None:
    """Every rank's ``tensor``, in rank order, appended to ``tensor_list`` (as Paddle:
    the list is filled in place)."""
    comm = _comm(group)
    host = _host(comm, "all_gather", tensor)
    tensor_list.extend(Tensor(part.copy(), device=tensor.device)
                       for part in _gathered(comm, host))
    return None if sync_op else Done()


def all_gather_object(object_list: list, obj: Any, group: Any = None) -> None:
    """Every rank's ``obj`` (picklable), in rank order, appended to ``object_list``."""
    object_list.extend(_comm(group).all_gather_object(obj))


class ParallelEnv:
    """This process's place in the group, under Paddle's names (read from the group once
    joined, else from the launcher's environment)."""

    @property
    def rank(self) -> int:
        return get_rank()

    @property
    def world_size(self) -> int:
        return get_world_size()

    nranks = world_size

    @property
    def local_rank(self) -> int:
        value = os.environ.get("LOCAL_RANK", "").strip()
        return int(value) if value.isdigit() else self.rank

    @property
    def device_id(self) -> int:
        """The GPU of this rank (Paddle's ``FLAGS_selected_gpus``), else its local rank."""
        value = os.environ.get("FLAGS_selected_gpus", "").split(",")[0].strip()
        return int(value) if value.isdigit() else self.local_rank

    dev_id = device_id

    @property
    def trainer_endpoints(self) -> list[str]:
        """Every rank's ``host:port`` as Paddle's launcher gives them (else none)."""
        value = os.environ.get("PADDLE_TRAINER_ENDPOINTS", "")
        return [e.strip() for e in value.split(",") if e.strip()]

    @property
    def current_endpoint(self) -> str:
        return os.environ.get("PADDLE_CURRENT_ENDPOINT", "").strip()


def _comm(group: Any) -> Communicator:
    if group is not None:
        raise NotImplementedError("collectives over a sub-group (new_group) are not "
                                  "supported: pass group=None, the whole group")
    return communicator()


def _host(comm: Communicator, what: str, tensor: Tensor) -> np.ndarray:
    """A C-contiguous host copy of ``tensor``, after checking every rank passed one alike."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{what}: tensor must be a vf.Tensor, got {type(tensor).__name__}")
    host = np.array(tensor.numpy(), order="C", copy=True)
    if comm.world_size > 1:
        check_same_everywhere(comm, f"{what}'s tensor (shape, dtype)",
                              (tuple(host.shape), str(host.dtype)))
    return host


def _gathered(comm: Communicator, host: np.ndarray) -> np.ndarray:
    """Every rank's ``host``, stacked in rank order (world_size, *shape)."""
    rows = np.zeros((comm.world_size, host.size), host.dtype)
    rows[comm.rank] = host.reshape(-1)
    comm.all_gather(rows.reshape(-1))
    return rows.reshape((comm.world_size,) + host.shape)
