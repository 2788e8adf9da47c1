"""Configs, reader side: one event per ``add_config`` call, in time order."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ConfigEvent:
    wall_time: float
    config: dict[str, Any]

    @property
    def step(self) -> int:
        """A config belongs to the run, not to a step (0, as for every step-less entry)."""
        return 0


def build(msg: Any) -> ConfigEvent:
    config = json.loads(msg.json)
    if not isinstance(config, dict):
        raise ValueError("a config entry must hold a JSON object")
    return ConfigEvent(msg.wall_time, config)
