"""Audio, reader side: the index keeps the WAV's size, rate, channels and frames."""

from __future__ import annotations

from typing import Any


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    return len(msg.wav), {"sample_rate": msg.sample_rate, "channels": msg.channels,
                          "frames": msg.frames}
