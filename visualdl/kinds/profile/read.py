"""Profiles, reader side: the index keeps the profiled step range; the trace itself is
loaded (and decompressed) on demand."""

from __future__ import annotations

from typing import Any


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    if not msg.trace_gz:
        raise ValueError("profile entry holds no trace")
    return len(msg.trace_gz), {"end_step": max(msg.end_step, msg.step), "source": "visualdl",
                               "error": ""}
