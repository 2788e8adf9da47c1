"""Audio, reader side: the index keeps the WAV's size, rate, channels and frames (an entry
without a WAV or with an impossible rate or channel count is refused: a bad record)."""

from __future__ import annotations

from typing import Any

from visualdl.kinds.consistency import non_negative, positive_int


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    if not msg.wav:
        raise ValueError("audio entry has no WAV bytes")
    positive_int("audio sample rate", msg.sample_rate)
    positive_int("audio channels", msg.channels)
    non_negative("audio frames", msg.frames)
    return len(msg.wav), {"sample_rate": msg.sample_rate, "channels": msg.channels,
                          "frames": msg.frames}
