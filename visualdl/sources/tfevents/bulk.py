"""A chunk of an event file at once: framing, CRCs and scalar events with numpy.

A training log is mostly one-value scalar events of 40-60 bytes (torch and tensorboardX
write one ``Event`` per ``add_scalar``): a million of them take seconds when each record is
framed, CRC-checked and parsed on its own, however cheap each step is. Here a whole chunk
(a couple of megabytes) is handled as arrays:

1. record boundaries: the positions 12 bytes before a 09 byte (every event starts with its
   wall time's key) whose eight length bytes could frame a record are found at once
   (every such position, when some event has no wall time); those whose declared end is
   another such position keep their place, and their length CRCs (from a table) are
   checked. When the survivors chain from the chunk's first byte to its last record, those
   are the records; otherwise (damage, or a payload that holds a well-framed header) they
   are walked one by one with ``struct``;
2. data CRCs are computed for all records of one length together: CRC32C is affine in
   the bytes, so a record's CRC is an XOR of per-position table entries, and bytes that are
   the same in every record of the group (field keys, tags) are looked up only once;
3. events laid out as ``add_scalar`` writes them (wall time, step, one value of a tag and
   a ``simple_value``, or a scalar tensor: torch's ``float_val``, TensorFlow 2's
   ``tensor_content`` followed by the value's metadata in every event), and TensorFlow 1's
   merged summaries (every tag's ``simple_value`` in one event, the same tags each step)
   are recognised one length at a time: the first event's layout is read with Python,
   every event of that length is checked against it at once, and those that fit are
   decoded at its offsets with one gather per field, through views of the chunk as
   integers and floats at every byte offset (no copy of the bytes around a field).

Anything else (other kinds, damage, a record cut by the chunk's end) is left to the
careful per-record path (:func:`visualdl.format.framing.scan_file` and
:class:`~visualdl.sources.tfevents.decode.FileDecoder`): :func:`scan_chunk` stops before the
first record it cannot vouch for, and returns the events it did not decode as payloads.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterator, NamedTuple

import numpy as np

import google_crc32c

from visualdl.format.framing import (CHUNK, FOOTER_SIZE, HEADER_SIZE, MAX_RECORD_SIZE,
                                     crc_tables, masked_crc, masked_length_crcs,
                                     scan_file)
from visualdl.format.scalar_codec import DecodedSeries, read_varint

_LEN = struct.Struct("<Q")
_T0 = crc_tables()[0]
_MASK_DELTA = np.uint32(0xA282EAD8)
_MAX_STEP_BYTES = 9  # varints of up to 63 bits: every non-negative int64 step
# The tensor forms of a scalar after the tag: tensor (8) with a dtype, an empty shape
# (12 00) and one value: torch's float_val (2a 04), TensorFlow 2's tensor_content as float32
# (22 04) or float64 (22 08); the bytes before the value, and its size.
_TENSOR_FORMS = ((b"\x42\x0a\x08\x01\x12\x00\x2a\x04", 4),
                 (b"\x42\x0a\x08\x01\x12\x00\x22\x04", 4),
                 (b"\x42\x0e\x08\x02\x12\x00\x22\x08", 8))
_MAX_META = 120  # TensorFlow 2 repeats the value's metadata (key 4a) in every event


@dataclass
class Chunk:
    """What :func:`scan_chunk` made of a buffer.

    ``records``: ``(offset, payload)`` of the events left to the per-record decoder, in file
    order; ``series``: the decoded ``simple_value`` scalars, one per tag; ``tensor_scalars``:
    tensor-form scalars, to be taken only for tags whose plugin is ``scalars`` (the caller
    knows, having decoded the tag's first value), with each point's payload for the others;
    ``end``: the file offset after the last record used (where the next read starts)."""

    records: list = field(default_factory=list)
    series: list = field(default_factory=list)
    tensor_scalars: list = field(default_factory=list)
    end: int = 0
    errors: list = field(default_factory=list)  # always empty: damage is not handled here
    tail: str = ""  # likewise: a torn tail stops the chunk before it


def _walk(view: memoryview, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the records that fit wholly in ``view[:n]``, by their
    declared lengths (not checked yet), one record after the other."""
    starts: list[int] = []
    lengths: list[int] = []
    unpack = _LEN.unpack_from
    pos, frame = 0, HEADER_SIZE + FOOTER_SIZE
    add_start, add_length = starts.append, lengths.append
    while n - pos >= frame:
        (length,) = unpack(view, pos)
        end = pos + frame + length
        if length >= MAX_RECORD_SIZE or end > n:
            break
        add_start(pos)
        add_length(length)
        pos = end
    return np.asarray(starts, np.int64), np.asarray(lengths, np.int64)


def _at_every_byte(arr: np.ndarray, dtype: str) -> np.ndarray:
    """``arr``'s bytes read as little-endian ``dtype`` starting at every offset (a view:
    element ``i`` is the value whose first byte is ``arr[i]``), so that a field at any
    offset of many records is one gather, with no copy of the bytes around it."""
    kind = np.dtype(dtype)
    count = max(len(arr) - kind.itemsize + 1, 0)
    return np.ndarray((count,), kind, buffer=arr, strides=(1,))


class _Views:
    """The buffer of one chunk as bytes and as every-offset u32, u64, f32 and f64 views."""

    __slots__ = ("u8", "u32", "u64", "f32", "f64", "n")

    def __init__(self, arr: np.ndarray) -> None:
        self.u8 = arr
        self.n = len(arr)
        self.u32 = _at_every_byte(arr, "<u4")
        self.u64 = _at_every_byte(arr, "<u8")
        self.f32 = _at_every_byte(arr, "<f4")
        self.f64 = _at_every_byte(arr, "<f8")


_LENGTH_CRC_TABLE: list[np.ndarray] = []  # masked CRCs of the lengths 0..65535, made once
_SMALL = 1 << 16


def _chain(v: _Views, cand: np.ndarray) -> tuple | None:
    """The records among candidate starts ``cand`` (sorted) when they chain from the
    buffer's first byte to its last complete record (each one's end the next one's
    start), else None."""
    n = v.n
    cand = cand[:np.searchsorted(cand, n - (HEADER_SIZE + FOOTER_SIZE), "right")]
    lengths = v.u32[cand]
    ends = cand + lengths + (HEADER_SIZE + FOOTER_SIZE)
    # a record is followed by another (or by the end of the buffer): most positions that
    # only look like a header are not, and need no CRC
    starts_here = np.zeros(n + 1, bool)
    starts_here[cand] = True
    # a length under 2**31 has its top 33 bits zero; the record must fit in the buffer
    ok = (ends <= n) & (v.u32[cand + 4] == 0) & (lengths < MAX_RECORD_SIZE)
    ok &= starts_here[np.minimum(ends, n)] | (ends > n - HEADER_SIZE)
    keep = np.flatnonzero(ok)
    cand, lengths, ends = cand[keep], lengths[keep], ends[keep]
    good = _length_crcs(lengths) == v.u32[cand + 8]
    if not good.all():
        cand, lengths, ends = cand[good], lengths[good], ends[good]
    if len(cand) and cand[0] == 0 and (ends[:-1] == cand[1:]).all():
        return cand, lengths.astype(np.int64)
    return None


def _boundaries(arr: np.ndarray, view: memoryview) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the complete records at the head of the buffer whose length
    CRC checks (data CRCs are not checked yet).

    Every event TensorBoard's writers make starts with its wall time (field 1, key 09), so
    the positions 12 bytes before a 09 byte are tried first (one pass over the buffer);
    when each one whose length CRC checks ends where the next begins, those are the
    records. A file where that does not hold (a wall time of 0 is not serialized) is
    searched again at every position that could frame a record (a length under 2**31 has
    its top four bytes zero). Otherwise (a payload that happens to hold a well-framed
    header, or damage) the records are walked one by one."""
    n = len(arr)
    m = n - HEADER_SIZE + 1
    if m <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    v = _Views(arr)
    found = _chain(v, np.flatnonzero(arr[HEADER_SIZE:] == 0x09))
    if found is not None:
        return found
    z = arr == 0
    plausible = z[4:m + 4] & z[5:m + 5] & z[6:m + 6] & z[7:m + 7] & (arr[3:m + 3] < 0x80)
    found = _chain(v, np.flatnonzero(plausible))
    if found is not None:
        return found
    starts, lengths = _walk(view, n)
    if len(starts):
        ok = _length_crcs(lengths) == v.u32[starts + 8]
        if not ok.all():
            keep = int(np.argmin(ok))
            starts, lengths = starts[:keep], lengths[:keep]
    return starts, lengths


def _u32_at(arr: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The little-endian uint32 at each position."""
    return _at_every_byte(arr, "<u4")[pos]


def _windows(arr: np.ndarray, length: int) -> np.ndarray:
    """Every ``length``-byte window of ``arr`` as rows (a view: indexing it by positions
    copies just those bytes, with no index matrix)."""
    return np.lib.stride_tricks.sliding_window_view(arr, length)


def _length_crcs(lengths: np.ndarray) -> np.ndarray:
    """Masked CRC32C of each 8-byte little-endian length (all under 2**31). Lengths under
    65,536 (nearly all) are looked up in a table made once; the others are computed with
    four table lookups each, as framing's vectorised search does."""
    if not _LENGTH_CRC_TABLE:
        _LENGTH_CRC_TABLE.append(masked_length_crcs(np.arange(_SMALL, dtype=np.uint32)))
    table = _LENGTH_CRC_TABLE[0]
    if not len(lengths):
        return np.zeros(0, np.uint32)
    small = lengths < _SMALL
    if small.all():
        return table[lengths]
    out = masked_length_crcs(lengths.astype(np.uint32))
    out[small] = table[lengths[small]]
    return out


def _masked(crc: np.ndarray) -> np.ndarray:
    return ((crc >> np.uint32(15)) | (crc << np.uint32(17))) + _MASK_DELTA


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)``, which imports ``numpy.ma`` (slow, at a server's start) on its
    first call: a sort and a comparison of neighbours."""
    s = np.sort(values)
    if len(s) < 2:
        return s
    keep = np.empty(len(s), bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True, return_inverse=True)`` for integer arrays
    that hold few distinct values (tags, record lengths): the distinct values are taken
    from the first rows, and every value is matched with them through a small hash table
    (one multiply, one shift, one lookup each) and then compared with what it matched;
    only when some value is not among them is the whole array sorted."""
    if not len(values) or (values == values[0]).all():
        return values[:1].copy(), np.zeros(min(len(values), 1), np.int64), \
            np.zeros(len(values), np.int64)
    head = values[:256]
    uniq = _sorted_unique(head)
    at = _lookup(uniq, values)
    if at is not None:
        first = np.full(len(uniq), len(values), np.int64)
        np.minimum.at(first, at[:len(head)], np.arange(len(head)))
        return uniq, first, at
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.empty(len(values), bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inverse = np.empty(len(values), np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], order[new], inverse


# odd 64-bit multipliers for _lookup's hash (golden ratio, then splitmix64's and murmur's)
_MULTIPLIERS = (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB,
                0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53)


def _lookup(uniq: np.ndarray, values: np.ndarray) -> np.ndarray | None:
    """Each value's index in ``uniq`` (a few distinct integers), or None when some value
    is not among them. A multiplicative hash into a table of at least 256 slots that
    ``uniq`` fills without collision; what a value finds there is then checked."""
    if len(uniq) > 64:
        return None
    bits = 8 if len(uniq) <= 16 else 12
    shift = np.uint64(64 - bits)
    keys = uniq.astype(np.uint64) if uniq.dtype != np.uint64 else uniq
    for mult in _MULTIPLIERS:
        with np.errstate(over="ignore"):
            slots = (keys * np.uint64(mult)) >> shift
        if len(_sorted_unique(slots)) == len(uniq):
            break
    else:
        return None
    table = np.zeros(1 << bits, np.int64)
    table[slots] = np.arange(len(uniq))
    v = values.view(np.uint64) if values.dtype.itemsize == 8 else values.astype(np.uint64)
    with np.errstate(over="ignore"):
        at = table[(v * np.uint64(mult)) >> shift]
    return at if (uniq[at] == values).all() else None


_TABLE_MAX = 512  # longer records are checked one by one with google_crc32c (C)
_tables: dict[int, tuple[np.ndarray, np.uint32]] = {}


def _position_tables(length: int) -> tuple[np.ndarray, np.uint32]:
    """CRC32C is affine in the message bits: ``crc(x) = crc(0...0) ^ XOR_j T[j][x_j]``,
    where ``T[j][b]`` is byte ``b``'s contribution at position ``j`` (its table entry
    carried through the zero bytes after it). So the CRCs of many messages of one length
    are one gather per byte position, with no loop over messages."""
    got = _tables.get(length)
    if got is None:
        rows = np.empty((length, 256), np.uint32)
        r = _T0.copy()
        eight, low = np.uint32(8), np.uint32(0xFF)
        for k in range(length):
            rows[length - 1 - k] = r
            r = _T0[r & low] ^ (r >> eight)
        got = _tables[length] = (rows, np.uint32(google_crc32c.value(bytes(length))))
    return got


def _crc(arr: np.ndarray, pos: np.ndarray, length: int) -> np.ndarray:
    """Masked CRC32C of ``arr[p:p + length]`` for each ``p`` in ``pos``."""
    if not len(pos):
        return np.zeros(0, np.uint32)
    if length > _TABLE_MAX:
        return np.array([masked_crc(arr[p:p + length].tobytes()) for p in pos.tolist()],
                        np.uint32)
    table, zero = _position_tables(length)
    # (bytes, messages) layout: every step below runs over one contiguous vector
    cols = np.ascontiguousarray(_windows(arr, length)[pos].T)
    # Bytes that are the same in every message (field keys, a tag, the high bytes of a
    # wall time) contribute the same term to each CRC: looked up once, not per message.
    first = cols[:, 0]
    same = np.bitwise_or.reduce(cols ^ first[:, None], axis=1) == 0
    for j in np.flatnonzero(same).tolist():
        zero ^= table[j, first[j]]
    crc = np.full(len(pos), zero, np.uint32)
    for j in np.flatnonzero(~same).tolist():
        crc ^= table[j].take(cols[j])
    return _masked(crc)


def _first_bad(arr: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> int:
    """Index of the first record whose data CRC fails (len(starts) if none)."""
    bad = len(starts)
    uniq, _, which = _distinct(lengths)
    u32 = _at_every_byte(arr, "<u4")
    for k, length in enumerate(uniq.tolist()):
        idx = np.flatnonzero(which == k) if len(uniq) > 1 else np.arange(len(starts))
        data = starts[idx] + HEADER_SIZE
        good = _crc(arr, data, length) == u32[data + length]
        if not good.all():
            bad = min(bad, int(idx[np.argmin(good)]))
    return bad


# -- one-value scalar events --------------------------------------------------------------
_SIMPLE, _TENSOR = 0, 1
_MAX_MISSES = 8  # events of one length that fit no layout before the rest are left alone


class _Layout(NamedTuple):
    """Where the fields of a one-value scalar event of one length are: the wall time at
    byte 1, the step (a ``step_size``-byte varint) at byte 10, then the summary's keys and
    sizes (``head``: the six bytes ``2a S 0a V 0a T`` at ``keys``), the tag (``tag_len``
    bytes), and the value: ``simple_value`` (key 15 and a float32), or one of the tensor
    forms (``prefix``, the 8 bytes before a value of ``size`` bytes), which TensorFlow 2
    follows with the value's metadata (``meta``: the same bytes in every event)."""

    form: int
    step_size: int
    keys: int
    head: int
    tag_len: int
    prefix: int = 0
    size: int = 4
    meta: bytes = b""

    @property
    def tag_at(self) -> int:
        return self.keys + 6

    @property
    def suffix_at(self) -> int:
        return self.tag_at + self.tag_len

    @property
    def value_at(self) -> int:
        return self.suffix_at + (1 if self.form == _SIMPLE else 8)

    @property
    def meta_at(self) -> int:
        return self.value_at + self.size


def _layout(b: bytes) -> _Layout | None:
    """The layout of the one event ``b`` (its bytes), or None when it is not a one-value
    scalar event: ``09 <wall> 10 <step> 2a S 0a V 0a T <tag> (15 <f32> | <tensor form>
    [4a <metadata>])``."""
    n = len(b)
    if n < 22 or b[0] != 0x09 or b[9] != 0x10:
        return None
    size = 1
    while b[9 + size] & 0x80:
        size += 1
        if size > _MAX_STEP_BYTES or 10 + size > n:
            return None
    p = 10 + size
    if p + 6 > n or b[p] != 0x2A or b[p + 2] != 0x0A or b[p + 4] != 0x0A:
        return None
    s, v, t = b[p + 1], b[p + 3], b[p + 5]
    if s >= 0x80 or v >= 0x80 or t >= 0x80 or s != v + 2 or p + 2 + s != n:
        return None
    after = p + 6 + t
    head = int.from_bytes(b[p:p + 6], "little")
    if v == t + 7 and after + 5 == n and b[after] == 0x15:
        return _Layout(_SIMPLE, size, p, head, t)
    for prefix, width in _TENSOR_FORMS:
        if b[after:after + 8] == prefix:
            meta = b[after + 8 + width:]
            if v != t + 10 + width + len(meta):
                return None
            if meta and (len(meta) > _MAX_META or meta[0] != 0x4A or meta[1] != len(meta) - 2):
                return None
            return _Layout(_TENSOR, size, p, head, t, int.from_bytes(prefix, "little"),
                           width, meta)
    return None


_HEAD_MASK = (1 << 48) - 1


def _fits(v: _Views, d: np.ndarray, lay: _Layout) -> np.ndarray:
    """Which events at ``d`` (payload starts, all of the layout's length) have ``lay``'s
    keys, sizes and step size: then every field is at the layout's offsets."""
    u8 = v.u8
    ok = _step_fits(u8, d, lay.step_size)
    ok &= (v.u64[d + lay.keys] & np.uint64(_HEAD_MASK)) == np.uint64(lay.head)
    if lay.form == _SIMPLE:
        ok &= u8[d + lay.suffix_at] == 0x15
    else:
        ok &= v.u64[d + lay.suffix_at] == np.uint64(lay.prefix)
        # the metadata, 8 bytes at a time; the last word ends where the event does (when
        # it overlaps the value, the value's bytes are masked off)
        meta, n = lay.meta, len(lay.meta)
        for at in (sorted({*range(0, n - 7, 8), n - 8}) if n else ()):
            lo = max(0, -at)
            want = int.from_bytes(meta[max(at, 0):at + 8], "little") << (8 * lo)
            mask = ((1 << 64) - 1) ^ ((1 << (8 * lo)) - 1)
            ok &= (v.u64[d + (lay.meta_at + at)] & np.uint64(mask)) == np.uint64(want)
    return ok


def _step_fits(u8: np.ndarray, d: np.ndarray, size: int) -> np.ndarray:
    """Which events at ``d`` start with a wall time and a step of ``size`` varint bytes."""
    ok = u8[d] == 0x09
    ok &= u8[d + 9] == 0x10
    for k in range(size - 1):  # a varint's bytes but its last have the top bit
        ok &= u8[d + (10 + k)] >= 0x80
    ok &= u8[d + (9 + size)] < 0x80
    return ok


class _Merged(NamedTuple):
    """TensorFlow 1's merged summary (``tf.summary.merge_all``): several ``simple_value``
    values in one event, whose bytes after the step are the same in every event of this
    layout but for the values (``template``, compared as 8-byte ``words``: offset, wanted
    bits, mask), at ``values`` (offsets in the event), one per tag of ``names``."""

    step_size: int
    words: tuple
    values: tuple
    names: tuple


def _merged_layout(b: bytes) -> _Merged | None:
    """The layout of ``b`` when it is such an event of two or more values, else None:
    ``09 <wall> 10 <step> 2a <S> (0a <V> 0a <T> <tag> 15 <f32>)+``."""
    n = len(b)
    if n < 30 or b[0] != 0x09 or b[9] != 0x10:
        return None
    try:
        _, p = read_varint(b, 10)
        if p - 10 > _MAX_STEP_BYTES or b[p] != 0x2A:
            return None
        size, q = read_varint(b, p + 1)
        if q + size != n:
            return None
        values, names = [], []
        while q < n:
            if b[q] != 0x0A or b[q + 2] != 0x0A:
                return None
            vlen, tlen = b[q + 1], b[q + 3]
            if vlen != tlen + 7 or tlen >= 0x80 or b[q + 4 + tlen] != 0x15:
                return None
            names.append(b[q + 4:q + 4 + tlen])
            values.append(q + 5 + tlen)
            q += 2 + vlen
    except (IndexError, ValueError):
        return None
    if q != n or len(values) < 2:
        return None
    keep = bytearray(b"\xff" * n)
    for at in values:
        keep[at:at + 4] = b"\0\0\0\0"
    words = []
    for at in sorted({*range(p, n - 7, 8), n - 8}):
        mask = int.from_bytes(keep[at:at + 8], "little")
        words.append((at, int.from_bytes(b[at:at + 8], "little") & mask, mask))
    return _Merged(p - 10, tuple(words), tuple(values), tuple(names))


def _merged_fits(v: _Views, d: np.ndarray, lay: _Merged) -> np.ndarray:
    ok = _step_fits(v.u8, d, lay.step_size)
    for at, want, mask in lay.words:
        ok &= (v.u64[d + at] & np.uint64(mask)) == np.uint64(want)
    return ok


def _decode_merged(v: _Views, d: np.ndarray, idx: np.ndarray, lay: _Merged,
                   tags: dict[bytes, int], firsts: list[int]) -> list[_Found]:
    """One :class:`_Found` per value of the merged events at ``d`` (indices ``idx``)."""
    steps, walls = _step_values(v, d, lay.step_size), v.f64[d + 1]
    out = []
    for name, at in zip(lay.names, lay.values):
        got = tags.get(name)
        if got is None:
            got = tags[name] = len(firsts)
            firsts.append(int(idx[0]))
        else:
            firsts[got] = min(firsts[got], int(idx[0]))
        out.append(_Found(idx, np.full(len(idx), got), steps, walls,
                          v.f32[d + at].astype(np.float64)))
    return out


def _step_values(v: _Views, d: np.ndarray, size: int) -> np.ndarray:
    """The ``size``-byte varints at ``d + 10``."""
    if size <= 4:
        word = v.u32[d + 10].astype(np.int64)
        out = word & 0x7F
        for k in range(1, size):
            out |= (word >> k) & (0x7F << (7 * k))
        return out
    out = np.zeros(len(d), np.int64)
    for k in range(size):
        out |= (v.u8[d + (10 + k)].astype(np.int64) & 0x7F) << (7 * k)
    return out


def _tag_keys(v: _Views, at: np.ndarray, length: int) -> list[np.ndarray]:
    """The tag bytes at ``at`` as 8-byte words (the last one masked to the tag's end): two
    tags are equal when all their words are."""
    words = []
    for w in range(0, max(length, 1), 8):
        word = v.u64[at + w]
        left = length - w
        if left < 8:
            word &= np.uint64((1 << (8 * left)) - 1)
        words.append(word)
    return words


def _tag_groups(v: _Views, at: np.ndarray, length: int) -> tuple[list, np.ndarray, np.ndarray]:
    """The distinct tags of ``length`` bytes at ``at`` (as bytes; in order of first
    appearance), each event's index into them, and the index of each one's first event.

    Tags of up to 8 bytes are one integer each; longer ones are told apart by a 64-bit hash
    of their words, and every event's words are then compared with its group's first
    event's, so a collision is caught and settled by comparing the bytes themselves."""
    words = _tag_keys(v, at, length)
    key = words[0]
    if len(words) > 1:
        with np.errstate(over="ignore"):
            key = key.copy()
            for word in words[1:]:
                key = (key * np.uint64(1099511628211)) ^ word
    uniq, first, which = _distinct(key)
    if len(words) > 1:
        rep = first[which]
        if not all((word == word[rep]).all() for word in words):
            rows = _windows(v.u8, length)[at]
            uniq, first, which = _distinct_rows(rows)
    names = [v.u8[int(at[f]):int(at[f]) + length].tobytes() for f in first.tolist()]
    return names, which, first


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_distinct` for rows of bytes (after a hash collision: never in practice)."""
    seen: dict[bytes, int] = {}
    which = np.empty(len(rows), np.int64)
    first: list[int] = []
    for i, row in enumerate(rows):
        key = row.tobytes()
        k = seen.get(key)
        if k is None:
            k = seen[key] = len(first)
            first.append(i)
        which[i] = k
    return np.arange(len(first)), np.asarray(first, np.int64), which


class _Found(NamedTuple):
    """The events of one layout: their indices, each one's tag (an index into the chunk's
    tags), steps, wall times and values."""

    idx: np.ndarray
    tag: np.ndarray
    steps: np.ndarray
    walls: np.ndarray
    values: np.ndarray


def _decode_layout(v: _Views, d: np.ndarray, idx: np.ndarray, lay: _Layout,
                   tags: dict[bytes, int], firsts: list[int]) -> _Found:
    """The fields of the events at ``d`` (indices ``idx``), all of layout ``lay``; their
    tags are added to ``tags`` (bytes -> index, with each one's first event in
    ``firsts``)."""
    names, which, first = _tag_groups(v, d + lay.tag_at, lay.tag_len)
    ids = np.empty(len(names), np.int64)
    for k, name in enumerate(names):
        got = tags.get(name)
        at = int(idx[first[k]])
        if got is None:
            got = tags[name] = len(firsts)
            firsts.append(at)
        else:  # seen in another layout: which came first in the file?
            firsts[got] = min(firsts[got], at)
        ids[k] = got
    values = v.f64[d + lay.value_at] if lay.size == 8 else \
        v.f32[d + lay.value_at].astype(np.float64)
    return _Found(idx, ids[which] if len(ids) > 1 else np.full(len(idx), ids[0]),
                  _step_values(v, d, lay.step_size), v.f64[d + 1], values)


def _scalars(arr: np.ndarray, data: np.ndarray, lengths: np.ndarray
             ) -> tuple[np.ndarray, list, list]:
    """Recognise one-value scalar events among the events at ``data`` (payload starts):
    ``09 <wall> 10 <step> 2a S 0a V 0a T <tag> (15 <f32> | <tensor form>)``.

    Events of one length nearly always share one layout (keys, step size, tag length): the
    first one's is read with Python, every event of its length is checked against it at
    once, and those that fit are decoded at its offsets; the others try the next one's.

    Returns (mask of the simple_value events decoded, their series, and the tensor-form
    candidates as ``(series, indices)`` per tag)."""
    simple = np.zeros(len(data), bool)
    if not len(data):
        return simple, [], []
    v = _Views(arr)
    found: tuple[list, list] = ([], [])
    tags: tuple[dict, dict] = ({}, {})
    firsts: tuple[list, list] = ([], [])
    uniq, _, which = _distinct(lengths)
    for k, length in enumerate(uniq.tolist()):
        todo = np.flatnonzero(which == k) if len(uniq) > 1 else np.arange(len(data))
        misses = 0
        while len(todo) and misses < _MAX_MISSES:
            start = int(data[todo[0]])
            event = arr[start:start + length].tobytes()
            lay = _layout(event)
            if lay is None:
                merged = _merged_layout(event)
                if merged is None:
                    misses += 1
                    todo = todo[1:]
                    continue
                d = data[todo]
                fits = _merged_fits(v, d, merged)
                found[_SIMPLE].extend(_decode_merged(v, d[fits], todo[fits], merged,
                                                     tags[_SIMPLE], firsts[_SIMPLE]))
                todo = todo[~fits]
                continue
            d = data[todo]
            fits = _fits(v, d, lay)
            sel = todo[fits] if not fits.all() else todo
            found[lay.form].append(_decode_layout(
                v, d[fits] if sel is not todo else d, sel, lay, tags[lay.form],
                firsts[lay.form]))
            todo = todo[~fits]
    out = []
    for form in (_SIMPLE, _TENSOR):
        groups = _series(found[form], tags[form], firsts[form])
        if form == _SIMPLE:
            for _, sel in groups:
                simple[sel] = True
        out.append(groups)
    return simple, [series for series, _ in out[0]], out[1]


def _series(found: list[_Found], tags: dict[bytes, int], firsts: list[int]) -> list:
    """One ``(DecodedSeries, indices)`` per UTF-8 tag, in order of first appearance, each
    in file order; tags that are not UTF-8 are left out (protobuf refuses them, so the
    careful path decides)."""
    if not found:
        return []
    if len(found) == 1:
        f = found[0]
    else:  # several layouts (e.g. steps whose varints grew a byte): back to file order
        cat = [np.concatenate(cols) for cols in zip(*found)]
        order = np.argsort(cat[0], kind="stable")
        f = _Found(*(col[order] for col in cat))
    names = list(tags)
    if len(names) > 1:  # one stable radix sort by tag, then a slice per tag
        order = np.argsort(f.tag.astype(np.int16 if len(names) < 1 << 15 else np.int64),
                           kind="stable")
        bounds = np.concatenate(([0], np.cumsum(np.bincount(f.tag, minlength=len(names)))))
        f = _Found(*(col[order] for col in f))
    else:
        bounds = np.array([0, len(f.idx)])
    out = []
    for t in np.argsort(np.asarray(firsts, np.int64), kind="stable").tolist():
        try:
            name = names[t].decode("utf-8")
        except UnicodeDecodeError:
            continue
        sel = slice(int(bounds[t]), int(bounds[t + 1]))
        out.append((DecodedSeries(name, f.steps[sel], f.walls[sel], f.values[sel]),
                    f.idx[sel]))
    return out


def scan_chunk(view: memoryview, base: int, first: bool = False) -> Chunk:
    """Frame, check and decode what ``view`` (file bytes from offset ``base``) holds, up to
    the first record that is incomplete or fails a CRC (``end`` stops there). With
    ``first``, the first record (the file_version event) is always left to the caller."""
    arr = np.frombuffer(view, np.uint8)
    starts, lengths = _boundaries(arr, view)
    chunk = Chunk(end=base)
    if not len(starts):
        return chunk
    good = _first_bad(arr, starts, lengths)
    starts, lengths = starts[:good], lengths[:good]
    if not good:
        return chunk
    chunk.end = base + int(starts[-1] + lengths[-1]) + HEADER_SIZE + FOOTER_SIZE
    data = starts + HEADER_SIZE
    skip = 1 if first else 0  # the file_version event, checked by the caller
    simple, chunk.series, cand = _scalars(arr, data[skip:], lengths[skip:])
    rest = np.concatenate([np.ones(skip, bool), ~simple])
    for _, idx in cand:
        rest[idx + skip] = False
    chunk.tensor_scalars = [(s, _Events(view, base, starts, data, lengths, idx + skip))
                            for s, idx in cand]
    for i in np.flatnonzero(rest).tolist():
        a = int(data[i])
        chunk.records.append((base + int(starts[i]), view[a:a + int(lengths[i])]))
    return chunk


class _Events:
    """The ``(offset, payload)`` of some events of a chunk, made only if asked for: the
    tensor-form points of a tag that turns out to be a scalar (nearly always) never are."""

    __slots__ = ("view", "base", "starts", "data", "lengths", "idx")

    def __init__(self, view: memoryview, base: int, starts: np.ndarray, data: np.ndarray,
                 lengths: np.ndarray, idx: np.ndarray) -> None:
        self.view, self.base, self.idx = view, base, idx
        self.starts, self.data, self.lengths = starts, data, lengths

    def __len__(self) -> int:
        return len(self.idx)

    def __iter__(self) -> Iterator[tuple[int, memoryview]]:
        for i in self.idx.tolist():
            a = int(self.data[i])
            yield self.base + int(self.starts[i]), self.view[a:a + int(self.lengths[i])]


def settle(decoder: Any, result: Any, decoded: list) -> tuple[list[DecodedSeries], int]:
    """The scalar series of a chunk and how many events they came from, once its other
    events are in ``decoded`` (``(offset, decoder.decode(payload))`` pairs; so the plugin of
    every tag is known). Tensor-form candidates of a tag that is not a scalar are decoded by
    the decoder after all, and appended to ``decoded``."""
    if not isinstance(result, Chunk):
        return [], 0
    out = list(result.series)
    count = sum(len(s.steps) for s in out)
    for series, items in result.tensor_scalars:
        if decoder.plugins.get(series.tag, "") in ("scalars", ""):
            out.append(series)
            count += len(items)
        else:
            decoded.extend((offset, decoder.decode(payload)) for offset, payload in items)
    return out, count


def scan_events(f: BinaryIO, offset: int = 0, size: int | None = None,
                chunk: int = CHUNK) -> Iterator[Any]:
    """:func:`visualdl.format.framing.scan_file` for event files: each chunk goes through
    :func:`scan_chunk` (yielding a :class:`Chunk`); where that cannot go on (damage, a
    torn tail, a record larger than the buffer) one chunk of ``scan_file`` (yielding its
    ``ScanResult``) takes over, then the fast path resumes."""
    if size is None:
        size = os.fstat(f.fileno()).st_size
    buffer = bytearray(max(HEADER_SIZE, min(max(chunk, _READ), size - offset)))
    while offset < size:
        f.seek(offset)
        view = memoryview(buffer)[:min(len(buffer), size - offset)]
        got = f.readinto(view) or 0
        if not got:
            return  # the file shrank under us
        # Numpy's temporaries grow with what one call handles: ``chunk`` bytes at a time,
        # gathered into one result per read (so a reader adds, and a server re-sorts, a
        # tag's points once per read rather than once per chunk).
        parts, pos = [], 0
        while pos < got:
            part = scan_chunk(view[pos:min(got, pos + chunk)], offset + pos,
                              first=offset + pos == 0)
            if part.end == offset + pos:
                break
            parts.append(part)
            pos = part.end - offset
        if parts:
            yield _merged(parts)
            offset += pos
            continue
        careful = scan_file(f, offset, size, chunk)
        result = next(careful, None)
        careful.close()
        if result is None:
            return
        yield result
        if result.tail or result.end <= offset:
            return
        offset = result.end


_READ = 8 << 20  # bytes per read of an event file (its chunks are scanned one by one)


def _merged(parts: list[Chunk]) -> Chunk:
    """One :class:`Chunk` of consecutive ones: one series per tag, records in order."""
    if len(parts) == 1:
        return parts[0]
    out = Chunk(end=parts[-1].end)
    by_tag: dict[str, list] = {}
    for part in parts:
        out.records.extend(part.records)
        out.tensor_scalars.extend(part.tensor_scalars)
        for series in part.series:
            by_tag.setdefault(series.tag, []).append(series)
    out.series = [group[0] if len(group) == 1 else DecodedSeries(
        tag, *(np.concatenate([getattr(g, name) for g in group])
               for name in ("steps", "wall_times", "values")))
        for tag, group in by_tag.items()]
    return out
