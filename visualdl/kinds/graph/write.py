"""Model graphs, writer side: ONNX bytes, from whatever the caller has.

The writer imports no framework: a framework model comes as any object with a
``to_onnx()`` method (``visualdl.framework`` layers have one), called here with
``input_spec`` when one is given.
"""

from __future__ import annotations

import os
from typing import Any


def check(tag: str, model: Any, input_spec: Any = None) -> tuple[Any, int]:
    """ONNX bytes (or a path, read in the writer's thread) and their size."""
    if hasattr(model, "to_onnx") and not hasattr(model, "SerializeToString"):
        try:
            model = model.to_onnx() if input_spec is None else model.to_onnx(input_spec)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{tag!r}: {type(model).__name__}.to_onnx() failed: {exc}") from exc
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        if not data:
            raise ValueError(f"{tag!r}: model bytes are empty")
        return data, len(data)
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.isfile(path):
            raise ValueError(f"{tag!r}: model file {path!r} does not exist")
        return path, 0
    if hasattr(model, "SerializeToString"):
        data = model.SerializeToString()  # a snapshot: the proto is mutable
        return data, len(data)
    raise TypeError(
        f"{tag!r}: model must be an onnx.ModelProto, ONNX bytes, a path to a .onnx file or "
        f"an object with a to_onnx() method, got {type(model).__name__}"
    )


def encode(msg: Any, payload: Any) -> None:
    if isinstance(payload, bytes):
        msg.onnx = payload
    else:  # a path, read here rather than in the caller's thread
        with open(payload, "rb") as f:
            msg.onnx = f.read()
