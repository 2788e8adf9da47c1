"""``vf.save`` / ``vf.load``: nested dicts/lists of tensors, arrays and plain values in one
``.npz`` file with a JSON manifest. Loading never unpickles, so a checkpoint cannot run code."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from .tensor import Tensor

_FORMAT = "visualdl.framework/1"


def _encode(obj: Any, arrays: dict[str, np.ndarray]) -> Any:
    if isinstance(obj, Tensor):
        key = f"a{len(arrays)}"
        arrays[key] = obj.numpy()
        return {"__tensor__": key}
    if isinstance(obj, np.ndarray):
        key = f"a{len(arrays)}"
        arrays[key] = obj
        return {"__ndarray__": key}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        if not all(isinstance(k, str) for k in obj):
            raise TypeError("vf.save: dict keys must be strings")
        return {"__dict__": [[k, _encode(v, arrays)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return {"__tuple__" if isinstance(obj, tuple) else "__list__":
                [_encode(v, arrays) for v in obj]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"vf.save cannot store {type(obj).__name__}")


def _decode(node: Any, arrays: Any) -> Any:
    if isinstance(node, dict):
        if "__tensor__" in node:
            return Tensor(arrays[node["__tensor__"]])
        if "__ndarray__" in node:
            return np.array(arrays[node["__ndarray__"]])
        if "__dict__" in node:
            return {k: _decode(v, arrays) for k, v in node["__dict__"]}
        if "__tuple__" in node:
            return tuple(_decode(v, arrays) for v in node["__tuple__"])
        if "__list__" in node:
            return [_decode(v, arrays) for v in node["__list__"]]
    return node


def save(obj: Any, path: str | os.PathLike) -> None:
    """Write ``obj`` (e.g. ``layer.state_dict()``) to ``path`` atomically."""
    arrays: dict[str, np.ndarray] = {}
    manifest = json.dumps({"format": _FORMAT, "root": _encode(obj, arrays)})
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        np.savez(f, __manifest__=np.frombuffer(manifest.encode(), np.uint8), **arrays)
    os.replace(tmp, path)


def load(path: str | os.PathLike) -> Any:
    """Read what ``save`` wrote; tensors come back on the CPU."""
    with np.load(os.fspath(path), allow_pickle=False) as z:
        manifest = json.loads(bytes(z["__manifest__"]).decode())
        if manifest.get("format") != _FORMAT:
            raise ValueError(f"{path}: not a visualdl.framework checkpoint")
        return _decode(manifest["root"], z)
