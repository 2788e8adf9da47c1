"""Checkpoints, reader side: one event per checkpoint saved."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CheckpointEvent:
    path: str
    step: int
    wall_time: float
    rank: int


def build(msg: Any) -> CheckpointEvent:
    return CheckpointEvent(msg.path, msg.step, msg.wall_time, msg.rank)
