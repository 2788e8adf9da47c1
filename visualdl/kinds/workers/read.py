"""Workers, reader side: one event per ``Worker`` record (a file's opening one, restart 0,
and each elastic restart)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class WorkerEvent:
    rank: int
    world_size: int
    host: str
    pid: int
    wall_time: float
    restart: int
    step: int

    @property
    def resize(self) -> bool:
        """An elastic restart or resize, not a worker's opening record."""
        return self.restart > 0


def build(msg: Any) -> WorkerEvent:
    if msg.world_size < 1 or not 0 <= msg.rank < msg.world_size:
        raise ValueError(f"rank {msg.rank} of world size {msg.world_size}")
    return WorkerEvent(msg.rank, msg.world_size, msg.host, msg.pid, msg.wall_time,
                       msg.restart, msg.step)
