"""The parallel environment of this process: ``init_parallel_env``, ``get_rank``,
``get_world_size`` (PaddlePaddle's names).

Where the group comes from, first match wins:

1. a ``torch.distributed`` process group already set up -- Ray Train's ``TorchTrainer`` does
   this in each worker (gloo on CPU), torchrun users may too: it is reused as it is;
2. an MPI launcher's ranks (``mpiexec``, or ``spawn`` where mpi4py and MPICH are
   installed): MPI's world, shared-memory collectives on one machine;
3. ``WORLD_SIZE`` > 1 with ``RANK``, ``MASTER_ADDR``, ``MASTER_PORT`` (what ``spawn`` and
   torchrun set), or PaddlePaddle's ``PADDLE_TRAINERS_NUM`` / ``PADDLE_TRAINER_ID`` /
   ``PADDLE_MASTER`` (``host:port``): a gloo group over TCP, rendezvous at the master;
4. otherwise a world of one (``SingleProcess``): the same code runs unchanged alone.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .communicator import Communicator, SingleProcess
from .errors import DistributedError

DEFAULT_TIMEOUT_S = 300.0
_current: Communicator | None = None


def _int_env(*names: str) -> int | None:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            if not value.isdigit():
                raise DistributedError(None, f"environment variable {name}={value!r} is not a "
                                             f"non-negative integer")
            return int(value)
    return None


def _master() -> tuple[str, int]:
    host = os.environ.get("MASTER_ADDR", "").strip()
    port = os.environ.get("MASTER_PORT", "").strip()
    if not (host and port) and os.environ.get("PADDLE_MASTER", "").strip():
        host, _, port = os.environ["PADDLE_MASTER"].strip().rpartition(":")
    if not port.isdigit():
        raise DistributedError(None, "a multi-process run needs the rendezvous address: set "
                                     "MASTER_ADDR and MASTER_PORT (spawn() sets them)")
    return host or "127.0.0.1", int(port)


def _torch_group_ready() -> bool:
    dist = sys.modules.get("torch.distributed")  # never imports torch just to ask
    return dist is not None and dist.is_available() and dist.is_initialized()


def init_parallel_env(timeout_s: float | None = None, backend: str = "gloo") -> Communicator:
    """Join (or find) this process's group and return its communicator; idempotent.

    ``timeout_s`` bounds the rendezvous and every collective (default
    ``VISUALDL_DIST_TIMEOUT`` or 300 s): a rank that cannot reach the others raises a
    ``DistributedError`` naming it instead of waiting for ever."""
    global _current
    if _current is not None:
        return _current
    if timeout_s is None:
        timeout_s = float(os.environ.get("VISUALDL_DIST_TIMEOUT", DEFAULT_TIMEOUT_S))
    if _torch_group_ready():
        from .gloo import TorchCommunicator

        _current = TorchCommunicator(timeout_s)
        return _current
    from .mpi import MPICommunicator, launched_by_mpi

    if launched_by_mpi():
        _current = MPICommunicator(timeout_s)
        return _current
    world = _int_env("WORLD_SIZE", "PADDLE_TRAINERS_NUM") or 1
    if world <= 1:
        _current = SingleProcess()
        return _current
    rank = _int_env("RANK", "PADDLE_TRAINER_ID")
    if rank is None or rank >= world:
        raise DistributedError(rank, f"WORLD_SIZE={world} needs RANK in 0..{world - 1}")
    host, port = _master()
    from .gloo import connect

    _current = connect(rank, world, host, port, timeout_s, backend)
    return _current


def is_initialized() -> bool:
    """Whether this process has joined its group (``init_parallel_env``; a world of one
    counts), as Paddle's ``paddle.distributed.is_initialized``."""
    return _current is not None


def communicator() -> Communicator:
    """The communicator of ``init_parallel_env`` (which it calls if nobody did)."""
    return _current if _current is not None else init_parallel_env()


def get_rank() -> int:
    """This process's rank: from the group once set up, else from the environment (0)."""
    if _current is not None:
        return _current.rank
    return _int_env("RANK", "PADDLE_TRAINER_ID", "PMI_RANK", "OMPI_COMM_WORLD_RANK") or 0


def get_world_size() -> int:
    """How many processes train together: the group's size once set up, else the
    environment's (1)."""
    if _current is not None:
        return _current.world_size
    return _int_env("WORLD_SIZE", "PADDLE_TRAINERS_NUM", "PMI_SIZE",
                    "OMPI_COMM_WORLD_SIZE") or 1


def group_info() -> dict[str, Any] | None:
    """``rank``, ``world_size`` and ``backend`` of the group this process joined, None
    before it joins one or in a world of one: what a profile's trace says of its rank
    (kineto's ``distributedInfo``, see visualdl.framework.profiler.trace)."""
    if _current is None or _current.world_size < 2:
        return None
    return {"rank": int(_current.rank), "world_size": int(_current.world_size),
            "backend": _current.backend}


def shutdown() -> None:
    """Leave the group (a later ``init_parallel_env`` joins a new one: an elastic restart)."""
    global _current
    if _current is not None:
        _current.close()
        _current = None
