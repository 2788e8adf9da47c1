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
_SERIES_FIELDS = {1: "tag", 2: "steps", 3: "walls", 4: "values"}


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


def _length_delimited(buf: memoryview, start: int, end: int):  # noqa: ANN202 - a generator
    """Yield (field number, payload) for each field in ``buf[start:end]``; ValueError for
    any field that is not length-delimited, or one that runs past ``end``."""
    pos = start
    while pos < end:
        key, pos = read_varint(buf, pos)
        if key & 7 != _WIRE_LEN:
            raise ValueError("not a length-delimited field")
        length, pos = read_varint(buf, pos)
        if pos + length > end:
            raise ValueError("field runs past its message")
        yield key >> 3, buf[pos : pos + length]
        pos += length


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
    out = (b[starts] & 0x7F).astype(np.uint64)
    for k in range(1, longest):
        has = np.flatnonzero(sizes > k)
        out[has] |= (b[starts[has] + k] & np.uint8(0x7F)).astype(np.uint64) << np.uint64(7 * k)
    return out.view(np.int64)


def _doubles(data: memoryview) -> np.ndarray:
    if len(data) % 8:
        raise ValueError("packed doubles of a length that is not a multiple of 8")
    # A copy: a view would keep the whole read buffer (images and all) alive.
    return np.frombuffer(data, dtype="<f8").astype(np.float64)


class DecodedSeries(NamedTuple):
    """One tag's series from a record, as :func:`decode_scalar_record` returns it."""

    tag: str
    steps: np.ndarray
    wall_times: np.ndarray
    values: np.ndarray


def decode_scalar_record(payload: bytes | memoryview) -> list[DecodedSeries] | None:
    """The series of a serialized ``Record`` whose fields are all ``entries`` holding
    ``scalars``, each series field packed and present at most once.

    Returns None for anything else (a header, other kinds, other encodings, bad bytes): the
    caller then decodes the record with protobuf, which reports any error. The record's
    layout is checked whole before any array is built.
    """
    buf = memoryview(payload)
    found = []
    try:
        for number, entry in _length_delimited(buf, 0, len(buf)):
            if number != 2:  # Record.entries
                return None
            fields = list(_length_delimited(entry, 0, len(entry)))
            if len(fields) != 1 or fields[0][0] != 1:  # exactly Entry.scalars
                return None
            parts: dict[str, memoryview] = {}
            for number, data in _length_delimited(fields[0][1], 0, len(fields[0][1])):
                name = _SERIES_FIELDS.get(number)
                if name is None or name in parts:
                    return None
                parts[name] = data
            found.append(parts)
        empty = memoryview(b"")
        return [
            DecodedSeries(
                bytes(parts.get("tag", empty)).decode("utf-8"),
                unpack_varints(parts.get("steps", empty)),
                _doubles(parts.get("walls", empty)),
                _doubles(parts.get("values", empty)),
            )
            for parts in found
        ]
    except (IndexError, ValueError):  # UnicodeDecodeError is a ValueError
        return None
