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
import zlib
from dataclasses import dataclass
from typing import Any, BinaryIO

from visualdl.sources.base import Source, WholeFile
from visualdl.sources.values import BlobRef

__all__ = ["SOURCE", "TraceSource", "TRACE_SUFFIXES", "worker_name", "load", "LoadedTrace",
           "SETTLE_SECONDS"]

#: PyTorch's tensorboard_trace_handler names, and vf.profiler.export_chrome_tracing's.
TRACE_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz", ".vf.trace.json", ".vf.trace.json.gz")
#: A file that looks unfinished is indexed anyway once it has not changed for this long, so
#: that a truncated trace shows up with its error instead of never showing up.
SETTLE_SECONDS = 10.0
_STEP = re.compile(rb'"ProfilerStep#(\d{1,18})"')  # (more digits: not a step an int64 holds)
_TIMESTAMP = re.compile(r"^(.*?)\.(\d+)$")
_CHUNK = 4 << 20


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


class TraceSource(Source):
    name = "torchtrace"
    label = "PyTorch profiler trace"
    whole = True

    def claims(self, name: str) -> bool:
        return name.endswith(TRACE_SUFFIXES)

    def open(self, path: str) -> "TraceFile":
        return TraceFile(self, path)


class TraceFile(WholeFile):
    """One trace file: a ``profile`` blob of its run, its bytes read again when a view opens
    it. A broken trace is not counted as an error of the logdir: the profiler says why."""

    count_errors = False

    @property
    def settle(self) -> float:  # type: ignore[override]
        return SETTLE_SECONDS

    def index(self, stream: BinaryIO, stat: Any, settled: bool) -> tuple[Any, str] | None:
        """The step range comes from a byte search for ``"ProfilerStep#N"`` (streamed, so a
        trace of hundreds of MB is never held here); completeness from the JSON's last
        byte, or the gzip stream's end."""
        steps: set[int] = set()
        error = ""
        try:
            last = _scan_steps(stream, steps)
            if not last:
                error = "the trace file is empty"
            elif last not in (b"}", b"]"):
                error = ("the trace file ends before its JSON does (truncated, or still being "
                         "written)")
        except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
            error = f"the trace file is not valid gzip ({exc})"
        if error and not settled:
            return None
        step = min(steps) if steps else 0
        meta = {"end_step": max(steps) if steps else step, "source": "pytorch", "error": error}
        ref = BlobRef("profile", worker_name(self.path), step, stat.mtime, stat.size, self.path,
                      0, meta, self.source.name)
        return ref, error

    def load(self, file: Any, ref: Any, field: str) -> "LoadedTrace":
        return load(self.path, file.whole(ref.size))


def _scan_steps(stream: BinaryIO, steps: set[int]) -> bytes:
    """Collect ProfilerStep numbers; return the last non-blank byte of the JSON text."""
    last = b""
    tail = b""
    magic = stream.read(2)
    stream.seek(-len(magic), 1)
    f: Any = gzip.GzipFile(fileobj=stream) if magic == b"\x1f\x8b" else stream
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


SOURCE = TraceSource()
