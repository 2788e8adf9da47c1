"""A chunk of an event file at once: framing, CRCs and scalar events with numpy.

A training log is mostly one-value scalar events of 40-60 bytes (torch and tensorboardX
write one ``Event`` per ``add_scalar``): a million of them take seconds when each record is
framed, CRC-checked and parsed on its own, however cheap each step is. Here a whole chunk
(a couple of megabytes) is handled as arrays:

1. record boundaries: every position whose eight length bytes could frame a record is
   found at once; those whose declared end is another such position keep their place, and
   their length CRCs (one per distinct length, a chunk holds few) are checked. When the
   survivors chain from the chunk's first byte to its last record, those are the records;
   otherwise (damage, or a payload that holds a well-framed header) they are walked one by
   one with ``struct``;
2. data CRCs are computed for all records of one length together: CRC32C is affine in
   the bytes, so a record's CRC is an XOR of per-position table entries, and bytes that are
   the same in every record of the group (field keys, tags) are looked up only once;
3. events laid out as ``add_scalar`` writes them (wall time, step, one value of a tag and
   a ``simple_value``, or the tensor form of the scalars plugin) are recognised and
   decoded by looking at the same byte offsets of every record at once.

Anything else (other kinds, damage, a record cut by the chunk's end) is left to the
careful per-record path (:func:`visualdl.format.framing.scan_file` and
:class:`~visualdl.sources.tfevents.decode.FileDecoder`): :func:`scan_chunk` stops before the
first record it cannot vouch for, and returns the events it did not decode as payloads.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterator

import numpy as np

import google_crc32c

from visualdl.format.framing import (CHUNK, FOOTER_SIZE, HEADER_SIZE, MAX_RECORD_SIZE,
                                     _crc_tables, _masked_length_crcs, masked_crc,
                                     scan_file)
from visualdl.format.scalar_codec import DecodedSeries

_LEN = struct.Struct("<Q")
_T0 = _crc_tables()[0]
_MASK_DELTA = np.uint32(0xA282EAD8)
_MAX_STEP_BYTES = 9  # varints of up to 63 bits: every non-negative int64 step
# The tensor form's value after the tag: tensor (8) of 10 bytes: dtype float (08 01), an
# empty shape (12 00), one packed float_val (2a 04 + 4 bytes).
_TENSOR_SCALAR = np.frombuffer(b"\x42\x0a\x08\x01\x12\x00\x2a\x04", np.uint8)


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


def _chain(arr: np.ndarray, cand: np.ndarray, n: int) -> tuple | None:
    """The records among candidate starts ``cand`` when they chain from the buffer's first
    byte to its last complete record (each one's end the next one's start), else None."""
    lengths = _u32_at(arr, cand).astype(np.int64)  # the top four bytes are zero
    ends = cand + lengths + (HEADER_SIZE + FOOTER_SIZE)
    whole = ends <= n  # (also rules out nearly every position that is no record start)
    cand, lengths, ends = cand[whole], lengths[whole], ends[whole]
    # a record is followed by another (or by the end of the buffer): most positions that
    # only look like a header are not, and need no CRC
    starts_here = np.zeros(n + 1, bool)
    starts_here[cand] = True
    linked = starts_here[ends] | (ends > n - HEADER_SIZE)
    cand, lengths, ends = cand[linked], lengths[linked], ends[linked]
    good = _length_crcs(lengths) == _u32_at(arr, cand + 8)
    cand, lengths, ends = cand[good], lengths[good], ends[good]
    if len(cand) and cand[0] == 0 and (ends[:-1] == cand[1:]).all():
        return cand, lengths
    return None


def _boundaries(arr: np.ndarray, view: memoryview) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the complete records at the head of the buffer whose length
    CRC checks (data CRCs are not checked yet).

    Every position that could frame a record (a length under 2**31 has its top four bytes
    zero) has its length CRC checked at once; when each survivor's declared end is the
    next survivor, those are the records. Otherwise (a payload that happens to hold a
    well-framed header, or damage) the records are walked one by one."""
    n = len(arr)
    m = n - HEADER_SIZE + 1
    if m <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    z = arr == 0
    plausible = z[4:m + 4] & z[5:m + 5] & z[6:m + 6] & z[7:m + 7] & (arr[3:m + 3] < 0x80)
    # Every event TensorBoard's writers make starts with its wall time (field 1, key 09):
    # trying those positions first leaves a quarter of the candidates; a file where that
    # does not hold (a wall time of 0 is not serialized) is searched again without it.
    wall_first = plausible.copy()
    wall_first[:m - 1] &= arr[HEADER_SIZE:n] == 0x09
    for where in (wall_first, plausible):
        found = _chain(arr, np.flatnonzero(where), n)
        if found is not None:
            return found
    starts, lengths = _walk(view, n)
    if len(starts):
        ok = _length_crcs(lengths) == _u32_at(arr, starts + 8)
        if not ok.all():
            keep = int(np.argmin(ok))
            starts, lengths = starts[:keep], lengths[:keep]
    return starts, lengths


def _u32_at(arr: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The little-endian uint32 at each position."""
    out = arr[pos].astype(np.uint32)
    for k in (1, 2, 3):
        out |= arr[pos + k].astype(np.uint32) << np.uint32(8 * k)
    return out


def _windows(arr: np.ndarray, length: int) -> np.ndarray:
    """Every ``length``-byte window of ``arr`` as rows (a view: indexing it by positions
    copies just those bytes, with no index matrix)."""
    return np.lib.stride_tricks.sliding_window_view(arr, length)


def _length_crcs(lengths: np.ndarray) -> np.ndarray:
    """Masked CRC32C of each 8-byte little-endian length (all under 2**31, so four
    table lookups each: framing's vectorised search computes them the same way)."""
    return _masked_length_crcs(lengths.astype(np.uint32))


def _masked(crc: np.ndarray) -> np.ndarray:
    return ((crc >> np.uint32(15)) | (crc << np.uint32(17))) + _MASK_DELTA


def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True, return_inverse=True)`` for arrays that hold
    few distinct values (tags, record lengths): the distinct values are taken from the
    first rows and everything is matched against them with a binary search; only when
    some value is not among them is the whole array sorted."""
    head = values[:256]
    uniq = np.unique(head)
    at = np.minimum(np.searchsorted(uniq, values), len(uniq) - 1)
    if len(values) > len(head) and (uniq[at] == values).all():
        first = np.full(len(uniq), len(values), np.int64)
        np.minimum.at(first, at[:len(head)], np.arange(len(head)))
        return uniq, first, at
    uniq, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    return uniq, first, inverse.reshape(-1)


_TABLE_MAX = 512  # longer records are checked one by one with google_crc32c (C)
_tables: dict[int, tuple[np.ndarray, np.uint32]] = {}


def _position_tables(length: int) -> tuple[np.ndarray, np.uint32]:
    """CRC32C is affine in the message bits: ``crc(x) = crc(0...0) ^ XOR_j T[j][x_j]``,
    where ``T[j][b]`` is byte ``b``'s contribution at position ``j`` (its table entry
    carried through the zero bytes after it). So the CRCs of many messages of one length
    are one gather and one XOR-reduce, with no loop over bytes."""
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
    same = (cols == cols[:, :1]).all(axis=1)
    first = cols[:, 0]
    for j in np.flatnonzero(same).tolist():
        zero ^= table[j, first[j]]
    varying = np.flatnonzero(~same)
    if not len(varying):
        return _masked(np.full(len(pos), zero, np.uint32))
    cols = cols[varying].astype(np.int32)
    cols += (varying.astype(np.int32) * 256)[:, None]
    crc = np.bitwise_xor.reduce(table.reshape(-1).take(cols), axis=0) ^ zero
    return _masked(crc)


def _first_bad(arr: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> int:
    """Index of the first record whose data CRC fails (len(starts) if none)."""
    bad = len(starts)
    uniq, _, which = _distinct(lengths)
    for k, length in enumerate(uniq.tolist()):
        idx = np.flatnonzero(which == k)
        data = starts[idx] + HEADER_SIZE
        good = _crc(arr, data, length) == _u32_at(arr, data + length)
        if not good.all():
            bad = min(bad, int(idx[np.argmin(good)]))
    return bad


def _steps(arr: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The varints at ``at``: (values, sizes, ok); ok is False past 9 bytes."""
    value = np.zeros(len(at), np.int64)
    size = np.zeros(len(at), np.int64)
    going = np.ones(len(at), bool)
    for k in range(_MAX_STEP_BYTES):
        byte = arr[at + k].astype(np.int64)
        value |= np.where(going, (byte & 0x7F) << (7 * k), 0)
        size += going
        going &= byte >= 0x80
        if not going.any():
            break
    return value, size, ~going


def _tag_groups(arr: np.ndarray, tag_at: np.ndarray, tag_len: np.ndarray
                ) -> tuple[list, np.ndarray]:
    """The distinct tags (in order of first appearance; None for bytes that are not UTF-8)
    and each record's index into them.

    Rows of tag bytes are told apart by a 64-bit hash (np.unique of integers is fast; of
    byte rows it is not), and every row is then compared with its group's first row, so a
    collision is caught and settled by comparing the bytes themselves."""
    which = np.empty(len(tag_at), np.int64)
    names: list = []
    firsts: list[int] = []
    lens, _, by_len = _distinct(tag_len)
    for k, length in enumerate(lens.tolist()):
        idx = np.flatnonzero(by_len == k)
        rows = arr[tag_at[idx][:, None] + np.arange(length)]
        h = np.full(len(rows), length, np.uint64)
        with np.errstate(over="ignore"):
            for col in rows.T:
                h = h * np.uint64(1099511628211) + col
        _, first, inverse = _distinct(h)
        if not (rows == rows[first[inverse]]).all():
            _, first, inverse = np.unique(rows, axis=0, return_index=True,
                                          return_inverse=True)
            inverse = inverse.reshape(-1)
        base = len(names)
        for f in first.tolist():
            try:
                names.append(rows[f].tobytes().decode("utf-8"))
            except UnicodeDecodeError:
                names.append(None)
            firsts.append(int(idx[f]))
        which[idx] = base + inverse
    # renumber in order of first appearance, so series come out in file order
    order = np.argsort(np.asarray(firsts, np.int64), kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return [names[i] for i in order], rank[which]


def _members(which: np.ndarray, count: int) -> list[np.ndarray]:
    """For each of ``count`` groups, the indices whose ``which`` is that group, in order."""
    if count <= 32:  # a pass per group beats a sort
        return [np.flatnonzero(which == t) for t in range(count)]
    order = np.argsort(which, kind="stable")
    bounds = np.searchsorted(which[order], np.arange(count + 1))
    return [order[bounds[t]:bounds[t + 1]] for t in range(count)]


def _scalars(arr: np.ndarray, data: np.ndarray, lengths: np.ndarray
             ) -> tuple[np.ndarray, list, list]:
    """Recognise the one-value scalar layout in the events at ``data`` (payload starts):
    ``09 <wall> 10 <step> 2a S 0a V 0a T <tag> (15 <f32> | <tensor form>)``.

    Returns (mask of the simple_value events decoded, their series, and the tensor-form
    candidates as ``(series, indices)`` per tag)."""
    if not len(data):
        return np.zeros(0, bool), [], []
    big = lengths >= 20
    d = np.where(big, data, 0)
    ok = big & (arr[d] == 0x09) & (arr[d + 9] == 0x10)
    step, k, ok_step = _steps(arr, np.minimum(d + 10, len(arr) - _MAX_STEP_BYTES))
    ok &= ok_step
    p = np.minimum(np.where(ok, d + 10 + k, 0), len(arr) - 6)
    n_tag = arr[p + 5].astype(np.int64)
    ok &= (arr[p] == 0x2A) & (arr[p + 2] == 0x0A) & (arr[p + 4] == 0x0A) & (n_tag < 0x80)
    ok &= (arr[p + 1] < 0x80) & (arr[p + 3] < 0x80)
    n_value = arr[p + 3].astype(np.int64)
    ok &= arr[p + 1].astype(np.int64) == n_value + 2
    after = p + 6 + n_tag  # the first byte after the tag
    end = data + lengths
    simple = ok & (n_value == n_tag + 7) & (after + 5 == end)
    simple &= arr[np.where(simple, after, 0)] == 0x15
    tensor = ok & (n_value == n_tag + 14) & (after + 12 == end)
    if tensor.any():
        t_at = np.where(tensor, after, 0)
        tensor &= (_windows(arr, 8)[t_at] == _TENSOR_SCALAR).all(axis=1)
    found: list = []
    for mask, value_at in ((simple, after + 1), (tensor, after + 8)):
        if not mask.any():
            found.append([])
            continue
        idx = np.flatnonzero(mask)
        names, which = _tag_groups(arr, p[idx] + 6, n_tag[idx])
        walls = _windows(arr, 8)[d[idx] + 1].copy().view("<f8").reshape(-1)
        values = _windows(arr, 4)[value_at[idx]].copy().view("<f4").reshape(-1)
        values = values.astype(np.float64)
        groups = []
        for name, sel in zip(names, _members(which, len(names))):
            if name is None:  # not UTF-8: protobuf refuses it, so the careful path decides
                mask[idx[sel]] = False
                continue
            groups.append((DecodedSeries(name, step[idx][sel], walls[sel], values[sel]),
                           idx[sel]))
        found.append(groups)
    return simple, [series for series, _ in found[0]], found[1]


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
    chunk.tensor_scalars = [
        (s, [(base + int(starts[i]), view[int(data[i]):int(data[i] + lengths[i])])
             for i in (idx + skip).tolist()]) for s, idx in cand]
    for i in np.flatnonzero(rest).tolist():
        a = int(data[i])
        chunk.records.append((base + int(starts[i]), view[a:a + int(lengths[i])]))
    return chunk


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
