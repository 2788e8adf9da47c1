"""The one error of distributed training: it names the rank that met the problem.

Why a type of its own: a job of several processes fails in one of them, and the message a
user reads (often on another rank's console, or from ``spawn`` in the parent) must say which
worker and what went wrong -- "rank 1: ...", never a bare gloo stack."""

from __future__ import annotations


class DistributedError(RuntimeError):
    """A fault of a distributed job; ``rank`` is the worker it concerns (None: the job)."""

    def __init__(self, rank: int | None, message: str) -> None:
        self.rank, self.detail = rank, message
        super().__init__(message if rank is None else f"rank {rank}: {message}")

    def __reduce__(self) -> tuple:  # pickled across processes (spawn, Ray) as it was made
        return (DistributedError, (self.rank, self.detail))
