"""A run's workers summed up from its ``Worker`` events: one line per rank, the elastic
restarts and resizes (each once, however many ranks recorded it), the world size now (the
latest restart's, else the largest its workers started with) and the restart count, as the
API and the run table show them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from visualdl.kinds.workers.read import WorkerEvent

__all__ = ["Workers", "summarize"]


@dataclass(frozen=True)
class Workers:
    ranks: list[dict[str, Any]]      # one per rank: its latest opening record
    resizes: list[dict[str, Any]]    # one per restart number, in restart order
    world_size: int | None           # the group's size now
    restarts: int

    def as_json(self) -> dict[str, Any]:
        return {"ranks": self.ranks, "resizes": self.resizes,
                "world_size": self.world_size, "restarts": self.restarts}


def summarize(events: list[WorkerEvent]) -> Workers:
    """``events`` in time order (as a reader hands them out)."""
    ranks: dict[int, WorkerEvent] = {}
    resizes: dict[int, WorkerEvent] = {}
    for event in events:
        if event.resize:
            # every rank may record the same restart: rank 0's (else the first) stands
            kept = resizes.get(event.restart)
            if kept is None or (event.rank == 0 and kept.rank != 0):
                resizes[event.restart] = event
        else:
            ranks[event.rank] = event  # a later file of the rank (a restart) wins
    # the latest resize says what the group is now; without one, the workers say it
    if resizes:
        world_size: int | None = resizes[max(resizes)].world_size
    else:
        world_size = max((e.world_size for e in ranks.values()), default=None)
    return Workers(
        ranks=[{"rank": e.rank, "world_size": e.world_size, "host": e.host, "pid": e.pid,
                "wall_time": e.wall_time} for _, e in sorted(ranks.items())],
        resizes=[{"restart": e.restart, "step": e.step, "world_size": e.world_size,
                  "wall_time": e.wall_time, "rank": e.rank}
                 for _, e in sorted(resizes.items())],
        world_size=world_size,
        restarts=max(resizes, default=0),
    )
