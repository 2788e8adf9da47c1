"""Model graphs, reader side: the index keeps the ONNX size (an empty one is refused)."""

from __future__ import annotations

from typing import Any


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    if not msg.onnx:
        raise ValueError("graph entry has no ONNX bytes")
    return len(msg.onnx), {}
