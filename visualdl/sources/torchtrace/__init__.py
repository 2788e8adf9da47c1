"""PyTorch profiler traces (``*.pt.trace.json`` and ``*.pt.trace.json.gz``) as profiles.

``torch.profiler.tensorboard_trace_handler`` writes ``<worker>.<timestamp>.pt.trace.json``
under a run directory (``.gz`` with ``use_gzip=True``); ``export_chrome_trace`` writes any
name the user gives, and we accept those ending in ``.pt.trace.json[.gz]``. Each file is one
profile of its run: kind ``profile``, tag = the worker name (the file name before the
timestamp), step = the first ``ProfilerStep#N`` in it. The reader indexes a file once it is
complete; its bytes are read again only when a view asks for it (:func:`load`).
"""

from __future__ import annotations

import gzip
import os
import re
import time
import zlib
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, BinaryIO

__all__ = ["TRACE_SUFFIXES", "is_torch_trace_file", "worker_name", "TraceInfo", "scan",
           "load", "LoadedTrace", "SETTLE_SECONDS"]

#: PyTorch's tensorboard_trace_handler names, and vf.profiler.export_chrome_tracing's.
TRACE_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz", ".vf.trace.json", ".vf.trace.json.gz")
#: A file that looks unfinished is indexed anyway once it has not changed for this long, so
#: that a truncated trace shows up with its error instead of never showing up.
SETTLE_SECONDS = 10.0
_STEP = re.compile(rb'"ProfilerStep#(\d+)"')
_TIMESTAMP = re.compile(r"^(.*?)\.(\d+)$")
_CHUNK = 4 << 20


def is_torch_trace_file(name: str) -> bool:
    return name.endswith(TRACE_SUFFIXES) and not name.startswith(".")


def worker_name(name: str) -> str:
    """``worker0.1796054067.pt.trace.json`` -> ``worker0``; a name without the handler's
    timestamp is its own worker (``trace.pt.trace.json`` -> ``trace``)."""
    base = os.path.basename(name)
    for suffix in TRACE_SUFFIXES[::-1]:
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    match = _TIMESTAMP.match(base)
    return (match.group(1) if match else base) or "trace"


@dataclass(frozen=True)
class TraceInfo:
    """What the reader's index keeps of one trace file."""

    tag: str
    step: int
    end_step: int
    wall_time: float
    size: int            # bytes on disk
    complete: bool       # False: truncated or unreadable (``error`` says why)
    error: str = ""


def scan(path: str, now: float | None = None, fileobj: BinaryIO | None = None,
         stat: Any = None) -> TraceInfo | None:
    """Index one trace file without parsing it; None while it still looks unfinished (a
    file being written), unless it has not changed for ``SETTLE_SECONDS``.

    The step range comes from a byte search for ``"ProfilerStep#N"`` (streamed, so a trace
    of hundreds of MB is never held here); completeness from the JSON's last byte, or the
    gzip stream's end. An object in storage is read from ``fileobj``, with ``stat`` (its
    ``st_size`` and ``st_mtime``) from the listing (see :mod:`visualdl.storage.objects`)."""
    st = stat if stat is not None else os.stat(path)
    settled = (time.time() if now is None else now) - st.st_mtime >= SETTLE_SECONDS
    steps: set[int] = set()
    error = ""
    try:
        last = _scan_steps(path, steps, fileobj)
        if not last:
            error = "the trace file is empty"
        elif last not in (b"}", b"]"):
            error = "the trace file ends before its JSON does (truncated, or still being written)"
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        error = f"the trace file is not valid gzip ({exc})"
    if error and not settled:
        return None
    tag = worker_name(path)
    step = min(steps) if steps else 0
    return TraceInfo(tag, step, max(steps) if steps else step, st.st_mtime, st.st_size,
                     not error, error)


def _scan_steps(path: str, steps: set[int], fileobj: BinaryIO | None = None) -> bytes:
    """Collect ProfilerStep numbers; return the last non-blank byte of the JSON text."""
    last = b""
    tail = b""
    with _open(path, fileobj) as f:
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                break
            text = tail + chunk
            # a name cut between two chunks is whole in the overlap (found twice: a set)
            steps.update(int(m.group(1)) for m in _STEP.finditer(text))
            tail = text[-48:]
            stripped = chunk.rstrip()
            if stripped:
                last = stripped[-1:]
    return last


def _open(path: str, fileobj: BinaryIO | None = None):
    if fileobj is not None:
        magic = fileobj.read(2)
        fileobj.seek(0)
        return gzip.GzipFile(fileobj=fileobj) if magic == b"\x1f\x8b" else nullcontext(fileobj)
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


@dataclass(frozen=True)
class LoadedTrace:
    """A trace file's JSON text (decompressed), as :meth:`LogReader.load` hands it out."""

    path: str
    json: bytes
    gzipped: bool
    gz: bytes = b""  # the file's own bytes when gzipped (the download route sends them)


def load(path: str, data: bytes | None = None) -> LoadedTrace:
    """The trace's JSON bytes; ``ValueError`` with a clear message for an empty file or
    bytes that do not decompress. ``data``: the file's bytes, when read already (from
    object storage)."""
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    if not data.strip():
        raise ValueError(f"{os.path.basename(path)}: the trace file is empty")
    gzipped = data[:2] == b"\x1f\x8b"
    gz = data if gzipped else b""
    if gzipped:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"{os.path.basename(path)}: the trace file is not valid gzip "
                             f"({exc})") from None
    return LoadedTrace(path, data, gzipped, gz)
