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


#: The words of every "a peer is gone" failure: ``spawn`` tells the rank that started a
#: failure from the ranks that only lost their peers by them.
LOST_PEER = "left or did not answer"


def peer_lost(rank: int, world_size: int, what: str, timeout_s: float,
              why: object) -> DistributedError:
    """The error of a collective that did not complete: this rank, its peers, the timeout,
    the library's own words (``why``) -- the same whichever library it was."""
    peers = ", ".join(str(r) for r in range(world_size) if r != rank)
    return DistributedError(rank, f"{what} failed: a peer (rank {peers}) {LOST_PEER} within "
                                  f"the {timeout_s:g} s timeout ({why})")
