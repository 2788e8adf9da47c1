"""Our record files' part of the reader's two-pass first load (see
:mod:`visualdl.reader.first_load` for why and when): reading only some scalar tags of a
record without decoding the others, and decoding the series kept from many records of many
files at once.

Only the scalar codec's layout scan runs over every series in the first pass (to find the
tags); the numpy decoding, the bulk of the work, is done once per series over the two passes.
"""

from __future__ import annotations

from typing import Any, Callable, Union

from google.protobuf.message import DecodeError

from visualdl.format.framing import read_record_at
from visualdl.format.record_pb2 import Record
from visualdl.format.scalar_codec import CompactSeries, decode_layout, read_varint, scan_record

__all__ = ["decode_some", "entry_spans", "Batch"]

#: What :func:`decode_some` gives for a record's kept series: compact series, protobuf
#: ``Entry`` objects (a record the scalar codec does not take, read by protobuf), or the
#: reason protobuf could not read it either.
Series = Union[list[CompactSeries], list[Any], str]


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    byte = buf[pos]
    if byte < 0x80:
        return byte, pos + 1
    return read_varint(buf, pos)


def entry_spans(payload: memoryview) -> list[tuple[str, int, int]] | None:
    """``(tag, start, end)`` of each entry of a record whose entries all hold a scalar
    series (the series' fields are not looked at: the codec checks those it decodes), or
    None for any other record: a header, another kind, or bytes that are not a record.

    The hot loop of the first pass (20 entries a record): lengths of one and two bytes
    (below 16 KiB) are read inline."""
    out = []
    pos, size = 0, len(payload)
    try:
        while pos < size:
            start = pos
            if payload[pos] != 0x12:  # Record.entries
                return None
            length = payload[pos + 1]
            if length < 0x80:
                pos += 2
            elif payload[pos + 2] < 0x80:
                length = (length & 0x7F) | (payload[pos + 2] << 7)
                pos += 3
            else:
                length, pos = read_varint(payload, pos + 1)
            end = pos + length
            if end > size or payload[pos] != 0x0A:  # Entry.scalars, its only field
                return None
            length = payload[pos + 1]
            if length < 0x80:
                inner = pos + 2
            elif payload[pos + 2] < 0x80:
                length = (length & 0x7F) | (payload[pos + 2] << 7)
                inner = pos + 3
            else:
                length, inner = read_varint(payload, pos + 1)
            if inner + length != end:
                return None
            tag = ""
            if inner < end and payload[inner] == 0x0A:  # ScalarSeries.tag ("" is omitted)
                length, inner = _varint(payload, inner + 1)
                if inner + length > end:
                    return None
                tag = str(payload[inner:inner + length], "utf-8")
            out.append((tag, start, end))
            pos = end
    except (IndexError, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    return out


def decode_some(payload: memoryview, wanted: Callable[[str], bool],
                ) -> tuple[Series, list[str]] | None:
    """The series of the tags ``wanted`` accepts in a record whose entries all hold scalar
    series, and the tags of every series it holds; None for any other record."""
    spans = entry_spans(payload)
    if spans is None:
        return None
    tags = [tag for tag, _, _ in spans]
    keep = [(a, b) for tag, a, b in spans if wanted(tag)]
    if not keep:
        return [], tags
    if all(keep[i][1] == keep[i + 1][0] for i in range(len(keep) - 1)):
        part = payload[keep[0][0]:keep[-1][1]]  # one run of entries: no copy
    else:
        part = memoryview(b"".join(payload[a:b] for a, b in keep))
    layout = scan_record(part)
    if layout is not None and len(layout) == len(keep):
        try:
            return decode_layout(part, layout, True), tags
        except ValueError:
            pass
    return _protobuf(payload, wanted), tags


def _protobuf(payload: memoryview, wanted: Callable[[str], bool]) -> Series:
    """What the codec does not take (an odd but valid encoding), read by protobuf."""
    try:
        record = Record.FromString(payload)
    except (DecodeError, ValueError, RuntimeError) as exc:
        return str(exc) or type(exc).__name__
    return [e for e in record.entries
            if e.WhichOneof("kind") == "scalars" and wanted(e.scalars.tag)]


class Batch:
    """The kept series of many records of many files, decoded together.

    The first pass keeps one or two series of each record (the priority tags): decoding
    them record by record would be mostly numpy's per-call cost, thousands of times. So
    their bytes are copied here (the scan's buffer is reused) and decoded in one go when
    the batch is full, when a record holding scalars must be added after them (protobuf's),
    or at the end of the pass. Each record's series go to ``add(owner, offset, series)``
    (``series``: compact series, ``Entry`` objects, or why they could not be decoded)."""

    MAX_BYTES = 8 << 20

    def __init__(self, add: Callable[[Any, int, Series], None]) -> None:
        self.add_to = add
        self.parts: list[bytes] = []
        # (owner, its file's path, record offset, its kept entries, their tags)
        self.owners: list[tuple[Any, str, int, int, frozenset[str]]] = []
        self.size = 0

    def add(self, owner: Any, path: str, offset: int, payload: memoryview,
            kept: list[tuple[str, int, int]]) -> None:
        for _, a, b in kept:
            self.parts.append(bytes(payload[a:b]))
            self.size += b - a
        self.owners.append((owner, path, offset, len(kept), frozenset(t for t, _, _ in kept)))
        if self.size >= self.MAX_BYTES:
            self.flush()

    def __len__(self) -> int:
        return len(self.owners)

    def flush(self) -> None:
        """Hand each record's kept series to ``add``, in the order the records came; the
        batch is empty again. Should the codec refuse the batch, each record is decoded
        alone, and one it refuses is read again from its file and given to protobuf."""
        owners, parts = self.owners, self.parts
        self.owners, self.parts, self.size = [], [], 0
        if not owners:
            return
        series = _decode(memoryview(b"".join(parts)), len(parts))
        i = 0
        for owner, path, offset, n, tags in owners:
            if series is not None:
                got: Series | None = series[i:i + n]
            else:
                got = _decode(memoryview(b"".join(parts[i:i + n])), n)
            if got is None:
                got = _reread(path, offset, tags)
            self.add_to(owner, offset, got)
            i += n


def _decode(buf: memoryview, entries: int) -> list[CompactSeries] | None:
    layout = scan_record(buf)
    if layout is None or len(layout) != entries:
        return None
    try:
        return decode_layout(buf, layout, True)
    except ValueError:
        return None


def _reread(path: str, offset: int, tags: frozenset[str]) -> Series:
    try:
        payload = memoryview(read_record_at(path, offset))
    except (OSError, ValueError) as exc:
        return f"cannot read it again: {exc}"
    return _protobuf(payload, tags.__contains__)
