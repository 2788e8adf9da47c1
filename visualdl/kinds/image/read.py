"""Images, reader side: the index keeps the PNG's size and dimensions."""

from __future__ import annotations

from typing import Any


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    return len(msg.png), {"height": msg.height, "width": msg.width, "channels": msg.channels}
