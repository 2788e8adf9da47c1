"""One profile's trace model, built where it costs the server least: read back from the disk
cache when a server saved it before (:mod:`visualdl.kinds.profile.store`), else parsed in a
process of its own when the trace is big (:mod:`visualdl.kinds.profile.runner`: the server
stays responsive meanwhile), else parsed here."""

from __future__ import annotations

import mmap
import zlib
from dataclasses import dataclass
from typing import Any, Callable

from visualdl.kinds.profile import runner, store
from visualdl.kinds.profile.model import TraceModel
from visualdl.kinds.profile.parse import TraceError, parse_trace
from visualdl.sources import torchtrace

__all__ = ["Source", "source", "build_model", "parse_model", "give_back_memory"]

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Source:
    """Where a profile's trace is, and what its saved model must match."""

    ident: dict[str, Any] | None  # see store.identity (None: nothing is read or saved)
    path: str | None = None       # a local trace file of its own (PyTorch's)...
    data: bytes | None = None     # ...or the trace's bytes (JSON, or gzip'd JSON)
    kind: str = "pytorch"         # the model's source: "pytorch" or "visualdl"


def source(ref: Any, load_blob: Callable[[Any], Any]) -> Source:
    """The :class:`Source` of a profile ``BlobRef``: a local trace file stays where it is
    (keyed by its stat); any other profile is loaded with ``load_blob(ref)``: a record
    file's is small (gzip'd, keyed by its hash), a trace file in object storage is not
    keyed (nothing of it is saved)."""
    if ref.source == "torchtrace":
        ident = store.identity(ref.path, ref.offset, ref.tag, ref.step)
        if ident is not None:
            return Source(ident, ref.path)
        return Source(None, data=load_blob(ref).json)
    stored = load_blob(ref).trace_gz
    return Source(store.identity(ref.path, ref.offset, ref.tag, ref.step, blob=lambda: stored),
                  data=stored, kind="visualdl")


def build_model(source: Source) -> TraceModel:
    """The model of ``source``: saved, else built by the runner (a big trace), else parsed
    here (and saved when big). Raises :class:`TraceError` for a trace that cannot be read.
    Takes as long as the parse: call it off the request threads."""
    model = store.read(source.ident)
    if model is not None:
        return model
    if runner.worth(source):
        model = runner.run(source)
        if model is not None:
            store.prune()  # (as store.write does: here, where the cache folder is known)
            return model
    try:
        model = parse_model(source)
    finally:
        give_back_memory()  # (the parse's garbage, in the server's process)
    store.write(source.ident, model)
    return model


def parse_model(source: Source) -> TraceModel:
    """The trace parsed and its model built, in this process."""
    return TraceModel(parse_trace(_raw(source)), source.kind)


def _raw(source: Source) -> bytes | mmap.mmap:
    """The trace's JSON: a plain trace file mapped into memory (parsed without reading a
    copy of it first), else its bytes, inflated when gzip'd (never past
    :func:`visualdl.sources.torchtrace.inflate_limit`: a :class:`TraceError` there)."""
    if source.path is not None:
        mapped = _mapped(source.path)
        if mapped is not None:
            return mapped
        try:
            return torchtrace.load(source.path).json
        except OSError as exc:
            raise TraceError(f"the trace file cannot be read ({exc})") from None
        except ValueError as exc:  # empty, or bad gzip: the loader says which
            raise TraceError(str(exc)) from None
    data = source.data or b""
    if data[:2] != _GZIP_MAGIC:
        return data
    try:
        return torchtrace.gunzip(data)  # (bounded: a bomb is refused as it inflates)
    except torchtrace.TooBig as exc:
        raise TraceError(str(exc)) from None
    except (OSError, EOFError, zlib.error) as exc:
        raise TraceError(f"the stored trace is not valid gzip ({exc})") from None


def _mapped(path: str) -> mmap.mmap | None:
    """A plain (not gzip'd, not empty) trace file mapped into memory; None otherwise."""
    try:
        with open(path, "rb") as f:
            if f.read(2) in (b"", _GZIP_MAGIC):
                return None
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


def give_back_memory() -> None:
    """Parsing a big trace frees many small objects; glibc keeps them in its arenas unless
    asked, and the process's RSS would stay at its peak."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass
