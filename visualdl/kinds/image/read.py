"""Images, reader side: the index keeps the PNG's size and dimensions and the number of
boxes over it (an entry without pixels, with impossible dimensions or with boxes whose
fields disagree is refused: a bad record)."""

from __future__ import annotations

from typing import Any

from visualdl.kinds.consistency import positive_int
from visualdl.kinds.image.boxes import box_count, load_boxes

__all__ = ["meta", "load_boxes"]


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    if not msg.png:
        raise ValueError("image entry has no PNG bytes")
    positive_int("image height", msg.height)
    positive_int("image width", msg.width)
    if msg.channels not in (1, 3, 4):
        raise ValueError(f"image has {msg.channels} channels, not 1, 3 or 4")
    meta = {"height": msg.height, "width": msg.width, "channels": msg.channels}
    boxes = box_count(msg)
    if boxes:  # kept only where there are boxes: most images have none
        meta["box_count"] = boxes
    return len(msg.png), meta
