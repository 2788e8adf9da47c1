"""Encoding scalar series straight to protobuf wire bytes with numpy.

A million ``add_scalar`` calls are a million Python tuples; turning them into protobuf
repeated fields one object at a time costs more than the calls themselves. The wire format
of a packed series is simple (record.proto's ``Entry.scalars`` = ``ScalarSeries``: the tag,
then packed varint steps, packed little-endian doubles for wall times and values), so this
module builds exactly the bytes protobuf would, from numpy arrays. A test checks that the
bytes are identical to protobuf's own serialization, field numbers included.
"""

from __future__ import annotations

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
