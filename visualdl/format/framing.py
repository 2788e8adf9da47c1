"""The record framing: the one place that knows how records sit in a file.

Per record (the TFRecord framing)::

    uint64 length (little endian)
    uint32 masked CRC32C of the 8 length bytes
    data   (length bytes: one serialized ``visualdl.Record``)
    uint32 masked CRC32C of data

A record cut short at the end of a file is "not yet written" (a torn tail), never an
error. Anything else that does not check out is damage: it is reported, and scanning
resynchronises on the next position where both CRCs check. A length whose CRC checks but
that points past the end of the file is a torn tail only when nothing good follows it; when
good records follow, it is damage too (a torn tail is a prefix of one record, so it cannot
hold complete records after its start).

The search for the next good record is vectorised (numpy over the buffer): a position can
start a record only if its 8 length bytes decode to a plausible length, and the length CRC
is computed (with table lookups, for every such position at once) only there.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Iterator

import google_crc32c
import numpy as np

_LEN = struct.Struct("<Q")
_CRC = struct.Struct("<I")
HEADER_SIZE = 12  # length + length CRC
FOOTER_SIZE = 4
_MASK_DELTA = 0xA282EAD8
# A length beyond this is treated as corruption even when its CRC matches by chance.
MAX_RECORD_SIZE = 1 << 31
CHUNK = 2 << 20  # bytes per read when scanning a file
_WINDOW = 1 << 20  # positions examined at once by the vectorised search (bounds its temporaries)
_STREAM_CHECK = 64 << 20  # records larger than this are CRC-checked from the file before
# a buffer that big is allocated for them: a bogus length must not cost its size in memory


def masked_crc(data: bytes | memoryview) -> int:
    """CRC32C masked as TFRecord does, so that CRCs of CRCs stay well distributed."""
    # google_crc32c's C entry point takes bytes only, not memoryviews.
    crc = google_crc32c.value(data if isinstance(data, bytes) else bytes(data))
    return _mask(crc)


def _mask(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """Return ``data`` framed as one record, ready to append to a file."""
    length = _LEN.pack(len(data))
    return b"".join(
        (length, _CRC.pack(masked_crc(length)), data, _CRC.pack(masked_crc(data)))
    )


@dataclass
class ScanResult:
    """What one pass over a buffer (or one chunk of a file) found.

    ``records`` holds ``(offset, data)`` pairs, offsets relative to the file start.
    ``end`` is the file offset where the next scan must start: just after the last
    complete record (or skipped bad bytes), so a torn tail is read again later.
    ``need`` is the framed size of the incomplete record that starts at ``end``, when one
    does (0 otherwise). ``damage`` (what was bad: "length CRC" or "data CRC") says the scan
    stopped at ``end`` on bad bytes with no good record after them in the buffer. :func:`scan_file` sets ``tail``: ``"torn"`` when
    the file ends in a torn tail starting at ``end``, ``"damaged"`` when it ends in bad
    bytes starting at ``tail_from``.
    """

    records: list[tuple[int, memoryview]] = field(default_factory=list)
    end: int = 0
    errors: list[str] = field(default_factory=list)
    need: int = 0
    damage: str = ""
    tail: str = ""
    tail_from: int = 0


def length_at(buf: bytes | memoryview, pos: int = 0) -> int | None:
    """The record length framed at ``pos``, or None when the length CRC fails."""
    head = bytes(buf[pos : pos + 8])
    (crc,) = _CRC.unpack_from(buf, pos + 8)
    if masked_crc(head) != crc:
        return None
    (length,) = _LEN.unpack_from(head)
    return length if length < MAX_RECORD_SIZE else None


_length_at = length_at


# -- the vectorised search ----------------------------------------------------------
def crc_tables() -> list[np.ndarray]:
    """Slicing-by-8 tables for CRC32C (Castagnoli, reflected)."""
    t0 = np.zeros(256, np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t0[i] = c
    tables = [t0]
    for _ in range(7):
        prev = tables[-1]
        tables.append((prev >> np.uint32(8)) ^ t0[prev & np.uint32(0xFF)])
    return tables


_T = crc_tables()
_ZERO_HEADER_CRC = masked_crc(bytes(8))
assert _ZERO_HEADER_CRC != 0  # twelve zero bytes never frame a record (see _candidates)


def masked_length_crcs(low: np.ndarray) -> np.ndarray:
    """Masked CRC32C of the 8 bytes ``low`` (uint32, little endian) followed by 4 zeros.

    Slicing-by-8 over one 8-byte block: the 4 zero bytes add ``T3[0]^T2[0]^T1[0]^T0[0]``,
    which is 0, so only the tables of the first four bytes are needed."""
    x = low ^ np.uint32(0xFFFFFFFF)
    crc = _T[7][x & np.uint32(0xFF)]
    crc ^= _T[6][(x >> np.uint32(8)) & np.uint32(0xFF)]
    crc ^= _T[5][(x >> np.uint32(16)) & np.uint32(0xFF)]
    crc ^= _T[4][x >> np.uint32(24)]
    crc ^= np.uint32(0xFFFFFFFF)
    return ((crc >> np.uint32(15)) | (crc << np.uint32(17))) + np.uint32(_MASK_DELTA)


def _candidates(arr: np.ndarray, lo: int, hi: int) -> Iterator[int]:
    """Positions ``p`` in ``[lo, hi)``, in order, whose length CRC checks and whose length
    is plausible (``p + HEADER_SIZE <= len(arr)`` is the caller's to ensure).

    The filters that need no CRC run first, over the whole window at once: a plausible
    length (< 2**31) has its top 4 bytes zero and the top bit of the 4th clear; twelve zero
    bytes (a zero-filled region) are ruled out because the CRC of 8 zero bytes is not 0.
    """
    for start in range(lo, hi, _WINDOW):
        n = min(_WINDOW, hi - start)
        window = arr[start : start + n + HEADER_SIZE - 1]
        zero = window == 0
        plausible = zero[4 : n + 4] & zero[5 : n + 5] & zero[6 : n + 6] & zero[7 : n + 7]
        plausible &= window[3 : n + 3] < 0x80
        if not plausible.any():
            continue
        all_zero = zero[0:n].copy()
        for k in (1, 2, 3, 8, 9, 10, 11):
            all_zero &= zero[k : n + k]
        plausible &= ~all_zero
        idx = np.flatnonzero(plausible)
        if not idx.size:
            continue
        w32 = window.astype(np.uint32)
        low = w32[idx] | (w32[idx + 1] << 8) | (w32[idx + 2] << 16) | (w32[idx + 3] << 24)
        stored = w32[idx + 8] | (w32[idx + 9] << 8) | (w32[idx + 10] << 16) | (w32[idx + 11] << 24)
        for p in idx[masked_length_crcs(low) == stored]:
            yield start + int(p)


def _array(view: memoryview) -> np.ndarray:
    return np.frombuffer(view, np.uint8)


def _next_good(view: memoryview, start: int) -> int | None:
    """The first position >= ``start`` in ``view`` where a record's both CRCs check, or
    whose well-framed length runs past the buffer (it may check once the rest is read).
    None when there is none."""
    size = len(view)
    hi = size - HEADER_SIZE + 1
    if start >= hi:
        return None
    for p in _candidates(_array(view), start, hi):
        (length,) = _LEN.unpack_from(view, p)
        end = p + HEADER_SIZE + length + FOOTER_SIZE
        if end > size:
            return p
        (crc,) = _CRC.unpack_from(view, end - FOOTER_SIZE)
        if masked_crc(view[p + HEADER_SIZE : end - FOOTER_SIZE]) == crc:
            return p
    return None


def scan(buf: bytes | memoryview, base: int = 0) -> ScanResult:
    """Split ``buf`` (file bytes starting at file offset ``base``) into records.

    Stops before a record that is not complete yet (``need`` says how big it is). Bad
    bytes are skipped up to the next position where both CRCs check, and reported in
    ``errors``; when no such position is left in the buffer, the scan stops at the bad
    bytes with ``damage`` set (:func:`scan_file` searches on in the file). Never raises
    on bad bytes.
    """
    view = memoryview(buf)
    size = len(view)
    result = ScanResult()
    pos = 0
    while size - pos >= HEADER_SIZE:
        length = length_at(view, pos)
        if length is not None:
            end = pos + HEADER_SIZE + length + FOOTER_SIZE
            if end > size:
                result.need = end - pos  # not complete in this buffer
                break
            data = view[pos + HEADER_SIZE : end - FOOTER_SIZE]
            (crc,) = _CRC.unpack_from(view, end - FOOTER_SIZE)
            if masked_crc(data) == crc:
                result.records.append((base + pos, data))
                pos = end
                continue
            what = "data CRC"
        else:
            what = "length CRC"
        # Resynchronise from the next byte, not from the declared end: the length may be
        # the damaged part, and skipping it could hide good records.
        nxt = _next_good(view, pos + 1)
        if nxt is None:
            result.damage = what
            break
        result.errors.append(f"bad record {what} at offset {base + pos}; skipped {nxt - pos} bytes")
        pos = nxt
    result.end = base + pos
    return result


# -- files --------------------------------------------------------------------------
def _read_into(f: BinaryIO, offset: int, buffer: bytearray, n: int) -> memoryview:
    f.seek(offset)
    view = memoryview(buffer)[:n]
    got = f.readinto(view) or 0
    return view[:got]


def _crc_ok_in_file(f: BinaryIO, pos: int, length: int, chunk: int) -> bool:
    """Check the data CRC of the record at ``pos`` by streaming it (bounded memory)."""
    f.seek(pos + HEADER_SIZE)
    crc, left = 0, length
    while left:
        piece = f.read(min(chunk, left))
        if not piece:
            return False
        crc = google_crc32c.extend(crc, piece)
        left -= len(piece)
    tail = f.read(FOOTER_SIZE)
    return len(tail) == FOOTER_SIZE and _CRC.unpack(tail)[0] == _mask(crc)


def find_record(f: BinaryIO, start: int, size: int, chunk: int = CHUNK,
                torn_ok: bool = False) -> int | None:
    """The first offset >= ``start`` of a complete record whose both CRCs check, reading
    ``f`` (of ``size`` bytes) in chunks; None when there is none. With ``torn_ok``, a
    well-framed length whose record runs past the end of the file is taken too: it may be
    a record still being written, and must not be skipped."""
    chunk = max(chunk, 4 * HEADER_SIZE)
    buffer = bytearray(min(chunk, max(size - start, 0)))
    pos = start
    while size - pos >= HEADER_SIZE:
        view = _read_into(f, pos, buffer, min(len(buffer), size - pos))
        n = len(view)
        if n < HEADER_SIZE:
            return None
        for p in _candidates(_array(view), 0, n - HEADER_SIZE + 1):
            (length,) = _LEN.unpack_from(view, p)
            total = HEADER_SIZE + length + FOOTER_SIZE
            if pos + p + total > size:
                if torn_ok:
                    return pos + p
                continue  # not complete in the file: not proof of anything
            if p + total <= n:
                (crc,) = _CRC.unpack_from(view, p + total - FOOTER_SIZE)
                ok = masked_crc(view[p + HEADER_SIZE : p + total - FOOTER_SIZE]) == crc
            else:
                ok = _crc_ok_in_file(f, pos + p, length, chunk)
            if ok:
                return pos + p
        pos += n - HEADER_SIZE + 1
    return None


def scan_file(f: BinaryIO, offset: int = 0, size: int | None = None,
              chunk: int = CHUNK) -> Iterator[ScanResult]:
    """Scan the file ``f`` from ``offset`` to ``size`` (its size now, by default) in
    chunks of about ``chunk`` bytes, yielding one :class:`ScanResult` per chunk.

    Memory stays bounded by ``chunk`` and the largest good record. The records of a result
    point into a buffer that the next chunk reuses: use them before asking for the next.
    The last result's ``end`` is where a later scan must start; its ``tail`` tells whether
    the file ends in a torn tail or in bad bytes. Damage is resolved across chunks and
    reported once per damaged region.
    """
    if size is None:
        size = os.fstat(f.fileno()).st_size
    if size - offset <= 0:
        return
    buffer = bytearray(max(HEADER_SIZE, min(chunk, size - offset)))
    while offset < size:
        view = _read_into(f, offset, buffer, min(len(buffer), size - offset))
        n = len(view)
        if not n:
            return  # the file shrank under us
        at_eof = offset + n >= size
        result = scan(view, offset)
        if result.damage:
            bad, what = result.end, result.damage
            # Positions whose header lay inside this buffer were searched by scan().
            nxt = find_record(f, max(bad + 1, offset + n - HEADER_SIZE + 1), size, chunk,
                              torn_ok=True)
            if nxt is None:
                result.errors.append(
                    f"bad record {what} at offset {bad}; no good record after it: "
                    f"{size - bad} bytes to the end of the file skipped"
                )
                result.tail, result.tail_from = "damaged", bad
                # Keep the last bytes: a record being appended right now may start there.
                result.end = max(bad + 1, size - HEADER_SIZE + 1)
                yield result
                return
            result.errors.append(f"bad record {what} at offset {bad}; skipped {nxt - bad} bytes")
            result.end = nxt
        elif result.need:
            pos = result.end
            if pos + result.need > size:
                nxt = find_record(f, pos + 1, size, chunk)
                if nxt is None:  # a torn tail: the rest of the record is not written yet
                    result.tail, result.tail_from = "torn", pos
                    yield result
                    return
                result.errors.append(
                    f"record at offset {pos} declares {result.need - HEADER_SIZE - FOOTER_SIZE} "
                    f"bytes, past the end of the file ({size} bytes), but good records follow: "
                    f"skipped {nxt - pos} bytes"
                )
                result.end = nxt
            elif pos == offset and result.need > len(buffer):
                length = result.need - HEADER_SIZE - FOOTER_SIZE
                if result.need > _STREAM_CHECK and not _crc_ok_in_file(f, pos, length, chunk):
                    nxt = find_record(f, pos + 1, size, chunk, torn_ok=True)
                    result.errors.append(
                        f"bad record data CRC at offset {pos}; skipped "
                        f"{(nxt if nxt is not None else size) - pos} bytes"
                    )
                    if nxt is None:
                        result.tail, result.tail_from = "damaged", pos
                        result.end = max(pos + 1, size - HEADER_SIZE + 1)
                        yield result
                        return
                    result.end = nxt
                else:
                    buffer = bytearray(result.need)  # one record larger than the buffer
                    continue
        elif at_eof and result.end < size:
            result.tail, result.tail_from = "torn", result.end  # part of a header
            yield result
            return
        yield result
        if result.end <= offset:
            return  # no progress is possible (not reached: every branch moves on)
        offset = result.end
        if len(buffer) > chunk and result.need <= chunk:
            buffer = bytearray(max(HEADER_SIZE, min(chunk, size - offset)))


def read_record(read: Callable[[int, int], bytes], offset: int, name: str) -> bytes:
    """Read and check the one record framed at ``offset``, through ``read(start, end)``
    (bytes of a local file, or ranged reads of an object in storage); ``name`` names the
    file in errors. Two reads: the length, then the data and its CRC."""
    head = read(offset, offset + HEADER_SIZE)
    if len(head) < HEADER_SIZE:
        raise ValueError(f"{name}: no record at offset {offset}")
    length = length_at(head, 0)
    if length is None:
        raise ValueError(f"{name}: bad record length CRC at offset {offset}")
    start = offset + HEADER_SIZE
    rest = read(start, start + length + FOOTER_SIZE)
    if len(rest) < length + FOOTER_SIZE:
        raise ValueError(f"{name}: record at offset {offset} is incomplete")
    data = bytes(rest[:length])
    (crc,) = _CRC.unpack_from(rest, length)
    if masked_crc(data) != crc:
        raise ValueError(f"{name}: bad record data CRC at offset {offset}")
    return data


def read_record_at(path: str, offset: int) -> bytes:
    """Read and check the one record framed at ``offset`` in the local file ``path``."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size

        def read(start: int, end: int) -> bytes:  # never past the end: a damaged length
            f.seek(start)                          # must not allocate what it claims
            return f.read(max(0, min(end, size) - start))

        return read_record(read, offset, path)
