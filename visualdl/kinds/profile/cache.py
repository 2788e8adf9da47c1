"""Loaded traces, kept per app in a small LRU (a million-event trace is tens of MB of
columns): parsed once however many views and requests ask for it at the same time."""

from __future__ import annotations

import gzip
import threading
import zlib
from collections import OrderedDict
from typing import Any, Callable

from visualdl.kinds.profile.model import TraceModel
from visualdl.kinds.profile.parse import TraceError, parse_trace

__all__ = ["TraceCache", "trace_bytes", "build_model", "give_back_memory"]

#: Loaded traces kept per server (by default); each costs about 60 bytes per event.
CAPACITY = 4


class TraceCache:
    """``get(key, load)``: the model (or the error) for ``key``; ``load()`` runs once."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._items: OrderedDict[Any, TraceModel | TraceError] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[Any, threading.Lock] = {}

    def get(self, key: Any, load: Callable[[], TraceModel]) -> TraceModel:
        with self._lock:
            found = self._hit(key)
            if found is None:
                gate = self._loading.setdefault(key, threading.Lock())
        if found is None:
            with gate:  # one loader per key; the others wait for it and read its result
                with self._lock:
                    found = self._hit(key)
                if found is None:
                    try:
                        found = load()
                    except TraceError as err:
                        found = err
                    with self._lock:
                        self._items[key] = found
                        self._loading.pop(key, None)
                        while len(self._items) > self.capacity:
                            self._items.popitem(last=False)
        if isinstance(found, TraceError):
            raise found
        return found

    def _hit(self, key: Any) -> TraceModel | TraceError | None:
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
        return found


def trace_bytes(blob: Any) -> tuple[bytes, str]:
    """The JSON text of a loaded profile blob and where it came from: a PyTorch trace file
    (:class:`visualdl.sources.torchtrace.LoadedTrace`) or our ``Profile`` record."""
    if hasattr(blob, "json"):
        return blob.json, "pytorch"
    try:
        return gzip.decompress(blob.trace_gz), "visualdl"
    except (OSError, EOFError, zlib.error) as exc:
        raise TraceError(f"the stored trace is not valid gzip ({exc})") from None


def build_model(blob: Any) -> TraceModel:
    raw, source = trace_bytes(blob)
    try:
        return TraceModel(parse_trace(raw), source)
    finally:
        del raw, blob
        give_back_memory()


def give_back_memory() -> None:
    """Parsing a big trace frees hundreds of MB of small objects; glibc keeps them in its
    arenas unless asked, and the server's RSS would stay at its peak."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass
