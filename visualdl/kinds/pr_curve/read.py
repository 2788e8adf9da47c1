"""PR curves, reader side: x is recall, y is precision."""

from __future__ import annotations

from typing import Any

from visualdl.kinds.curves import CurveEvent, build_event


def build(msg: Any) -> CurveEvent:
    return build_event(msg, msg.recall, msg.precision)
