"""The communicator on MPI (mpi4py over MPICH): the fast path for ranks on one machine.

Why a second library beside gloo: on one machine MPICH reduces through shared memory, so a
small all-reduce costs tens of microseconds where gloo's TCP rounds cost about a millisecond
-- more than a whole training step of a small model (bench/distributed.py measures both).
MPI needs its own launcher (``mpiexec``; ``spawn`` uses MPICH's ``mpiexec.gforker``, which
starts the ranks as its children and opens no socket) and has no timeouts of its own, so
every collective here is non-blocking and polled against the group's timeout: a rank whose
peer never arrives raises a ``DistributedError`` naming it instead of waiting for ever.

mpi4py is imported here only (``visualdl[distributed]`` installs it with the ``mpich`` wheel).
"""

from __future__ import annotations

import os
import pickle
import time
from typing import Any

import numpy as np

from .errors import DistributedError, peer_lost

#: What MPI launchers put in each rank's environment: (rank, size) variable pairs.
#: polls before a waiting rank starts yielding its core to others (a peer, another job)
SPINS = 200
LAUNCHER_VARIABLES = (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"))


def launched_by_mpi() -> bool:
    """Whether an MPI launcher started this process as one of several ranks."""
    return any(os.environ.get(size, "1").strip() not in ("", "0", "1")
               for _, size in LAUNCHER_VARIABLES)


def _mpi() -> Any:
    try:
        from mpi4py import MPI
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError("MPI collectives need mpi4py and an MPI library: pip "
                                  "install 'visualdl[distributed]'", name="mpi4py") from exc
    return MPI


class _Request:
    """A collective in flight; ``wait`` polls it until done or the group's timeout."""

    def __init__(self, comm: MPICommunicator, request: Any, what: str) -> None:
        self.comm, self.request, self.what = comm, request, what

    def wait(self) -> None:
        test = self.request.Test
        for _ in range(SPINS):  # the peer is usually microseconds away: spin
            if test():
                return
        deadline = time.monotonic() + self.comm.timeout_s
        while not test():  # then hand the core over between polls (a shared machine)
            os.sched_yield()
            if time.monotonic() > deadline:
                raise self.comm.failure(self.what, "no answer")


class MPICommunicator:
    """The ``Communicator`` on ``MPI.COMM_WORLD`` (or ``comm``). ``timeout_s`` bounds each
    collective; MPI itself would wait for ever."""

    backend = "mpi"

    def __init__(self, timeout_s: float, comm: Any = None) -> None:
        self.MPI = _mpi()
        self.comm = comm if comm is not None else self.MPI.COMM_WORLD
        self.rank = self.comm.Get_rank()
        self.world_size = self.comm.Get_size()
        self.timeout_s = timeout_s

    def failure(self, what: str, why: str) -> DistributedError:
        """The error of a collective that did not complete: this rank, its peers, the timeout."""
        return peer_lost(self.rank, self.world_size, what, self.timeout_s, why)

    @staticmethod
    def _check(buffer: np.ndarray) -> np.ndarray:
        if not buffer.flags.c_contiguous:
            raise ValueError("communicator buffers must be C-contiguous numpy arrays")
        return buffer

    def allreduce(self, buffer: np.ndarray, async_op: bool = False) -> _Request | None:
        request = _Request(self, self.comm.Iallreduce(self.MPI.IN_PLACE, self._check(buffer),
                                                      op=self.MPI.SUM), "all-reduce")
        if async_op:
            return request
        request.wait()
        return None

    def all_gather(self, buffer: np.ndarray) -> None:
        _Request(self, self.comm.Iallgather(self.MPI.IN_PLACE, self._check(buffer)),
                 "all-gather").wait()

    def broadcast(self, buffer: np.ndarray, src: int = 0) -> None:
        _Request(self, self.comm.Ibcast(self._check(buffer), root=src), "broadcast").wait()

    def barrier(self) -> None:
        _Request(self, self.comm.Ibarrier(), "barrier").wait()

    def all_gather_object(self, obj: Any) -> list[Any]:
        """Every rank's pickled ``obj``: the sizes first, then the bytes (both polled)."""
        data = np.frombuffer(pickle.dumps(obj), np.uint8)
        sizes = np.zeros(self.world_size, np.int64)
        mine = np.array([data.size], np.int64)
        _Request(self, self.comm.Iallgather(mine, sizes), "all-gather").wait()
        out = np.empty(int(sizes.sum()), np.uint8)
        _Request(self, self.comm.Iallgatherv(data, [out, sizes]), "all-gather").wait()
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        return [pickle.loads(out[offsets[r]:offsets[r + 1]].tobytes())
                for r in range(self.world_size)]

    def close(self) -> None:
        return None  # MPI finalizes at exit (mpi4py's atexit); the world cannot be re-joined
