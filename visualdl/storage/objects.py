"""Files that are read whole, and blobs of other tools' logs, from object storage.

A PyTorch profiler trace (``*.pt.trace.json[.gz]``) and a VisualDL 2.x model graph
(``vdlgraph.*.log``, ``*.pdmodel``) are not record streams: the reader indexes each once,
whole, and reads it again when a view opens it. On a local disk that is ``open``; here it
is the object's bytes, fetched when the listing shows it and kept in the filesystem's
:class:`~visualdl.storage.remote.BlobCache`, so that indexing and the first view of a
trace or graph cost one GET between them, and a page reload none.

Objects are written whole (a PUT is atomic), so an object that does not parse is broken,
not half-written; it is still given the local files' grace (``SETTLE_SECONDS`` after its
last-modified time) in case it is replaced, and is looked at again only when the listing
shows a new size or ETag, or once when that grace ends (from the cache, if still there).

VisualDL 2.x record files are read by range like ours; their blobs (images, audio,
embeddings) are read back with :func:`vdl2_payload`, by the same ranged GETs and cache.
"""

from __future__ import annotations

import io
import os
import time
from typing import Any

from visualdl.storage.remote import ObjectInfo, RangeFile, RemoteFS

__all__ = ["scan_trace", "scan_graph", "whole", "vdl2_payload"]

#: Objects up to this size are fetched in one GET and kept for the view; larger traces
#: are scanned by 32 MB ranges (and fetched again when opened).
WHOLE_LIMIT = 64 << 20
#: Blob records of VisualDL 2.x files: the first GET takes this much after the offset.
BLOB_BLOCK = 64 << 10


class _Stat:
    """``os.stat_result``'s two fields the scanners read, from a listing entry."""

    def __init__(self, info: ObjectInfo) -> None:
        self.st_size = info.size
        self.st_mtime = info.mtime or 0.0


def _due(state: Any, info: ObjectInfo, settle: float) -> bool:
    """Whether to fetch the object now: never looked at in this form (size, ETag), or
    looked at while it did not parse and its grace has ended since. ``state.seen`` holds
    ``(size, etag, waiting)`` of the last look."""
    if tuple(state.seen[:2]) != (info.size, info.etag):
        return True
    return bool(state.seen[2:3] and state.seen[2]) and \
        time.time() - (info.mtime or 0.0) >= settle


def _note(state: Any, info: ObjectInfo, waiting: bool) -> None:
    state.seen = (info.size, info.etag, waiting)


def scan_trace(state: Any) -> Any:
    """:func:`visualdl.sources.torchtrace.scan` of a trace in storage (a reader's
    ``FileState``); None while it is unlisted, unchanged since it was scanned, or not
    settled. Storage errors are raised as ``OSError``."""
    from visualdl.sources import torchtrace

    info = state.remote.listed.get(state.path)
    if info is None or not _due(state, info, torchtrace.SETTLE_SECONDS):
        return None
    try:
        if info.size <= WHOLE_LIMIT:
            f: Any = io.BytesIO(state.remote.read_whole(state.path, info.size))
        else:
            f = RangeFile(state.remote, state.path, 0, info.size)
        found = torchtrace.scan(state.path, fileobj=f, stat=_Stat(info))
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - botocore's and others': reported, retried
        raise OSError(f"{type(exc).__name__}: {exc}") from exc
    _note(state, info, found is None)
    return found


def scan_graph(state: Any) -> Any:
    """:func:`visualdl.sources.vdl2.graph.scan` of a graph file in storage; None as for
    :func:`scan_trace`."""
    from visualdl.sources.vdl2 import graph

    info = state.remote.listed.get(state.path)
    if info is None or not _due(state, info, graph.SETTLE_SECONDS):
        return None
    data = None
    if 0 < info.size <= graph.MAX_SIZE:
        data = _whole(state.remote, state.path, info.size)
    found = graph.scan(state.path, data=data or b"", stat=_Stat(info))
    _note(state, info, found is None)
    return found


def whole(remote: RemoteFS, ref: Any) -> bytes:
    """The bytes of a file indexed whole (its blob ``ref``), from the cache when there."""
    return _whole(remote, ref.path, ref.size)


def _whole(remote: RemoteFS, url: str, size: int) -> bytes:
    try:
        return remote.read_whole(url, size)
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise OSError(f"{type(exc).__name__}: {exc}") from exc


def vdl2_payload(remote: RemoteFS, ref: Any) -> bytes:
    """The payload of a VisualDL 2.x record holding the blob ``ref`` (one or two ranged
    GETs the first time, none once cached)."""
    from visualdl.sources.vdl2.framing import read_payload_at

    def fetch() -> bytes:
        info = remote.listed.get(ref.path)
        size = info.size if info is not None else ref.offset + (1 << 62)
        f = RangeFile(remote, ref.path, ref.offset, size, block=BLOB_BLOCK)
        return read_payload_at(os.path.basename(ref.path), ref.offset, f)

    return remote.cached((ref.path, ref.offset, "vdl2"), fetch)
