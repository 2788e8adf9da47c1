"""Workers, writer side: which rank of how many a writer is (from its arguments, or the
environment a launcher sets), the record a ranked file starts with, and elastic resizes."""

from __future__ import annotations

import os
import socket
import time
from typing import Any, Mapping

from visualdl.format.record_pb2 import Entry, Record, Worker

__all__ = ["ENV_PAIRS", "check", "encode", "opening_record", "resolve_rank"]

#: The environment variables launchers set, (rank, world size), tried in order: torchrun and
#: Ray Train's torch setup set RANK / WORLD_SIZE, PaddlePaddle's launcher the PADDLE_ pair,
#: MPI launchers (MPICH's, Open MPI's) theirs.
ENV_PAIRS = (("RANK", "WORLD_SIZE"), ("PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM"),
             ("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"))


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return int(value.__index__())


def _from_env(environ: Mapping[str, str]) -> tuple[Any, Any, str, str]:
    """The first launcher pair that sets anything: (rank, world size, their names)."""
    for rank_var, size_var in ENV_PAIRS:
        rank, size = environ.get(rank_var), environ.get(size_var)
        if rank is not None or size is not None:
            return _env_int(rank_var, rank), _env_int(size_var, size), rank_var, size_var
    return None, None, "RANK", "WORLD_SIZE"


def _env_int(name: str, text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(f"environment variable {name}={text!r} is not an integer") from None


def resolve_rank(rank: Any = None, world_size: Any = None,
                 environ: Mapping[str, str] | None = None) -> tuple[int, int] | None:
    """``(rank, world_size)`` of this writer, or None for a single-process run.

    An argument left as None is taken from the environment (see :data:`ENV_PAIRS`); when
    neither the arguments nor the environment say anything, the run has one process and
    its files carry no rank. A rank without a world size (or the reverse) is refused, so
    that a file never claims half of it."""
    rank_name, size_name = "rank", "world_size"
    if rank is None or world_size is None:
        env_rank, env_size, rank_var, size_var = _from_env(os.environ if environ is None
                                                           else environ)
        if rank is None and env_rank is not None:
            rank, rank_name = env_rank, f"rank (environment variable {rank_var})"
        if world_size is None and env_size is not None:
            world_size, size_name = env_size, f"world_size (environment variable {size_var})"
    if rank is None and world_size is None:
        return None
    if world_size is None:
        raise ValueError(f"{rank_name} is {rank!r} but world_size is not given (nor "
                         "WORLD_SIZE / PADDLE_TRAINERS_NUM set): pass both")
    if rank is None:
        raise ValueError(f"{size_name} is {world_size!r} but rank is not given (nor "
                         "RANK / PADDLE_TRAINER_ID set): pass both")
    world_size = _int(size_name, world_size)
    rank = _int(rank_name, rank)
    if world_size < 1:
        raise ValueError(f"{size_name} must be at least 1, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"{rank_name} must be in [0, world_size={world_size}), got {rank}")
    return rank, world_size


def _worker(rank: int, world_size: int, restart: int, step: int, wall_time: float) -> Worker:
    return Worker(rank=rank, world_size=world_size, host=socket.gethostname(),
                  pid=os.getpid(), wall_time=wall_time, restart=restart, step=step)


def opening_record(rank: int, world_size: int) -> bytes:
    """The record a ranked file starts with, right after its header (restart 0)."""
    worker = _worker(rank, world_size, 0, 0, time.time())
    return Record(entries=[Entry(worker=worker)]).SerializeToString()


def check(rank: int, world_size: Any, step: int, restart: Any) -> tuple[tuple, int]:
    """An elastic restart or resize (``LogWriter.add_resize``): the group now has
    ``world_size`` workers and resumed at ``step``; ``restart`` counts 1, 2, ..."""
    world_size = _int("world_size", world_size)
    restart = _int("restart", restart)
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    if restart < 1:
        raise ValueError(f"restart counts restarts from 1, got {restart}")
    if world_size > 2**31 - 1 or restart > 2**31 - 1:
        raise ValueError("world_size and restart must fit in int32")
    return (rank, world_size, step, restart), 64


def encode(msg: Any, payload: tuple) -> None:
    rank, world_size, step, restart = payload
    msg.CopyFrom(_worker(rank, world_size, restart, step, 0.0))
