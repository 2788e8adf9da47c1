"""The communicator on PyTorch's ``torch.distributed``: gloo on CPU (NCCL would serve GPUs).

Why torch.distributed and not a collective of our own: gloo is a maintained, tested ring
all-reduce with TCP rendezvous, timeouts and error reporting, and ``torch.from_numpy`` wraps
our numpy buffers without a copy -- no torch model, no torch tensor math. Ray Train's
TorchTrainer sets up this same process group in each worker, so one implementation serves the
plain multi-process launch (``spawn``) and Ray (docs/distributed.md compares the choices).

torch is imported here only: the core install never needs it.
"""

from __future__ import annotations

import socket
import time
from datetime import timedelta
from typing import Any

import numpy as np

from .errors import DistributedError, peer_lost

_JOINED = "visualdl/joined/"


def _torch() -> Any:
    try:
        import torch
        import torch.distributed as dist
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            "distributed training needs PyTorch's torch.distributed (its gloo collectives): "
            "pip install 'visualdl[distributed]'", name="torch") from exc
    return torch, dist


class _Pending:
    """An asynchronous all-reduce; ``wait`` turns a gloo failure into a DistributedError."""

    def __init__(self, comm: TorchCommunicator, work: Any) -> None:
        self.comm, self.work = comm, work

    def wait(self) -> None:
        try:
            self.work.wait()
        except RuntimeError as exc:
            raise self.comm.failure("all-reduce", exc) from exc


class TorchCommunicator:
    """The ``Communicator`` on the default ``torch.distributed`` process group (set up by
    ``connect`` or by Ray Train). ``timeout_s`` is the group's collective timeout, quoted in
    errors."""

    def __init__(self, timeout_s: float) -> None:
        self.torch, self.dist = _torch()
        if not self.dist.is_initialized():
            raise DistributedError(None, "torch.distributed has no process group: call "
                                         "init_parallel_env() first")
        self.rank = self.dist.get_rank()
        self.world_size = self.dist.get_world_size()
        self.timeout_s = timeout_s
        self.backend = str(self.dist.get_backend())  # "gloo", "nccl" (a trace's distributedInfo)

    def failure(self, what: str, exc: BaseException) -> DistributedError:
        """The error of a failed collective: this rank, the peers, the timeout, gloo's words."""
        return peer_lost(self.rank, self.world_size, what, self.timeout_s, exc)

    def _tensor(self, buffer: np.ndarray) -> Any:
        if not buffer.flags.c_contiguous:
            raise ValueError("communicator buffers must be C-contiguous numpy arrays")
        return self.torch.from_numpy(buffer)  # the same memory: no copy either way

    def allreduce(self, buffer: np.ndarray, async_op: bool = False) -> _Pending | None:
        try:
            work = self.dist.all_reduce(self._tensor(buffer), async_op=async_op)
        except RuntimeError as exc:
            raise self.failure("all-reduce", exc) from exc
        return _Pending(self, work) if async_op else None

    def all_gather(self, buffer: np.ndarray) -> None:
        parts = [self._tensor(part) for part in np.split(buffer, self.world_size)]
        try:  # this rank's part is sent from a copy: gloo writes it into the same place
            self.dist.all_gather(parts, parts[self.rank].clone())
        except RuntimeError as exc:
            raise self.failure("all-gather", exc) from exc

    def broadcast(self, buffer: np.ndarray, src: int = 0) -> None:
        try:
            self.dist.broadcast(self._tensor(buffer), src=src)
        except RuntimeError as exc:
            raise self.failure("broadcast", exc) from exc

    def barrier(self) -> None:
        try:
            self.dist.barrier()
        except RuntimeError as exc:
            raise self.failure("barrier", exc) from exc

    def all_gather_object(self, obj: Any) -> list[Any]:
        out: list[Any] = [None] * self.world_size
        try:
            self.dist.all_gather_object(out, obj)
        except RuntimeError as exc:
            raise self.failure("all-gather", exc) from exc
        return out

    def close(self) -> None:
        if self.dist.is_initialized():
            self.dist.destroy_process_group()


def _reach(host: str, port: int, deadline: float) -> None:
    """Return once ``host:port`` accepts a connection; OSError when the deadline passes."""
    while True:
        try:
            socket.create_connection((host, port), timeout=0.5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def connect(rank: int, world_size: int, host: str, port: int, timeout_s: float,
            backend: str = "gloo") -> TorchCommunicator:
    """Rendezvous at ``host:port`` (rank 0 serves it) and set up the process group.

    Each rank first checks in under its own key of the TCP store and waits for the others,
    so a rank that never comes gives an error that names it (rather than gloo's "timed out"),
    and every rank gives up after ``timeout_s``: none is left waiting."""
    _, dist = _torch()
    timeout = timedelta(seconds=timeout_s)
    deadline = time.monotonic() + timeout_s  # one for reaching rank 0 and the others joining
    try:
        if rank != 0:  # torch's own retries overrun the timeout (5 s for 2): reach it first
            _reach(host, port, deadline)
        store = dist.TCPStore(host, port, world_size, is_master=rank == 0, timeout=timeout,
                              wait_for_workers=False)
    except (RuntimeError, OSError) as exc:
        if rank == 0:
            raise DistributedError(rank, f"cannot serve the rendezvous at {host}:{port}: {exc}") from exc
        raise DistributedError(rank, f"could not reach rank 0's rendezvous at {host}:{port} "
                                     f"within {timeout_s:g} s: {exc}") from exc
    try:
        store.set(f"{_JOINED}{rank}", socket.gethostname())
        missing = list(range(world_size))
        while True:
            missing = [r for r in missing if not store.check([f"{_JOINED}{r}"])]
            if not missing:
                break
            if time.monotonic() > deadline:
                raise DistributedError(
                    rank, f"rank {', '.join(map(str, missing))} of {world_size} did not join the "
                          f"rendezvous at {host}:{port} within {timeout_s:g} s")
            time.sleep(0.02)
        dist.init_process_group(backend, store=store, rank=rank, world_size=world_size,
                                timeout=timeout)
    except DistributedError:
        raise
    except (RuntimeError, OSError) as exc:  # the store's server (rank 0) went away meanwhile
        raise DistributedError(rank, f"lost the rendezvous at {host}:{port}: {exc}") from exc
    return TorchCommunicator(timeout_s)
