"""Model graphs, writer side: ONNX bytes, from whatever the caller has.

The writer imports no framework: a framework model comes as any object with a
``to_onnx()`` method (``visualdl.framework`` layers have one), called here with
``input_spec`` when one is given.
"""

from __future__ import annotations

import os
from typing import Any

from visualdl.kinds.checks import check_size


def check(tag: str, model: Any, input_spec: Any = None) -> tuple[Any, int]:
    """ONNX bytes (a path's file is read here) and their size."""
    if hasattr(model, "to_onnx") and not hasattr(model, "SerializeToString"):
        try:
            model = model.to_onnx() if input_spec is None else model.to_onnx(input_spec)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{tag!r}: {type(model).__name__}.to_onnx() failed: {exc}") from exc
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        if not data:
            raise ValueError(f"{tag!r}: model bytes are empty")
        check_size(tag, "the ONNX model", len(data))
        return data, len(data)
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.isfile(path):
            raise ValueError(f"{tag!r}: model file {path!r} does not exist")
        check_size(tag, f"model file {path!r}", os.path.getsize(path))
        with open(path, "rb") as f:  # now: a file changed or removed later is not lost
            data = f.read()
        if not data:
            raise ValueError(f"{tag!r}: model file {path!r} is empty")
        return data, len(data)
    if hasattr(model, "SerializeToString"):
        data = model.SerializeToString()  # a snapshot: the proto is mutable
        check_size(tag, "the ONNX model", len(data))
        return data, len(data)
    raise TypeError(
        f"{tag!r}: model must be an onnx.ModelProto, ONNX bytes, a path to a .onnx file or "
        f"an object with a to_onnx() method, got {type(model).__name__}"
    )


def encode(msg: Any, payload: bytes) -> None:
    msg.onnx = payload
