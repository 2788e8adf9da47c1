"""Videos, reader side: the index keeps the file's size, type, dimensions, frames and rate
(an entry without bytes or with impossible dimensions is refused: a bad record)."""

from __future__ import annotations

from typing import Any

from visualdl.kinds.consistency import non_negative, positive_int

MIMES = ("video/mp4", "video/webm", "image/gif")


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    if not msg.data:
        raise ValueError("video entry has no bytes")
    if msg.mime not in MIMES:
        raise ValueError(f"video has type {msg.mime!r}, not one of {', '.join(MIMES)}")
    positive_int("video height", msg.height)
    positive_int("video width", msg.width)
    non_negative("video frames", msg.frames)
    non_negative("video fps", msg.fps)
    return len(msg.data), {"height": msg.height, "width": msg.width, "frames": msg.frames,
                           "fps": msg.fps, "mime": msg.mime}
