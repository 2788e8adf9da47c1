"""Model graphs, reader side: the index keeps the ONNX size."""

from __future__ import annotations

from typing import Any


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    return len(msg.onnx), {}
