"""Encoding scalar series straight to protobuf wire bytes with numpy.

A million ``add_scalar`` calls are a million Python tuples; turning them into protobuf
repeated fields one object at a time costs more than the calls themselves. The wire format
of a packed series is simple (record.proto's ``Entry.scalars`` = ``ScalarSeries``: the tag,
then packed varint steps, packed little-endian doubles for wall times and values), so this
module builds exactly the bytes protobuf would, from numpy arrays. A test checks that the
bytes are identical to protobuf's own serialization, field numbers included.

Reading is the mirror image: :func:`decode_scalar_record` turns a record made only of scalar
series into arrays without building protobuf objects (whose repeated fields would be copied
once into protobuf's arena and again into numpy). Anything it does not recognise, it leaves
to protobuf, which stays the reference decoder.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# Field keys: (field number << 3) | wire type 2 (length-delimited).
_ENTRY_SCALARS = b"\x0a"    # Entry.scalars = 1
_SERIES_TAG = b"\x0a"       # ScalarSeries.tag = 1
_SERIES_STEPS = b"\x12"     # ScalarSeries.steps = 2 (packed int64)
_SERIES_WALLS = b"\x1a"     # ScalarSeries.wall_times = 3 (packed double)
_SERIES_VALUES = b"\x22"    # ScalarSeries.values = 4 (packed double)
RECORD_ENTRY = b"\x12"      # Record.entries = 2

_EXACT = 2.0**53  # float64 holds every integer below this exactly


def varint(n: int) -> bytes:
    """One unsigned varint (lengths, which are never negative)."""
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def packed_varints(values: np.ndarray) -> bytes:
    """int64 values as protobuf varints (negative ones take 10 bytes, as in protobuf)."""
    u = values.astype(np.int64, copy=False).view(np.uint64)
    sizes = np.ones(len(u), np.int64)
    rest = u >> np.uint64(7)
    while rest.any():
        sizes += rest > 0
        rest >>= np.uint64(7)
    out = np.empty(int(sizes.sum()), np.uint8)
    starts = np.cumsum(sizes) - sizes
    for k in range(int(sizes.max()) if len(u) else 0):
        has = sizes > k
        byte = ((u[has] >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        more = (sizes[has] > k + 1).astype(np.uint8) << np.uint8(7)
        out[starts[has] + k] = byte | more
    return out.tobytes()


def _field(key: bytes, payload: bytes) -> bytes:
    return key + varint(len(payload)) + payload


def columns(flat: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split a flat ``[step, wall, value, step, wall, value, ...]`` buffer into arrays."""
    table = np.fromiter(flat, dtype=np.float64, count=len(flat)).reshape(-1, 3)
    steps_f = table[:, 0]
    if len(steps_f) and np.abs(steps_f).max() >= _EXACT:  # huge steps: convert exactly
        steps = np.fromiter(flat[0::3], dtype=np.int64, count=len(steps_f))
    else:
        steps = steps_f.astype(np.int64)
    return steps, table[:, 1], table[:, 2]


def encode_entry(tag: str, flat: list) -> bytes:
    """The serialized ``Entry`` holding one tag's packed series."""
    steps, walls, values = columns(flat)
    series = b"".join((
        _field(_SERIES_TAG, tag.encode("utf-8")),
        _field(_SERIES_STEPS, packed_varints(steps)),
        _field(_SERIES_WALLS, np.ascontiguousarray(walls, dtype="<f8").tobytes()),
        _field(_SERIES_VALUES, np.ascontiguousarray(values, dtype="<f8").tobytes()),
    ))
    return _field(_ENTRY_SCALARS, series)


def record_entry(entry: bytes) -> bytes:
    """One serialized ``Entry`` as it sits inside a serialized ``Record``."""
    return _field(RECORD_ENTRY, entry)


# -- reading ---------------------------------------------------------------------------------
_WIRE_LEN = 2


def read_varint(buf: memoryview, pos: int) -> tuple[int, int]:
    """(value, next position) of the varint at ``pos``; IndexError past the end."""
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def unpack_varints(data: bytes | memoryview) -> np.ndarray:
    """Packed protobuf varints as int64 (the inverse of :func:`packed_varints`)."""
    b = np.frombuffer(data, dtype=np.uint8)
    last = b < 0x80  # the last byte of each varint
    n = int(np.count_nonzero(last))
    if n and len(b) % n == 0:
        # The common case: every varint has the same size (steps in one record are
        # usually of one magnitude), so the bytes form an (n, size) table.
        size = len(b) // n
        if size <= 10 and last[size - 1 :: size].all():
            rows = b.reshape(n, size)
            out = rows[:, size - 1].astype(np.uint64)
            for k in range(size - 2, -1, -1):
                out <<= np.uint64(7)
                out |= rows[:, k] & np.uint8(0x7F)
            return out.view(np.int64)
    return _unpack_mixed(b, last)


def _unpack_mixed(b: np.ndarray, last: np.ndarray) -> np.ndarray:
    if not len(b):
        return np.empty(0, np.int64)
    if not last[-1]:
        raise ValueError("packed varints end inside a varint")
    ends = np.flatnonzero(last)
    starts = np.empty(len(ends), np.int64)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    sizes = ends - starts + 1
    longest = int(sizes.max())
    if longest > 10:
        raise ValueError("varint too long")
    out = (b[starts] & np.uint8(0x7F)).astype(np.uint64)
    for k in range(1, longest):  # the k-th byte of every varint that has one
        more = sizes > k
        byte = b[np.minimum(starts + k, len(b) - 1)] & np.uint8(0x7F)
        out |= np.where(more, byte, np.uint8(0)).astype(np.uint64) << np.uint64(7 * k)
    return out.view(np.int64)


class DecodedSeries(NamedTuple):
    """One tag's series from a record, as :func:`decode_scalar_record` returns it."""

    tag: str
    steps: np.ndarray
    wall_times: np.ndarray
    values: np.ndarray


class CompactSeries(NamedTuple):
    """A series kept small in memory, exactly: ``steps`` are int32 when every step of the
    record fits, ``values`` float32 when every value of the record is a float32 (a model's
    float32 loss stored as a double), and ``wall_offsets`` are float32 offsets from
    ``wall_base`` when ``wall_base + float64(offset)`` gives back every wall time bit for
    bit (else ``wall_base`` is None and ``wall_offsets`` are the float64 wall times).
    :meth:`full` gives the int64/float64 columns :class:`DecodedSeries` holds."""

    tag: str
    steps: np.ndarray
    wall_offsets: np.ndarray
    values: np.ndarray
    wall_base: float | None

    def full(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return full_columns(self.steps, self.wall_offsets, self.values, self.wall_base)


def full_columns(steps: np.ndarray, walls: np.ndarray, values: np.ndarray,
                 wall_base: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """int64 steps, float64 wall times and values from (possibly) compact columns."""
    if wall_base is not None:
        walls = walls.astype(np.float64) + wall_base
    return (steps.astype(np.int64, copy=False), walls.astype(np.float64, copy=False),
            values.astype(np.float64, copy=False))


def decode_scalar_record(payload: bytes | memoryview, compact: bool = False,
                         ) -> list[DecodedSeries] | list[CompactSeries] | None:
    """The series of a serialized ``Record`` whose fields are all ``entries`` holding
    ``scalars``, each series field packed and present at most once.

    Returns None for anything else (a header, other kinds, other encodings, bad bytes): the
    caller then decodes the record with protobuf, which reports any error. The record's
    layout is checked whole before any array is built.

    A record of a flush holds one series per tag (20 tags: 20 small series), so the columns
    of all its series are decoded together: one numpy pass per column for the record instead
    of one per series (per-series numpy calls were most of the time of loading 2,000 runs).
    The series returned are slices of three arrays owned by the record.

    ``compact=True`` returns :class:`CompactSeries` instead (16 bytes a point or less
    instead of 24, chosen per record, every value exact): for a reader that keeps them.
    """
    layout = scan_record(payload)
    if layout is None:
        return None
    try:
        return decode_layout(payload, layout, compact)
    except ValueError:  # UnicodeDecodeError is a ValueError
        return None


def _varint_at(buf: memoryview, pos: int, end: int) -> tuple[int, int]:
    """(value, next position) of a varint that must end before ``end``; IndexError else."""
    byte = buf[pos]
    if byte < 0x80:  # nearly every key and length of a scalar record
        if pos >= end:
            raise IndexError("varint past its message")
        return byte, pos + 1
    value, nxt = read_varint(buf, pos)
    if nxt > end:
        raise IndexError("varint past its message")
    return value, nxt


def scan_record(payload: bytes | memoryview) -> list[list[int]] | None:
    """Each series' field spans ``[tag_start, tag_end, steps_start, steps_end, walls_start,
    walls_end, values_start, values_end]`` (absent fields: empty spans), or None when the
    record is not made only of scalar series (see :func:`decode_scalar_record`)."""
    buf = memoryview(payload)
    size = len(buf)
    out: list[list[int]] = []
    pos = 0
    try:
        while pos < size:
            key, pos = _varint_at(buf, pos, size)
            if key != 0x12:  # Record.entries, length-delimited
                return None
            length, pos = _varint_at(buf, pos, size)
            entry_end = pos + length
            if entry_end > size:
                return None
            key, pos = _varint_at(buf, pos, entry_end)
            if key != 0x0A:  # exactly one field: Entry.scalars
                return None
            length, pos = _varint_at(buf, pos, entry_end)
            if pos + length != entry_end:
                return None
            spans = [0, 0, 0, 0, 0, 0, 0, 0]
            seen = 0
            while pos < entry_end:  # the hot loop: one-byte keys and lengths inline
                key = buf[pos]  # fields 1-4: one-byte keys (a longer one: protobuf's)
                number = key >> 3
                if key & 7 != _WIRE_LEN or not 1 <= number <= 4 or seen & (1 << number):
                    return None
                seen |= 1 << number
                pos += 1
                if pos >= entry_end:
                    return None
                length = buf[pos]
                if length < 0x80:
                    pos += 1
                else:
                    length, pos = read_varint(buf, pos)
                if pos + length > entry_end:
                    return None
                spans[2 * number - 2] = pos
                pos += length
                spans[2 * number - 1] = pos
            out.append(spans)
    except (IndexError, ValueError):
        return None
    return out


def decode_layout(payload: bytes | memoryview, layout: list[list[int]],
                   compact: bool = False) -> list:
    raw = np.frombuffer(payload, dtype=np.uint8)
    if not layout:
        return []
    spans = np.array(layout, dtype=np.int64).reshape(-1, 8)
    lengths = spans[:, 1::2] - spans[:, 0::2]
    if (lengths[:, 2:] % 8).any():
        raise ValueError("packed doubles of a length that is not a multiple of 8")
    steps = _gather(raw, spans[:, 2], spans[:, 3])
    last = steps < 0x80
    if len(steps) and not last[np.cumsum(lengths[:, 1])[lengths[:, 1] > 0] - 1].all():
        raise ValueError("packed varints end inside a varint")
    # varints per series: the last bytes in its span (count_nonzero is a fast pass;
    # a cumulative sum over every byte cost more than the decoding)
    step_ends = np.cumsum(lengths[:, 1]).tolist()
    step_counts = [int(np.count_nonzero(last[end - size:end]))
                   for end, size in zip(step_ends, lengths[:, 1].tolist())]
    step_col = unpack_varints(steps)
    walls = _gather(raw, spans[:, 4], spans[:, 5]).view("<f8").astype(np.float64, copy=False)
    values = _gather(raw, spans[:, 6], spans[:, 7]).view("<f8").astype(np.float64, copy=False)
    wall_counts = (lengths[:, 2] // 8).tolist()
    value_counts = (lengths[:, 3] // 8).tolist()
    if compact and step_counts == wall_counts == value_counts:
        return _compact_series(payload, layout, step_counts, step_col, walls, values)
    out: list = []
    s = w = v = 0
    for k, span in enumerate(layout):
        ns, nw, nv = step_counts[k], wall_counts[k], value_counts[k]
        tag = str(payload[span[0]:span[1]], "utf-8") if span[1] > span[0] else ""
        if compact:  # columns of different lengths: kept as they are, refused by the store
            out.append(CompactSeries(tag, step_col[s:s + ns], walls[w:w + nw],
                                     values[v:v + nv], None))
        else:
            out.append(DecodedSeries(tag, step_col[s:s + ns], walls[w:w + nw],
                                     values[v:v + nv]))
        s, w, v = s + ns, w + nw, v + nv
    return out


_I32 = np.iinfo(np.int32)


def _compact_series(payload: bytes | memoryview, layout: list[list[int]], counts: list[int],
                    steps: np.ndarray, walls: np.ndarray, values: np.ndarray,
                    ) -> list[CompactSeries]:
    """Each series of the record in the smallest dtypes that hold it exactly (see
    :class:`CompactSeries`), decided per series but computed per record: one numpy pass per
    column, then ``reduceat`` over the series' spans (a float64 learning rate logged
    beside a float32 loss leaves the loss compact)."""
    n = np.array(counts, np.int64)
    starts = np.cumsum(n) - n
    has = n > 0
    at = starts[has]

    def per_series(ok: np.ndarray) -> list[bool]:
        out = np.ones(len(n), bool)
        if len(at):
            out[has] = np.logical_and.reduceat(ok, at)
        return out.tolist()

    steps_ok = per_series((steps >= _I32.min) & (steps <= _I32.max))
    steps32 = steps.astype(np.int32)
    small = values.astype(np.float32)
    values_ok = per_series(small.astype(np.float64).view(np.int64) == values.view(np.int64))
    bases_at = walls[at]
    rep = np.repeat(bases_at, n[has])
    offsets = (walls - rep).astype(np.float32)
    walls_ok = per_series((offsets.astype(np.float64) + rep).view(np.int64)
                          == walls.view(np.int64))
    bases = np.zeros(len(n))
    bases[has] = bases_at
    base_list = bases.tolist()
    out = []
    for k, span in enumerate(layout):
        lo, hi = int(starts[k]), int(starts[k]) + counts[k]
        tag = str(payload[span[0]:span[1]], "utf-8") if span[1] > span[0] else ""
        # a series that does not fit is copied out, so the record's float64 / int64
        # arrays are not kept alive by it when other series of the record fit
        st = steps32[lo:hi] if steps_ok[k] else steps[lo:hi] if not any(steps_ok) \
            else steps[lo:hi].copy()
        va = small[lo:hi] if values_ok[k] else values[lo:hi] if not any(values_ok) \
            else values[lo:hi].copy()
        if walls_ok[k]:
            wa, base = offsets[lo:hi], base_list[k]
        else:
            wa = walls[lo:hi] if not any(walls_ok) else walls[lo:hi].copy()
            base = None
        out.append(CompactSeries(tag, st, wa, va, base))
    return out


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-for-bit equality of two float64 arrays (-0.0 is not 0.0; a NaN is itself):
    cheaper than ``np.array_equal(equal_nan=True)``, and stricter."""
    return bool((a.view(np.int64) == b.view(np.int64)).all())


def _gather(raw: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The bytes of each ``[start, end)`` span, joined into a new array (a copy: a view
    would keep the reader's chunk buffer alive)."""
    if len(starts) == 1:
        return raw[int(starts[0]):int(ends[0])].copy()
    return np.concatenate([raw[a:b] for a, b in zip(starts.tolist(), ends.tolist())])
