"""PyTorch profiler traces (``*.pt.trace.json`` and ``*.pt.trace.json.gz``) as profiles.

``torch.profiler.tensorboard_trace_handler`` writes ``<worker>.<timestamp>.pt.trace.json``
under a run directory (``.gz`` with ``use_gzip=True``); ``export_chrome_trace`` writes any
name the user gives, and we accept those ending in ``.pt.trace.json[.gz]``. Other tools
name traces ``rank-0.json.gz`` or ``trace.json`` (Holistic Trace Analysis, kineto's
samples): a ``*.json[.gz]`` file is one when its first bytes say so (see
:mod:`~visualdl.sources.torchtrace.sniff`; the others are not listed at all). Each file is one
profile of its run: kind ``profile``, tag = the worker name (the file name before the
timestamp), step = the first ``ProfilerStep#N`` in it. The reader indexes a file once it is
complete; its bytes are read again only when a view asks for it (:func:`load`).

A gzip'd trace is inflated as a stream, and only so far: JSON traces compress far less than
a decompression bomb does (docs/http_api.md has figures). One that inflates past
:func:`inflate_limit` (``MAX_RATIO`` times its compressed size, at least ``MIN_LIMIT``) is
refused as it is found, by the index (so it costs the first load no more than that) and by
:func:`load`, with a message that says so. The file's own bytes are kept as read: the
download route sends them without inflating anything.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from typing import Any, BinaryIO

from visualdl.sources.base import Source, WholeFile
from visualdl.sources.torchtrace.sniff import PEEK, looks_like_trace
from visualdl.sources.values import BlobRef

__all__ = ["SOURCE", "TraceSource", "TRACE_SUFFIXES", "worker_name", "load", "LoadedTrace",
           "SETTLE_SECONDS", "MAX_RATIO", "MIN_LIMIT", "TooBig", "inflate_limit", "gunzip",
           "CONTENT_SUFFIXES"]

#: PyTorch's tensorboard_trace_handler names, and vf.profiler.export_chrome_tracing's.
TRACE_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz", ".vf.trace.json", ".vf.trace.json.gz")
#: Names other tools give traces, shared with other JSON: traces only by their content.
CONTENT_SUFFIXES = (".json", ".json.gz")
_CLAIMED = TRACE_SUFFIXES + CONTENT_SUFFIXES
#: A file that looks unfinished is indexed anyway once it has not changed for this long, so
#: that a truncated trace shows up with its error instead of never showing up.
SETTLE_SECONDS = 10.0
_STEP = re.compile(rb'"ProfilerStep#(\d{1,18})"')  # (more digits: not a step an int64 holds)
_TIMESTAMP = re.compile(r"^(.*?)\.(\d+)$")
_CHUNK = 4 << 20
_GZIP_MAGIC = b"\x1f\x8b"
#: A gzip'd trace may inflate to this many times its compressed size...
MAX_RATIO = 100
#: ...or to this many bytes, whichever is more.
MIN_LIMIT = 64 << 20


class TooBig(ValueError):
    """A gzip'd trace that inflates past :func:`inflate_limit` (the message says so)."""


def inflate_limit(compressed: int) -> int:
    """The most bytes of JSON a gzip'd trace of ``compressed`` bytes may inflate to."""
    return max(MIN_LIMIT, MAX_RATIO * compressed)


def _too_big(compressed: int) -> TooBig:
    return TooBig(f"the trace inflates to more than {inflate_limit(compressed):,} bytes "
                  f"({MAX_RATIO} times its {compressed:,} gzip'd bytes, at least "
                  f"{MIN_LIMIT >> 20} MiB): refused as a likely decompression bomb")


def gunzip(data: bytes) -> bytes:
    """``data`` inflated (every gzip member), a chunk at a time and never past
    :func:`inflate_limit` of its size: raises :class:`TooBig` there, having held no more
    than that; ``EOFError``/``zlib.error`` for bytes that are not (whole) gzip."""
    limit = inflate_limit(len(data))
    parts: list[bytes] = []
    size = 0
    rest = data
    while True:
        member = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pending = rest
        while not member.eof:
            chunk = member.decompress(pending, _CHUNK)
            size += len(chunk)
            if size > limit:
                raise _too_big(len(data))
            parts.append(chunk)
            pending = member.unconsumed_tail
            if not chunk and not pending and not member.eof:
                raise EOFError("the gzip stream ends before its end-of-stream marker")
        rest = member.unused_data
        if not rest.strip(b"\0"):  # (zeros after the last member: padding, as gzip allows)
            return b"".join(parts)


def worker_name(name: str) -> str:
    """``worker0.1796054067.pt.trace.json`` -> ``worker0``; a name without the handler's
    timestamp is its own worker (``trace.pt.trace.json`` -> ``trace``, ``rank-0.json.gz``
    -> ``rank-0``)."""
    base = os.path.basename(name)
    for suffix in TRACE_SUFFIXES[::-1] + CONTENT_SUFFIXES[::-1]:
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    match = _TIMESTAMP.match(base)
    return (match.group(1) if match else base) or "trace"


class TraceSource(Source):
    name = "torchtrace"
    label = "PyTorch profiler trace"
    whole = True
    head_bytes = PEEK

    def claims(self, name: str) -> bool:
        return name.endswith(_CLAIMED)

    def tentative(self, name: str) -> bool:
        return not name.endswith(TRACE_SUFFIXES)

    def accepts(self, head: bytes) -> bool | str | None:
        return looks_like_trace(head, self.head_bytes)

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
        final = False  # an error that more bytes cannot undo
        try:
            last = _scan_steps(stream, steps, inflate_limit(stat.size))
            if not last:
                error = "the trace file is empty"
            elif last not in (b"}", b"]"):
                error = ("the trace file ends before its JSON does (truncated, or still being "
                         "written)")
        except TooBig:
            error, final = str(_too_big(stat.size)), True
        except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
            error = f"the trace file is not valid gzip ({exc})"
        if error and not settled and not final:
            return None
        step = min(steps) if steps else 0
        meta = {"end_step": max(steps) if steps else step, "source": "pytorch", "error": error}
        ref = BlobRef("profile", worker_name(self.path), step, stat.mtime, stat.size, self.path,
                      0, meta, self.source.name)
        return ref, error

    def load(self, file: Any, ref: Any, field: str) -> "LoadedTrace":
        return load(self.path, file.whole(ref.size))


def _scan_steps(stream: BinaryIO, steps: set[int], limit: int) -> bytes:
    """Collect ProfilerStep numbers; return the last non-blank byte of the JSON text.
    Raises :class:`TooBig` once a gzip'd stream inflates past ``limit`` bytes."""
    last = b""
    tail = b""
    magic = stream.read(2)
    stream.seek(-len(magic), 1)
    gzipped = magic == _GZIP_MAGIC
    f: Any = gzip.GzipFile(fileobj=stream) if gzipped else stream
    seen = 0
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        seen += len(chunk)
        if gzipped and seen > limit:
            raise TooBig()
        text = tail + chunk
        # a name cut between two chunks is whole in the overlap (found twice: a set)
        steps.update(int(m.group(1)) for m in _STEP.finditer(text))
        tail = text[-48:]
        stripped = chunk.rstrip()
        if stripped:
            last = stripped[-1:]
    return last


class LoadedTrace:
    """A trace file as :meth:`LogReader.load` hands it out: its bytes as read (``data``),
    and its JSON text (``json``), inflated on first use when gzip'd (bounded: see
    :func:`gunzip`; ``ValueError`` with a clear message when it does not inflate)."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data
        self.gzipped = data[:2] == _GZIP_MAGIC
        self._json: bytes | None = None if self.gzipped else data

    @property
    def gz(self) -> bytes:
        """The file's own bytes when gzipped (the download route sends them), else b""."""
        return self.data if self.gzipped else b""

    @property
    def json(self) -> bytes:
        if self._json is None:
            try:
                self._json = gunzip(self.data)
            except TooBig as exc:
                raise ValueError(f"{os.path.basename(self.path)}: {exc}") from None
            except (OSError, EOFError, zlib.error) as exc:
                raise ValueError(f"{os.path.basename(self.path)}: the trace file is not "
                                 f"valid gzip ({exc})") from None
        return self._json


def load(path: str, data: bytes | None = None) -> LoadedTrace:
    """The trace file's bytes (its JSON inflated when asked for: ``.json``); ``ValueError``
    with a clear message for an empty file. ``data``: the file's bytes, when read already
    (from object storage)."""
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    if not data or data.isspace():
        raise ValueError(f"{os.path.basename(path)}: the trace file is empty")
    return LoadedTrace(path, data)


SOURCE = TraceSource()
