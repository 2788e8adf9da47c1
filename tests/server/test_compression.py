"""Gzip of big bodies in slices on several threads: one valid gzip member, byte for byte the
data back, the same bytes each time (ETags), about as small as one stream."""

from __future__ import annotations

import gzip
import json
import os
import zlib

import numpy as np
import pytest

from visualdl.server.compression import _SLICED, gzip_bytes


def _json_like(size: int) -> bytes:
    """Text shaped like a graph view's answer: repetitive keys, varied numbers."""
    rng = np.random.default_rng(7)
    items = []
    total = 0
    while total < size:
        item = json.dumps({"id": f"n{len(items)}", "x": float(rng.integers(0, 4000)) / 2,
                           "y": float(rng.integers(0, 10**6)) / 2, "title": "MatMul",
                           "points": rng.integers(0, 999, 6).tolist()})
        items.append(item)
        total += len(item) + 1
    return ("[" + ",".join(items) + "]").encode()[:size]


@pytest.mark.parametrize("extra", [0, 1, 3, 32767, 32769])
def test_sliced_gzip_round_trips(extra: int) -> None:
    data = _json_like(_SLICED + extra)
    zipped = gzip_bytes(data, 1)
    assert gzip.decompress(zipped) == data
    # one member: zlib in gzip mode stops at its end and leaves nothing unread
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    assert d.decompress(zipped) == data and d.eof and d.unused_data == b""
    assert zipped[:4] == b"\x1f\x8b\x08\x00" and zipped[4:8] == b"\0\0\0\0"  # fixed mtime


def test_sliced_gzip_is_deterministic_and_as_small() -> None:
    data = _json_like(_SLICED * 2 + 12345)
    zipped = gzip_bytes(data, 1)
    assert gzip_bytes(data, 1) == zipped
    one_stream = gzip.compress(data, compresslevel=1, mtime=0)
    assert len(zipped) <= len(one_stream) * 1.01
    if (os.cpu_count() or 1) > 1:
        assert zipped != one_stream  # made in slices, not as one stream
    assert gzip.decompress(gzip_bytes(data, 5)) == data


def test_small_bodies_use_one_stream() -> None:
    data = _json_like(100_000)
    assert gzip_bytes(data, 5) == gzip.compress(data, compresslevel=5, mtime=0)
