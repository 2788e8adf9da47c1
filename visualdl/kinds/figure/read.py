"""Figures, reader side: the index keeps the format (plotly JSON or PNG)."""

from __future__ import annotations

from typing import Any


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    if msg.WhichOneof("content") == "png":
        return len(msg.png), {"format": "png"}
    return len(msg.plotly_json), {"format": "plotly"}
