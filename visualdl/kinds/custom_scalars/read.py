"""Combined charts, reader side: one event per ``add_scalars`` key set or
``add_custom_scalars`` call, in time order (the run's last layout wins)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CustomScalarsEvent:
    wall_time: float
    main_tag: str = ""                  # an add_scalars chart: its title...
    series: tuple[str, ...] = ()        # ... the scalar tags of its lines ...
    keys: tuple[str, ...] = ()          # ... and their names
    layout: dict[str, dict[str, list]] | None = None  # a custom layout

    @property
    def step(self) -> int:
        """Charts belong to the run, not to a step (0, as for every step-less entry)."""
        return 0

    @property
    def is_layout(self) -> bool:
        return self.layout is not None


def build(msg: Any) -> CustomScalarsEvent:
    if msg.layout_json:
        # Checked the way the writer checks it, so a hand-made or damaged entry is refused
        # here (with its reason) rather than in the browser.
        from visualdl.kinds.custom_scalars.write import normalize_layout

        return CustomScalarsEvent(msg.wall_time, layout=normalize_layout(json.loads(msg.layout_json)))
    if not msg.main_tag or len(msg.series) != len(msg.keys):
        raise ValueError("an add_scalars chart needs a main tag and one key per series")
    return CustomScalarsEvent(msg.wall_time, msg.main_tag, tuple(msg.series), tuple(msg.keys))
