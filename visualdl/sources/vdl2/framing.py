"""VisualDL 2.x's framing, read tolerantly: ``uint64 length`` (little endian), then a
serialized ``Record``, and nothing else: no CRC (VisualDL's ``RecordWriter.write``).

Without a checksum, a record is recognised by its shape: a plausible length followed by a
payload that is exactly a chain of ``Record.values`` fields (tag byte 0x0A, a varint length,
that many bytes), which is what every record VisualDL writes looks like. A position that
fails the check is damage: it is reported and scanning resynchronises on the next position
whose length and payload pass it. A record cut short at the end of the file is a torn tail
("not yet written") when nothing good follows it; the reader reads it again later.

A flipped byte inside a value (a float's bits, a pixel of a PNG) keeps the shape and cannot
be seen without a checksum; protobuf refuses most other damage when the payload is decoded.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Iterator

import numpy as np

from visualdl.format.scalar_codec import read_varint

_LEN = struct.Struct("<Q")
HEADER_SIZE = 8
#: A length beyond this is damage (VisualDL writes one image or embedding per record).
MAX_RECORD_SIZE = 1 << 31
CHUNK = 4 << 20  # bytes per read


@dataclass
class ScanResult:
    """What one pass over a chunk found; the shape of :class:`visualdl.format.framing.ScanResult`.

    ``records`` holds ``(offset, payload)`` pairs (file offsets); ``end`` is where the next
    scan starts (a torn tail waits there); ``tail`` is ``"torn"`` when the file ends in one.
    Records of a single ``add_scalar`` value are not in ``records``: they come decoded, as
    ``series`` (see :mod:`.bulk`), ``scalar_records`` of them.
    """

    records: list[tuple[int, memoryview]] = field(default_factory=list)
    end: int = 0
    errors: list[str] = field(default_factory=list)
    tail: str = ""
    series: list = field(default_factory=list)  # DecodedSeries of add_scalar records
    scalar_records: int = 0                      # records decoded into ``series``


def is_value_chain(buf: bytes | memoryview, start: int, end: int) -> bool:
    """True when ``buf[start:end]`` is one or more ``Record.values`` fields and nothing else."""
    if end - start < 2:
        return False
    pos = start
    try:
        while pos < end:
            if buf[pos] != 0x0A:
                return False
            n, pos = read_varint(buf, pos + 1)
            pos += n
    except (IndexError, ValueError):
        return False
    return pos == end


def looks_like_vdl2(head: bytes | memoryview) -> bool:
    """The first bytes of a file VisualDL 2.x wrote: a sane length and a ``values`` field.

    Our own records (and TensorBoard's) start with the same 8 length bytes but follow them
    with a CRC, so callers check for that framing first (see ``LogReader``)."""
    if len(head) < HEADER_SIZE + 2:
        return False
    length = _LEN.unpack_from(head)[0]
    if not 2 <= length <= MAX_RECORD_SIZE or head[HEADER_SIZE] != 0x0A:
        return False
    try:
        n, pos = read_varint(head, HEADER_SIZE + 1)
    except (IndexError, ValueError):
        return len(head) < HEADER_SIZE + 11  # the varint runs past what was read
    return pos - HEADER_SIZE + n <= length


SNIFF_SIZE = 1 << 16  # bytes looked at when a file's first record is damaged


def sniff(head: bytes) -> bool:
    """True when a file starting with ``head`` (its first ``SNIFF_SIZE`` bytes) is a
    VisualDL 2.x file: its first bytes say so, or (the first record damaged) a whole,
    well-shaped record follows within them. Ask only after checking for our own framing
    (see :func:`looks_like_vdl2`)."""
    if looks_like_vdl2(head):
        return True
    return _next_good(memoryview(head), 1, len(head)) is not None


def _record_at(buf: memoryview, pos: int, stop: int) -> int | None:
    """The payload length of a whole, well-shaped record at ``pos`` (within ``stop``)."""
    if pos + HEADER_SIZE > stop:
        return None
    length = _LEN.unpack_from(buf, pos)[0]
    if not 2 <= length <= MAX_RECORD_SIZE or pos + HEADER_SIZE + length > stop:
        return None
    body = pos + HEADER_SIZE
    return length if is_value_chain(buf, body, body + length) else None


def _next_good(buf: memoryview, start: int, stop: int) -> int | None:
    """The first position at or after ``start`` where a whole well-shaped record sits.

    Candidates are found with numpy (a length under 4 GiB has four zero high bytes, and the
    payload starts with 0x0A), so a megabyte of garbage is not a megabyte of Python steps."""
    if stop - start < HEADER_SIZE + 2:
        return None
    arr = np.frombuffer(buf, dtype=np.uint8, count=stop, offset=0)
    last = stop - HEADER_SIZE - 2  # the last position a record could start at
    idx = np.arange(start, last + 1)
    ok = arr[idx + HEADER_SIZE] == 0x0A
    for k in range(4, 8):
        ok &= arr[idx + k] == 0
    for p in idx[ok]:
        if _record_at(buf, int(p), stop) is not None:
            return int(p)
    return None


def scan(buf: memoryview, base: int, file_size: int) -> tuple[ScanResult, int]:
    """Scan one buffer read at file offset ``base``. Also return how many bytes from
    ``end`` the caller must read at once to go on (0 when none): a record larger than the
    buffer, or damage whose end is not in it."""
    result = ScanResult(end=base)
    arr = np.frombuffer(buf, dtype=np.uint8)
    n, pos = len(buf), 0
    at_eof = base + n >= file_size
    while n - pos >= HEADER_SIZE:
        pos = _good_run(buf, arr, base, pos, result)
        if n - pos < HEADER_SIZE:
            break
        # The record at pos is not whole and well shaped: decide what it is.
        length = _LEN.unpack_from(buf, pos)[0]
        sane = 2 <= length <= MAX_RECORD_SIZE
        body = pos + HEADER_SIZE
        if sane and body + length > n and base + body + length <= file_size:
            result.end = base + pos
            return result, HEADER_SIZE + length  # a whole record is there: read it
        if sane and body + length <= n and is_value_chain(buf, body, body + length):
            result.records.append((base + pos, buf[body:body + length]))
            pos = body + length
            continue
        nxt = _next_good(buf, pos + 1, n)
        if nxt is None and not at_eof:
            result.end = base + pos
            return result, 2 * n  # search on in a larger read
        if sane and body + length > n:  # runs past the end of the file
            if nxt is None:
                result.end, result.tail = base + pos, "torn"
                return result, 0
            result.errors.append(
                f"record at offset {base + pos} declares {length} bytes, past the end of the "
                f"file ({file_size} bytes), but good records follow: skipped {nxt - pos} bytes")
            pos = nxt
            continue
        if nxt is None:
            result.errors.append(
                f"bad record at offset {base + pos}; no good record after it: "
                f"{file_size - base - pos} bytes to the end of the file skipped")
            # The last bytes are kept: a record being appended right now may start there.
            result.end, result.tail = base + max(pos + 1, n - HEADER_SIZE + 1), "damaged"
            return result, 0
        result.errors.append(f"bad record at offset {base + pos}; skipped {nxt - pos} bytes")
        pos = nxt
    result.end = base + pos
    if at_eof and pos < n:
        result.tail = "torn"  # part of a length
    return result, 0


def _good_run(buf: memoryview, arr: np.ndarray, base: int, pos: int, result: ScanResult) -> int:
    """Take the whole, well-shaped records from ``pos`` on into ``result`` (add_scalar ones
    decoded in bulk); return where the first other one starts (or the buffer's end)."""
    n = len(buf)
    starts: list[int] = []
    lengths: list[int] = []
    add_start, add_length, unpack = starts.append, lengths.append, _LEN.unpack_from
    last = n - HEADER_SIZE
    while pos <= last:
        (length,) = unpack(buf, pos)
        if length < 2 or length > MAX_RECORD_SIZE or pos + HEADER_SIZE + length > n:
            break
        add_start(pos)
        add_length(length)
        pos += HEADER_SIZE + length
    if not starts:
        return pos
    bodies = np.array(starts, dtype=np.int64) + HEADER_SIZE
    lens = np.array(lengths, dtype=np.int64)
    quick = (arr[bodies] == 0x0A) & (lens - 2 < 128) & (arr[bodies + 1] == lens - 2)
    good = len(starts)
    for i in np.flatnonzero(~quick):  # longer or several values: checked one by one
        body = int(bodies[i])
        if not is_value_chain(buf, body, body + lengths[i]):
            good = int(i)
            pos = starts[good]
            break
    # imported with the first VisualDL 2.x records, not with the registry of sources (which
    # imports this module to sniff every *vdlrecords* file, and the server does at start)
    from visualdl.sources.vdl2.bulk import decode_scalars

    series, done = decode_scalars(buf, arr, bodies[:good], lens[:good])
    result.series.extend(series)
    result.scalar_records += int(done.sum())
    for i in np.flatnonzero(~done):
        body = int(bodies[i])
        result.records.append((base + starts[i], buf[body:body + lengths[i]]))
    return pos


def scan_file(f: BinaryIO, offset: int, size: int, chunk: int = CHUNK) -> Iterator[ScanResult]:
    """Scan ``f`` from ``offset`` to ``size`` in chunks; a record larger than a chunk is read
    whole. The last result's ``end`` is where a later scan must start."""
    want = chunk
    while offset < size:
        f.seek(offset)
        data = f.read(min(max(want, chunk), size - offset))
        if not data:
            return
        result, need = scan(memoryview(data), offset, size)
        if need and result.end == offset:
            want = need  # a record larger than the chunk, or damage running past it
            continue
        want = chunk
        yield result
        if result.tail or result.end <= offset:
            return
        offset = result.end


#: Bytes asked for at a blob's offset first: most records of images or audio fit.
BLOB_BLOCK = 64 << 10


def read_payload(read: Callable[[int, int], bytes], offset: int, name: str) -> bytes:
    """The payload of the record at ``offset`` (a blob's bytes are read back this way),
    through ``read(start, end)``: one read of ``BLOB_BLOCK`` bytes, a second when the
    record is longer. ``name`` names the file in errors."""
    head = read(offset, offset + BLOB_BLOCK)
    if len(head) < HEADER_SIZE:
        raise ValueError(f"{name}: no record at offset {offset}")
    length = _LEN.unpack_from(head)[0]
    if length > MAX_RECORD_SIZE:
        raise ValueError(f"{name}: no record at offset {offset}")
    data = bytes(head[HEADER_SIZE:HEADER_SIZE + length])
    if len(data) < length:
        data += read(offset + len(head), offset + HEADER_SIZE + length)
    if len(data) != length or not is_value_chain(data, 0, length):
        raise ValueError(f"{name}: no record at offset {offset}")
    return data


def read_payload_at(path: str, offset: int) -> bytes:
    """:func:`read_payload` of a local file."""
    with open(path, "rb") as f:
        def read(start: int, end: int) -> bytes:
            f.seek(start)
            return f.read(max(0, end - start))

        return read_payload(read, offset, path)
