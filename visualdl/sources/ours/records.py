"""Reading one of our record files: framed, CRC-checked records, each a ``Record`` of
entries; records of scalars only are decoded by the scalar codec, without protobuf.

The first record is the file header: a file without one is refused, and so is one written
in a newer major format version than this visualdl reads. A record whose CRC fails is
skipped and counted; a torn tail waits for the next read.
"""

from __future__ import annotations

from typing import Any, BinaryIO, Iterator, Union

from google.protobuf.message import DecodeError

from visualdl.format import framing
from visualdl.format.names import segment_key
from visualdl.format.record_pb2 import Record
from visualdl.format.scalar_codec import CompactSeries, DecodedSeries, decode_scalar_record
from visualdl.format.version import FORMAT_MAJOR
from visualdl.sources import base
from visualdl.sources.base import Chunk, SourceFile
from visualdl.sources.ours.first_pass import Batch, decode_some, entry_spans

__all__ = ["RecordFile", "decode"]

#: What :func:`decode` makes of one record: scalar series decoded with numpy, a protobuf
#: ``Record`` for anything else, or the reason it cannot be decoded.
Decoded = Union[list[DecodedSeries], list[CompactSeries], Record, str]


def decode(payload: memoryview, compact: bool = False) -> Decoded:
    """A record's contents; records of scalars only skip protobuf (see scalar_codec)."""
    series = decode_scalar_record(payload, compact)
    if series is not None:
        return series
    try:
        return Record.FromString(payload)
    except (DecodeError, ValueError, RuntimeError) as exc:
        return str(exc) or type(exc).__name__


class RecordFile(SourceFile):
    """One record file (or one stream of segments in object storage).

    ``compact``: scalar series come as ``CompactSeries`` (what the reader's run store
    keeps), else as plain int64/float64 columns (``visualdl convert``)."""

    compact = False

    def __init__(self, source: Any, path: str) -> None:
        super().__init__(source, path)
        # a segment stream is many objects read one after another: no second pass
        self.two_pass = segment_key(path) is None
        #: after :meth:`first_pass`: the tags of series it left for :meth:`second_pass`
        self.left: frozenset[str] = frozenset()

    # -- one pass ----------------------------------------------------------------------
    def scan(self, stream: BinaryIO, stat: Any) -> Iterator[Chunk]:
        return self._scan(stream, stat.size, None)

    def _scan(self, stream: BinaryIO, size: int, plan: "_FirstPass | None") -> Iterator[Chunk]:
        # scan_file reuses one buffer per file for each chunk: records are decoded into
        # objects of their own (protobuf copies, numpy copies) before the next chunk. Each
        # read starts at the first byte not yet used, so a record cut by the previous read
        # is read again whole (from the page cache) instead of being glued to the next.
        for result in framing.scan_file(stream, self.offset, size, base.READ_CHUNK):
            chunk = Chunk(errors=list(result.errors), end=result.end)
            for offset, payload in result.records:
                record = plan.decode(offset, payload) if plan is not None else \
                    decode(payload, self.compact)
                if plan is not None and isinstance(record, Record) and len(plan.batch) \
                        and any(e.WhichOneof("kind") == "scalars" for e in record.entries):
                    plan.batch.flush()  # its scalars come after those of the batch
                self._take(chunk, offset, record)
                if chunk.refused:
                    yield chunk
                    return
            self.offset = result.end  # a torn tail waits there for the next read
            yield chunk

    def _take(self, chunk: Chunk, offset: int, record: Decoded) -> None:
        """Add one decoded record to ``chunk``; ``record`` is the decode error if any."""
        if isinstance(record, str):
            chunk.errors.append(f"undecodable record at offset {offset}: {record}")
            return
        chunk.records += 1
        if self.header is None:
            if isinstance(record, list) or not record.HasField("header"):
                chunk.refused = "not a visualdl record file (no file header)"
                return
            header = record.header
            if header.format_major > FORMAT_MAJOR:
                chunk.refused = (
                    f"written in record format {header.format_major}.{header.format_minor}, "
                    f"newer than this visualdl reads ({FORMAT_MAJOR}.x): upgrade visualdl "
                    "to read it")
                return
            self.header = header
        if isinstance(record, list):
            if record:
                chunk.entries.append((offset, record))
            return
        if any(e.WhichOneof("kind") not in ("scalars", None) for e in record.entries):
            chunk.others.append(offset)
        if record.entries:
            chunk.entries.append((offset, list(record.entries)))

    # -- two passes (the reader's first load of many files) ------------------------------
    def first_pass(self, file: Any, stat: Any, keep: frozenset[str], batch: Batch,
                   owner: Any) -> Iterator[Chunk]:
        """Read the file, decoding of its scalar-only records only the series of ``keep``
        (into ``batch``, as ``owner``'s); ``left`` then holds the tags of the others."""
        plan = _FirstPass(keep, owner, self.path, batch)
        stream = file.open(self.offset, stat.size)
        try:
            yield from self._scan(stream, stat.size, plan)
        finally:
            stream.close()
        self.left = frozenset(plan.seen - keep)

    def second_pass(self, file: Any, end: int, keep: frozenset[str]) -> Iterator[Chunk]:
        """The series the first pass left (tags not in ``keep``) of the records before
        ``end``; records it took whole are skipped, and so are errors (counted then)."""
        stream = file.open(0, end)
        try:
            for result in framing.scan_file(stream, 0, end, base.READ_CHUNK):
                chunk = Chunk()
                for offset, payload in result.records:
                    got = decode_some(payload, lambda t: t not in keep)
                    if got is not None and got[0]:
                        series = got[0]
                        if isinstance(series, str):
                            chunk.errors.append(
                                f"undecodable record at offset {offset}: {series}")
                        else:
                            chunk.entries.append((offset, series))
                if chunk.entries or chunk.errors:
                    yield chunk
        finally:
            stream.close()

    # -- blobs and the disk cache -----------------------------------------------------
    def _record(self, file: Any, offset: int) -> Record:
        data = file.cached(("record", offset),
                           lambda: framing.read_record(file.read, offset, self.path))
        return Record.FromString(data)

    def load(self, file: Any, ref: Any, field: str) -> Any:
        for entry in self._record(file, ref.offset).entries:
            if entry.WhichOneof("kind") == field:
                msg = getattr(entry, field)
                if msg.tag == ref.tag and msg.step == ref.step and \
                        getattr(msg, "kind", ref.kind) == ref.kind:
                    return msg
        raise ValueError(f"{self.path}: no {ref.kind} {ref.tag!r} at offset {ref.offset}")

    def entries_at(self, file: Any, offsets: list[int]) -> list[tuple[int, Any]]:
        out = []
        for off in offsets:
            record = Record.FromString(framing.read_record(file.read, off, self.path))
            out += [(off, e) for e in record.entries
                    if e.WhichOneof("kind") not in ("scalars", None)]
        return out


class _FirstPass:
    """One file's first pass: the series of the ``keep`` tags of scalar-only records go
    to the batch (decoded with those of other files), the other series wait for the
    second pass; every tag those records hold is noted. Other records are decoded whole,
    as always."""

    __slots__ = ("keep", "seen", "owner", "path", "batch")

    def __init__(self, keep: frozenset[str], owner: Any, path: str, batch: Batch) -> None:
        self.keep = keep
        self.seen: set[str] = set()
        self.owner = owner
        self.path = path
        self.batch = batch

    def decode(self, offset: int, payload: memoryview) -> Decoded:
        spans = entry_spans(payload)
        if spans is None:
            return decode(payload, True)
        kept = []
        for span in spans:
            self.seen.add(span[0])
            if span[0] in self.keep:
                kept.append(span)
        if kept:
            self.batch.add(self.owner, self.path, offset, payload, kept)
        return []  # the record counts now; its kept series are added with the batch
