"""The communicator: the few collectives data-parallel training needs, over numpy buffers.

One small interface (``allreduce``, ``all_gather``, ``broadcast``, ``barrier``,
``all_gather_object``, ``rank``, ``world_size``) so that the training code never names the
collective library.
``SingleProcess`` is the trivial one (a world of one: every call returns at once), used when
no distributed environment is set up; ``visualdl.framework.distributed.gloo`` implements it
on PyTorch's ``torch.distributed`` (gloo on CPU, NCCL on GPU). docs/distributed.md says why.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class Work(Protocol):
    """A collective in flight: ``wait()`` returns once its buffer holds the result."""

    def wait(self) -> Any: ...


class Communicator(Protocol):
    """What data-parallel training asks of a collective library (buffers are C-contiguous
    numpy arrays, changed in place)."""

    rank: int
    world_size: int
    backend: str  # the library's name: "mpi", "gloo", "nccl"

    def allreduce(self, buffer: np.ndarray, async_op: bool = False) -> Work | None:
        """Sum ``buffer`` over all ranks, in place; with ``async_op`` return a handle."""
        ...

    def all_gather(self, buffer: np.ndarray) -> None:
        """In place: ``buffer`` (1-d, its size a multiple of ``world_size``) cut into
        ``world_size`` equal parts, part r taken from rank r on every rank."""
        ...

    def broadcast(self, buffer: np.ndarray, src: int = 0) -> None:
        """Overwrite ``buffer`` on every rank with rank ``src``'s."""
        ...

    def barrier(self) -> None: ...

    def all_gather_object(self, obj: Any) -> list[Any]:
        """Every rank's ``obj`` (picklable), in rank order, on every rank."""
        ...

    def close(self) -> None: ...


class Done:
    """Work already done (a world of one; Paddle's ``sync_op=False`` on a blocking call)."""

    def wait(self) -> bool:
        return True

    def is_completed(self) -> bool:
        return True


class SingleProcess:
    """A world of one process: each collective is the identity."""

    rank = 0
    world_size = 1
    backend = "none"

    def allreduce(self, buffer: np.ndarray, async_op: bool = False) -> Work | None:
        return Done() if async_op else None

    def all_gather(self, buffer: np.ndarray) -> None:
        return None

    def broadcast(self, buffer: np.ndarray, src: int = 0) -> None:
        return None

    def barrier(self) -> None:
        return None

    def all_gather_object(self, obj: Any) -> list[Any]:
        return [obj]

    def close(self) -> None:
        return None
