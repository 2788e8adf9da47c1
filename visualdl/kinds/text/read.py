"""Text, reader side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class TextEvent:
    step: int
    wall_time: float
    text: str


def build(msg: Any) -> TextEvent:
    return TextEvent(msg.step, msg.wall_time, msg.text)
