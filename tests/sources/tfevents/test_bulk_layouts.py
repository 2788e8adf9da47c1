"""The bulk path's layouts (one per event length, read from its first event and checked for
every other) against the careful per-record path, on events made to share lengths and
layouts in awkward ways; and its small helpers against numpy's own."""

from __future__ import annotations

import os

import numpy as np
import pytest

from visualdl.sources.tfevents import bulk
from visualdl.sources.tfevents import event_pb2 as pb
from tests.sources.tfevents.test_bulk import _careful, _read, read_in_chunks
from tests.sources.tfevents.tbwrite import EventWriter

# Tags of lengths 0..20, two of them of one length and differing in one byte only, one
# longer than 8 bytes (several words), non-ASCII ones, one that is empty.
_TAGS = ["", "a", "lr", "acc", "loss", "loss/train", "loss/valid", "é", "ü/ß",
         "a" * 8, "b" * 9, "x/y/z/w/v/u/t", "g" * 20]


def _random_log(logdir, seed: int, n: int = 4000) -> EventWriter:
    """Scalars of both forms with every step size (none, 1..9 bytes and negative: 10),
    wall times with and without a value, and other kinds between them."""
    rng = np.random.default_rng(seed)
    w = EventWriter(str(logdir))
    steps = [0, 1, 127, 128, 16_383, 16_384, 2**21, 2**28, 2**35, 2**56, 2**62, -1, -300]
    for i in range(n):
        tag = _TAGS[int(rng.integers(len(_TAGS)))]
        step = steps[int(rng.integers(len(steps)))] if rng.random() < 0.2 else i
        wall = 0.0 if rng.random() < 0.05 else 1e9 + i
        value = float(np.float32(rng.standard_normal()))
        kind = rng.random()
        if kind < 0.7:
            w.add_scalar(tag, value, step, wall)
        elif kind < 0.85:
            w.add_scalar_tensor("t/" + tag, value, step, wall)
        elif kind < 0.95:
            # text whose event length often equals a scalar event's
            w.add_text(tag, "x" * int(rng.integers(0, 6)), step, wall)
        else:
            w.add_histogram("h", rng.standard_normal(5), step, wall, bins=2)
    return w


def _as_set(series: dict) -> dict:
    return {tag: sorted(zip(*cols)) for tag, cols in series.items()}


def assert_reads_as_careful(logdir, w: EventWriter) -> dict:
    """The reader (bulk path) reads ``w``'s file as the careful path does; returns that."""
    w.close()
    got, errors = _read(logdir)
    want, want_errors = _careful(w.path)
    assert errors == want_errors == 0
    assert got.keys() == want.keys()
    assert _as_set(got) == _as_set(want)
    assert sum(len(s) for s, _, _ in want.values()) > 3000
    return got


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_layouts_read_as_the_careful_path_does(tmp_path, seed):
    assert_reads_as_careful(tmp_path, _random_log(tmp_path, seed))


@pytest.mark.parametrize("chunk", [97, 1000, 1 << 16])
def test_random_layouts_in_small_chunks(tmp_path, chunk):
    """Cut anywhere, a chunk's layouts and tags are its own: what it decodes is the same."""
    w = _random_log(tmp_path, 9, 1500)
    w.close()
    want, _ = _careful(w.path)
    assert _as_set(read_in_chunks(w.path, chunk)) == _as_set(want)


def test_a_tag_first_seen_in_a_later_layout_keeps_its_place(tmp_path):
    """Series come out in order of their tags' first events, even when a tag's first
    event has a layout (a step size) that the chunk meets after another one's."""
    w = EventWriter(str(tmp_path))
    w.add_scalar("a", 1.0, 300, 1e9)        # 2-byte step: the longer layout
    w.add_scalar("b", 2.0, 5, 1e9 + 1)      # 1-byte step: the shorter one, met first
    w.add_scalar("a", 3.0, 6, 1e9 + 2)      # "a" in the shorter layout, after "b"
    w.add_scalar("b", 4.0, 301, 1e9 + 3)
    w.close()
    with open(w.path, "rb") as f:
        data = f.read()
    chunk = bulk.scan_chunk(memoryview(data), 0, first=True)
    assert [s.tag for s in chunk.series] == ["a", "b"]
    a, b = chunk.series
    assert a.steps.tolist() == [300, 6] and a.values.tolist() == [1.0, 3.0]
    assert a.wall_times.tolist() == [1e9, 1e9 + 2]
    assert b.steps.tolist() == [5, 301] and b.values.tolist() == [2.0, 4.0]
    assert len(chunk.records) == 1  # the file_version event only


def test_many_events_of_a_scalars_length_that_are_not_scalars(tmp_path):
    """Events of one length whose first ones fit no layout: after a few misses the rest of
    that length is left to the careful path, which reads the same points."""
    w = EventWriter(str(tmp_path))
    # a value with a tag and nothing else, as long as a one-value scalar event
    other = pb.Event(wall_time=1e9, step=3, summary=pb.Summary(value=[pb.Summary.Value(
        tag="abcdefghi")]))
    scalar = pb.Event(wall_time=1e9, step=3, summary=pb.Summary(value=[pb.Summary.Value(
        tag="loss", simple_value=1.0)]))
    assert len(other.SerializeToString()) == len(scalar.SerializeToString())
    for i in range(40):
        w.write(other)
    for i in range(100):
        w.add_scalar("loss", float(i), 3, 1e9 + i)
    w.close()
    got, errors = _read(tmp_path)
    want, _ = _careful(w.path)
    assert errors == 0
    assert got == want
    assert got["loss"][2] == [float(i) for i in range(100)]


def test_distinct_is_numpy_unique():
    rng = np.random.default_rng(5)
    cases = [rng.integers(0, 10, 1000), rng.integers(0, 1000, 5000),
             np.array([5] * 300 + [7]), np.array([3]), np.zeros(0, np.int64),
             rng.integers(0, 2**63, 50).astype(np.uint64)[rng.integers(0, 50, 3000)],
             rng.integers(0, 2**63, 100).astype(np.uint64)[rng.integers(0, 100, 3000)],
             np.concatenate([np.arange(256) % 3, [99]])]  # a value the head misses
    for values in cases:
        uniq, first, inverse = bulk._distinct(values)
        want = np.unique(values, return_index=True, return_inverse=True)
        assert uniq.tolist() == want[0].tolist()
        assert first.tolist() == want[1].tolist()
        assert inverse.tolist() == want[2].reshape(-1).tolist()


def test_long_tags_whose_hashes_collide_are_told_apart():
    """Tags over 8 bytes are grouped by a hash of their words: two different tags made to
    have the same hash still get a series each."""
    mult = np.uint64(1099511628211)
    a0, a1, b0 = (int.from_bytes(s, "little") for s in (b"tag/one/", b"-aaaaaa-",
                                                          b"tag/two/"))
    with np.errstate(over="ignore"):
        b1 = int((np.uint64(a0) * mult) ^ np.uint64(a1) ^ (np.uint64(b0) * mult))
    tag_a = a0.to_bytes(8, "little") + a1.to_bytes(8, "little")
    tag_b = b0.to_bytes(8, "little") + b1.to_bytes(8, "little")
    buf = np.frombuffer((tag_a + tag_b + tag_a + bytes(16)), np.uint8)
    names, which, first = bulk._tag_groups(bulk._Views(buf), np.array([0, 16, 32]), 16)
    assert names == [tag_a, tag_b]
    assert which.tolist() == [0, 1, 0] and first.tolist() == [0, 1]


def test_damage_after_many_scalars_is_found_by_the_data_crc(tmp_path):
    """A flipped byte in a value (so the event still fits its layout) fails its data CRC:
    that event is skipped and counted, as the careful path does."""
    w = EventWriter(str(tmp_path))
    for step in range(3000):
        w.add_scalar("loss", float(step), step, 1e9 + step)
    w.close()
    size = os.path.getsize(w.path)
    with open(w.path, "r+b") as f:
        f.seek(size // 2)
        data = f.read(200)
        at = data.index(b"loss\x15") + 6  # the second byte of a value
        f.seek(size // 2 + at)
        byte = f.read(1)
        f.seek(size // 2 + at)
        f.write(bytes([byte[0] ^ 0x01]))
    got, errors = _read(tmp_path)
    want, want_errors = _careful(w.path)
    assert errors == want_errors == 1
    assert got == want and len(got["loss"][0]) == 2999
