"""Hyper-parameters, reader side: one event per ``add_hparams`` call; the latest counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class HParamsEvent:
    wall_time: float
    hparams: dict[str, Any]
    metric_tags: tuple[str, ...]


def build(msg: Any) -> HParamsEvent:
    values = {name: getattr(v, v.WhichOneof("value")) for name, v in msg.hparams.items()
              if v.WhichOneof("value")}
    return HParamsEvent(msg.wall_time, values, tuple(msg.metric_tags))
