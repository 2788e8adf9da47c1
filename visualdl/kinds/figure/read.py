"""Figures, reader side: the index keeps the format (plotly JSON or PNG); an entry with
neither is refused (a bad record)."""

from __future__ import annotations

from typing import Any


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    which = msg.WhichOneof("content")
    if which == "png" and msg.png:
        return len(msg.png), {"format": "png"}
    if which == "plotly_json" and msg.plotly_json:
        return len(msg.plotly_json), {"format": "plotly"}
    raise ValueError("figure entry holds neither plotly JSON nor a PNG")
