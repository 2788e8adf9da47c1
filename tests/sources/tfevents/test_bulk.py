"""The bulk path (numpy over a chunk) reads exactly what the careful per-record path reads:
same points, same errors, whatever the file holds around the scalars."""

from __future__ import annotations

import os

import numpy as np
import pytest

from visualdl.format.framing import frame, scan_file
from visualdl.reader import LogReader
from visualdl.sources.tfevents import bulk
from visualdl.sources.tfevents.decode import FileDecoder, gather
from tests.sources.tfevents.tbwrite import EventWriter


def _careful(path: str) -> dict:
    """Every scalar of one file through framing.scan_file and FileDecoder only."""
    decoder, points, errors = FileDecoder(), [], 0
    with open(path, "rb") as f:
        for result in scan_file(f, 0, os.path.getsize(path), 4096):
            errors += len(result.errors)
            for _, payload in result.records:
                items = decoder.decode(payload)
                if isinstance(items, list):
                    points.extend(i for i in items if isinstance(i, tuple))
    out = {}
    for s in gather(points):
        out[s.tag] = (s.steps.tolist(), s.wall_times.tolist(), s.values.tolist())
    return out, errors


def _read(logdir) -> dict:
    reader = LogReader(str(logdir))
    run = reader.runs()[0]
    out = {}
    for tag in reader.tags(run).get("scalar", []):
        s = reader.scalars(run, tag)
        out[tag] = (s.steps.tolist(), s.wall_times.tolist(), s.values.tolist())
    return out, reader.errors


def _mixed(logdir, n: int = 3000) -> EventWriter:
    rng = np.random.default_rng(7)
    w = EventWriter(str(logdir))
    tags = ["loss", "acc", "a/much/longer/tag/name/" + "x" * 90, "lr", "ünïcode"]
    for step in range(n):
        for k, tag in enumerate(tags):
            value = 0.0 if step % 7 == 0 else float(np.float32(rng.standard_normal()))
            # steps of every varint size, big ones included
            s = step * (1 if k else 123_457_123)
            w.add_scalar(tag, value, s, 1e9 + step + k / 10)
        w.add_scalar_tensor("tensor/loss", float(step), step, 1e9 + step)
        if step % 100 == 0:
            w.add_histogram("h", rng.standard_normal(50), step, 1e9 + step)
            w.add_text("note", f"step {step}", step, 1e9 + step)
    return w


def test_bulk_matches_the_careful_path(tmp_path):
    w = _mixed(tmp_path)
    w.close()
    got, errors = _read(tmp_path)
    want, want_errors = _careful(w.path)
    assert errors == want_errors == 0
    assert got.keys() == want.keys()
    for tag in want:
        assert got[tag] == want[tag], tag
    assert len(got["loss"][0]) == 3000 and got["a/much/longer/tag/name/" + "x" * 90][1][0] == 1e9 + 0.2
    assert got["tensor/loss"][2] == [float(i) for i in range(3000)]
    # the values are float32 exactly as written, zeros included
    assert got["acc"][2][0] == 0.0


def read_in_chunks(path: str, size: int) -> dict:
    """Every series of an event file read in chunks of ``size`` bytes, bulk path and
    per-record path together, as tag -> (steps, wall_times, values) lists in the order the
    two paths give them (per-record points first in each chunk)."""
    decoder, points, series = FileDecoder(), [], []
    with open(path, "rb") as f:
        for result in bulk.scan_events(f, 0, None, size):
            decoded = [(o, decoder.decode(p)) for o, p in result.records]
            fast, _ = bulk.settle(decoder, result, decoded)
            series += fast
            for _, items in decoded:
                if isinstance(items, list):
                    points += [i for i in items if isinstance(i, tuple)]
    got: dict = {}
    for s in gather(points) + series:
        cols = got.setdefault(s.tag, ([], [], []))
        for col, values in zip(cols, (s.steps, s.wall_times, s.values)):
            col += values.tolist()
    return got


def test_small_chunks_cut_records_everywhere(tmp_path, monkeypatch):
    w = _mixed(tmp_path, 400)
    w.close()
    want, _ = _careful(w.path)
    for size in (64, 1000, 4097):
        got = read_in_chunks(w.path, size)
        for tag, (steps, walls, values) in want.items():
            order = np.argsort(got[tag][1], kind="stable")
            assert np.array(got[tag][0])[order].tolist() == steps, (size, tag)
            assert np.array(got[tag][2])[order].tolist() == values, (size, tag)


@pytest.mark.parametrize("where", [0.3, 0.5, 0.97])
def test_a_flipped_byte_costs_one_event(tmp_path, where):
    w = EventWriter(str(tmp_path))
    for step in range(20000):
        w.add_scalar("loss", float(step), step, 1e9 + step)
    w.close()
    with open(w.path, "r+b") as f:
        size = os.path.getsize(w.path)
        f.seek(int(size * where))
        byte = f.read(1)
        f.seek(int(size * where))
        f.write(bytes([byte[0] ^ 0x40]))
    got, errors = _read(tmp_path)
    want, want_errors = _careful(w.path)
    assert errors == want_errors == 1
    assert len(got["loss"][0]) == 19999
    assert got == want


def test_a_payload_holding_a_framed_record_is_not_split(tmp_path):
    """An event whose bytes contain a well-framed record (an "image" of event-file bytes):
    the vectorised boundary search must not take it for a record start."""
    from visualdl.sources.tfevents import event_pb2 as pb

    w = EventWriter(str(tmp_path))
    inner = frame(b"\x09" + bytes(8) + b"\x10\x01")
    for step in range(50):
        w.add_scalar("loss", float(step), step, 1e9 + step)
        w.value(step, 1e9 + step, tag="blob", image=pb.Summary.Image(
            height=1, width=1, colorspace=1, encoded_image_string=inner * 3))
    w.close()
    with open(w.path, "rb") as f:
        data = f.read()
    arr = np.frombuffer(data, np.uint8)
    assert data.count(inner) == 150
    starts, _ = bulk._boundaries(arr, memoryview(data))
    assert len(starts) == 101  # the file_version event and 100 events, nothing inside
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    assert reader.errors == 0
    assert reader.scalars(run, "loss").steps.tolist() == list(range(50))
    assert len(reader.images(run, "blob")) == 50


def test_position_tables_agree_with_google_crc32c():
    from visualdl.format.framing import masked_crc

    rng = np.random.default_rng(3)
    for length in (1, 8, 45, 300, 600):
        rows = rng.integers(0, 256, (20, length), dtype=np.uint8)
        flat = rows.reshape(-1)
        got = bulk._crc(flat, np.arange(20) * length, length)
        assert got.tolist() == [masked_crc(r.tobytes()) for r in rows]


def test_length_crcs_many_distinct_lengths():
    import struct

    from visualdl.format.framing import masked_crc

    lengths = np.arange(0, 3000 * 37, 37, dtype=np.int64)  # > 256 distinct: the table path
    for values in (lengths, lengths[:10]):
        assert bulk._length_crcs(values).tolist() == [
            masked_crc(struct.pack("<Q", int(v))) for v in values]


def test_a_tag_that_is_not_utf8_is_left_to_protobuf(tmp_path):
    """The careful path counts such an event as undecodable; the bulk path must agree."""
    w = EventWriter(str(tmp_path))
    for step in range(30):
        w.add_scalar("loss", float(step), step, 1e9 + step)
    w.close()
    with open(w.path, "rb") as f:
        data = f.read()
    from visualdl.format.framing import frame

    event = b"\x09" + bytes(8) + b"\x10\x05" + b"\x2a\x0b\x0a\x09\x0a\x02\xff\xfe\x15" + bytes(4)
    with open(w.path, "ab") as f:
        f.write(frame(event))
    got, errors = _read(tmp_path)
    assert got["loss"][0] == list(range(30))
    assert list(got) == ["loss"]
    assert errors == 1


@pytest.mark.parametrize("every", [1, 97])
def test_events_without_a_wall_time_are_found_too(tmp_path, every):
    """A wall time of 0 is not serialized, so such an event does not start with the wall
    time's key, which the boundary search tries first: it must search again, not lose it."""
    w = EventWriter(str(tmp_path))
    for step in range(5000):
        w.add_scalar("loss", float(step), step, 0.0 if step % every == 0 else 1e9 + step)
    w.close()
    got, errors = _read(tmp_path)
    want, _ = _careful(w.path)
    assert errors == 0
    # (a series is ordered by wall time: the points without one come first)
    assert sorted(zip(*got["loss"])) == sorted(zip(*want["loss"]))
    assert sorted(got["loss"][0]) == list(range(5000))
    with open(w.path, "rb") as f:
        data = f.read(1 << 16)
    starts, _ = bulk._boundaries(np.frombuffer(data, np.uint8), memoryview(data))
    assert len(starts) > 1000  # found in bulk, not given up at the first such event
