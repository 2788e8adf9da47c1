"""Profiles, writer side: a Chrome trace (a dict, JSON text or bytes, gzip bytes, or the
path of a ``.json``/``.json.gz`` file) stored gzip-compressed, as profilers write it.

The trace is serialized and compressed in the caller's thread: a profiler hands over a
finished trace, and a dict may be reused by the caller afterwards.
"""

from __future__ import annotations

import gzip
import json
import os
from typing import Any

from visualdl.kinds.checks import check_size

_GZIP_MAGIC = b"\x1f\x8b"


def check(tag: str, trace: Any, end_step: int | None = None) -> tuple[tuple[bytes, int | None], int]:
    """``((gzip bytes, end_step), size)``; the JSON must be an object or a list of events."""
    data = _gzip_bytes(tag, trace)
    check_size(tag, "the profile trace", len(data))
    if end_step is not None and (isinstance(end_step, bool) or not isinstance(end_step, int)):
        raise TypeError(f"{tag!r}: end_step must be an int, got {type(end_step).__name__}")
    return (data, end_step), len(data)


def _gzip_bytes(tag: str, trace: Any) -> bytes:
    if isinstance(trace, (str, os.PathLike)) and not _looks_like_json(trace):
        path = os.fspath(trace)
        if not os.path.isfile(path):
            raise ValueError(f"{tag!r}: trace {path!r} is neither JSON text nor a file")
        with open(path, "rb") as f:
            trace = f.read()
    if isinstance(trace, (bytes, bytearray, memoryview)):
        raw = bytes(trace)
        if raw[:2] == _GZIP_MAGIC:
            return raw
        _check_json(tag, raw)
        return gzip.compress(raw, compresslevel=6)
    if isinstance(trace, str):
        raw = trace.encode("utf-8")
        _check_json(tag, raw)
        return gzip.compress(raw, compresslevel=6)
    if isinstance(trace, (dict, list)):
        return gzip.compress(json.dumps(trace, separators=(",", ":")).encode("utf-8"),
                             compresslevel=6)
    raise TypeError(f"{tag!r}: trace must be a dict, JSON str/bytes, gzip bytes or a path, "
                    f"got {type(trace).__name__}")


def _looks_like_json(text: Any) -> bool:
    return isinstance(text, str) and text.lstrip()[:1] in ("{", "[")


def _check_json(tag: str, raw: bytes) -> None:
    head = raw.lstrip()[:1]
    if head not in (b"{", b"["):
        raise ValueError(f"{tag!r}: the trace is not a JSON object or array")


def encode(msg: Any, payload: tuple[bytes, int | None]) -> None:
    data, end_step = payload
    msg.trace_gz = data
    msg.end_step = msg.step if end_step is None else end_step
