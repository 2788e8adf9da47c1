"""PaddlePaddle's tensor collectives (``paddle.distributed.all_reduce`` and friends), on the
group's ``Communicator``.

For code written against Paddle's API that exchanges values itself: a metric summed over
the ranks, a seed or a vocabulary broadcast from rank 0, a barrier before rank 0 writes a
file the others read. Each call first checks that every rank passed a tensor of the same
shape and dtype (one small all-gather): a rank that differs fails on every rank with a
``DistributedError`` naming it, where the collective library would otherwise truncate a
message, mix unrelated buffers or wait for ever. Only the whole group exists here
(``group=None``, or ``new_group()`` / ``new_group(every rank)``, Paddle's ``Group``); a
sub-group is refused with ``NotImplementedError``. MAX, MIN and PROD are reduced locally,
in rank order, from an all-gather (the communicator sums only), so every rank computes the
same result.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..tensor import Tensor
from .communicator import Communicator, Done
from .env import communicator, get_rank, get_world_size
from .parallel import check_same_everywhere


__all__ = ["ReduceOp", "ParallelEnv", "Group", "new_group", "get_group", "barrier",
           "all_reduce", "reduce", "broadcast", "scatter", "all_gather", "all_gather_object"]


class ReduceOp:
    """How ``all_reduce`` combines the ranks' values (Paddle's names)."""

    SUM = "sum"
    AVG = "avg"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


_LOCAL = {ReduceOp.MAX: np.max, ReduceOp.MIN: np.min, ReduceOp.PROD: np.prod}


class Group:
    """Paddle's process group: here always every rank of this process's group."""

    def __init__(self, world_size: int, rank: int, id: int = 0) -> None:  # noqa: A002
        self.nranks = self.world_size = world_size
        self.rank = rank
        self.ranks = list(range(world_size))
        self.id = id

    def is_member(self) -> bool:
        return True

    def get_group_rank(self, rank: int) -> int:
        """``rank``'s place in this group (the same: it holds every rank), -1 if none."""
        return rank if 0 <= rank < self.nranks else -1

    def __repr__(self) -> str:
        return f"Group(id={self.id}, rank={self.rank}, nranks={self.nranks})"


def new_group(ranks: list[int] | None = None, backend: str | None = None,
              timeout: Any = None) -> Group:
    """A group of ``ranks`` (Paddle's ``new_group``): every rank of this process's group,
    the only one collectives run over here. ``backend`` and ``timeout`` are the group's
    (see ``init_parallel_env``)."""
    comm = communicator()
    every = list(range(comm.world_size))
    if ranks is not None:
        asked = sorted({int(r) for r in ranks})
        if any(r not in every for r in asked):
            raise ValueError(f"new_group: ranks {list(ranks)} are not all ranks of this group "
                             f"of {comm.world_size} (0..{comm.world_size - 1})")
        if asked != every:
            raise NotImplementedError(
                f"new_group: a sub-group (ranks {asked} of {comm.world_size}) is not "
                f"supported: collectives run over every rank (new_group() or group=None)")
    return Group(comm.world_size, comm.rank)


def get_group(id: int = 0) -> Group:  # noqa: A002 - Paddle's name
    """The group ``id`` (Paddle's ``get_group``): 0, every rank, is the only one."""
    if id != 0:
        raise ValueError(f"get_group: no group {id}: only group 0 (every rank) exists here")
    comm = communicator()
    return Group(comm.world_size, comm.rank)


def barrier(group: Any = None) -> None:
    """Wait until every rank got here."""
    _comm(group).barrier()


def all_reduce(tensor: Tensor, op: str = ReduceOp.SUM, group: Any = None,
               sync_op: bool = True) -> Done | None:
    """``tensor`` combined over the ranks by ``op``, in place on every rank."""
    tensor.set_value(_combined(_comm(group), "all_reduce", tensor, op))
    return None if sync_op else Done()


def reduce(tensor: Tensor, dst: int = 0, op: str = ReduceOp.SUM, group: Any = None,
           sync_op: bool = True) -> Done | None:
    """``tensor`` combined over the ranks by ``op``, in place on rank ``dst`` only (the
    others keep theirs), as Paddle's ``reduce``."""
    comm = _comm(group)
    _check_rank("reduce", "dst", dst, comm)
    combined = _combined(comm, "reduce", tensor, op)
    if comm.rank == int(dst):
        tensor.set_value(combined)
    return None if sync_op else Done()


def _combined(comm: Communicator, what: str, tensor: Tensor, op: str) -> np.ndarray:
    """Every rank's ``tensor`` combined by ``op`` (a new host array)."""
    host = _host(comm, what, tensor)
    if op in (ReduceOp.SUM, ReduceOp.AVG):
        if op == ReduceOp.AVG and not np.issubdtype(host.dtype, np.floating):
            raise ValueError(f"{what}: ReduceOp.AVG needs a floating tensor, got "
                             f"{host.dtype}")
        comm.allreduce(host)
        if op == ReduceOp.AVG:
            host /= comm.world_size
        return host
    if op in _LOCAL:
        return _LOCAL[op](_gathered(comm, host), axis=0)
    raise ValueError(f"{what}: op must be one of ReduceOp.SUM, AVG, MAX, MIN, PROD, "
                     f"got {op!r}")


def scatter(tensor: Tensor, tensor_list: list | None = None, src: int = 0,
            group: Any = None, sync_op: bool = True) -> Done | None:
    """Rank ``src``'s ``tensor_list[r]`` into ``tensor`` on each rank ``r``, in place (the
    list matters on ``src`` only), as Paddle's ``scatter``."""
    comm = _comm(group)
    _check_rank("scatter", "src", src, comm)
    host = _host(comm, "scatter", tensor)
    parts = np.zeros((comm.world_size,) + host.shape, host.dtype)
    problem = None
    if comm.rank == int(src):
        problem = _scatter_problem(tensor_list, host, comm.world_size)
        if problem is None:
            parts[...] = np.stack([np.asarray(t.numpy() if isinstance(t, Tensor) else t,
                                              host.dtype) for t in tensor_list])
    said = comm.all_gather_object(problem)[int(src)]  # every rank fails alike, none waits
    if said is not None:
        raise ValueError(f"scatter: rank {src}'s tensor_list {said}")
    comm.broadcast(parts.reshape(-1), src=int(src))
    tensor.set_value(parts[comm.rank])
    return None if sync_op else Done()


def _scatter_problem(tensor_list: list | None, host: np.ndarray, world: int) -> str | None:
    if tensor_list is None or len(tensor_list) != world:
        return f"must hold {world} tensors, one per rank, got " \
               f"{'none' if tensor_list is None else len(tensor_list)}"
    for i, t in enumerate(tensor_list):
        shape = tuple(np.shape(t.numpy() if isinstance(t, Tensor) else t))
        if shape != host.shape:
            return f"[{i}] has shape {shape} where tensor has {tuple(host.shape)}"
    return None


def _check_rank(what: str, name: str, rank: int, comm: Communicator) -> None:
    if not 0 <= int(rank) < comm.world_size:
        raise ValueError(f"{what}: {name}={rank} is not a rank of this group of "
                         f"{comm.world_size}")


def broadcast(tensor: Tensor, src: int = 0, group: Any = None,
              sync_op: bool = True) -> Done | None:
    """Rank ``src``'s ``tensor`` on every rank, in place."""
    comm = _comm(group)
    _check_rank("broadcast", "src", src, comm)
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
    comm = communicator()
    if group is not None and not (isinstance(group, Group)
                                  and group.nranks == comm.world_size):
        raise NotImplementedError("collectives over a sub-group are not supported: pass "
                                  "group=None or new_group(), every rank")
    return comm


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
