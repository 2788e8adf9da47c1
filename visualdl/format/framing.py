"""The record framing: the one place that knows how records sit in a file.

Per record (the TFRecord framing)::

    uint64 length (little endian)
    uint32 masked CRC32C of the 8 length bytes
    data   (length bytes: one serialized ``visualdl.Record``)
    uint32 masked CRC32C of data

A record cut short at the end of a file is "not yet written", never an error. A
record whose CRC fails is skipped and reported, and scanning goes on.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import google_crc32c

_LEN = struct.Struct("<Q")
_CRC = struct.Struct("<I")
HEADER_SIZE = 12  # length + length CRC
FOOTER_SIZE = 4
_MASK_DELTA = 0xA282EAD8
# A length beyond this is treated as corruption even when its CRC matches by chance.
MAX_RECORD_SIZE = 1 << 31


def masked_crc(data: bytes | memoryview) -> int:
    """CRC32C masked as TFRecord does, so that CRCs of CRCs stay well distributed."""
    # google_crc32c's C entry point takes bytes only, not memoryviews.
    crc = google_crc32c.value(data if isinstance(data, bytes) else bytes(data))
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """Return ``data`` framed as one record, ready to append to a file."""
    length = _LEN.pack(len(data))
    return b"".join(
        (length, _CRC.pack(masked_crc(length)), data, _CRC.pack(masked_crc(data)))
    )


@dataclass
class ScanResult:
    """What one pass over a buffer found.

    ``records`` holds ``(offset, data)`` pairs, offsets relative to the file start.
    ``end`` is the file offset where the next scan must start: just after the last
    complete record (or skipped bad bytes), so a torn tail is read again later.
    """

    records: list[tuple[int, memoryview]] = field(default_factory=list)
    end: int = 0
    errors: list[str] = field(default_factory=list)


def _length_at(buf: memoryview, pos: int) -> int | None:
    """The record length framed at ``pos``, or None when the length CRC fails."""
    head = buf[pos : pos + 8]
    (crc,) = _CRC.unpack_from(buf, pos + 8)
    if masked_crc(head) != crc:
        return None
    (length,) = _LEN.unpack_from(buf, pos)
    return length if length < MAX_RECORD_SIZE else None


def _resync(buf: memoryview, pos: int) -> int:
    """Find the next position after ``pos`` where a well-framed length starts."""
    size = len(buf)
    for candidate in range(pos + 1, size - HEADER_SIZE + 1):
        if _length_at(buf, candidate) is not None:
            return candidate
    # Nothing found: keep the last bytes, a header may still be arriving there.
    return max(pos + 1, size - HEADER_SIZE + 1)


def scan(buf: bytes | memoryview, base: int = 0) -> ScanResult:
    """Split ``buf`` (file bytes starting at file offset ``base``) into records.

    Stops before a record that is not complete yet. Corrupt framing is skipped and
    reported in ``errors``; the scan never raises on bad bytes.
    """
    view = memoryview(buf)
    size = len(view)
    result = ScanResult()
    pos = 0
    while size - pos >= HEADER_SIZE:
        length = _length_at(view, pos)
        if length is None:
            nxt = _resync(view, pos)
            result.errors.append(
                f"bad record length CRC at offset {base + pos}; skipped {nxt - pos} bytes"
            )
            pos = nxt
            continue
        end = pos + HEADER_SIZE + length + FOOTER_SIZE
        if end > size:
            break  # torn tail: not yet written
        data = view[pos + HEADER_SIZE : pos + HEADER_SIZE + length]
        (crc,) = _CRC.unpack_from(view, end - FOOTER_SIZE)
        if masked_crc(data) != crc:
            result.errors.append(f"bad record data CRC at offset {base + pos}; record skipped")
        else:
            result.records.append((base + pos, data))
        pos = end
    result.end = base + pos
    return result


def read_record_at(path: str, offset: int) -> bytes:
    """Read and check the one record framed at ``offset`` in ``path``."""
    with open(path, "rb") as f:
        f.seek(offset)
        head = f.read(HEADER_SIZE)
        if len(head) < HEADER_SIZE:
            raise ValueError(f"{path}: no record at offset {offset}")
        length = _length_at(memoryview(head), 0)
        if length is None:
            raise ValueError(f"{path}: bad record length CRC at offset {offset}")
        rest = f.read(length + FOOTER_SIZE)
    if len(rest) < length + FOOTER_SIZE:
        raise ValueError(f"{path}: record at offset {offset} is incomplete")
    data = rest[:length]
    (crc,) = _CRC.unpack_from(rest, length)
    if masked_crc(data) != crc:
        raise ValueError(f"{path}: bad record data CRC at offset {offset}")
    return data
