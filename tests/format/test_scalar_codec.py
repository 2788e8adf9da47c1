"""The hand-built scalar series bytes are exactly what protobuf itself writes."""

import numpy as np
import pytest

from visualdl.format import scalar_codec
from visualdl.format.record_pb2 import Entry, Record

EDGE_STEPS = [0, 1, 127, 128, 16383, 16384, 2**53 - 1, 2**53 + 1, 2**63 - 1, -1, -(2**63)]


def _flat(steps, rng):
    flat = []
    for s in steps:
        flat.extend((s, float(rng.random()) * 1e9, float(rng.normal())))
    return flat


def _protobuf_entry(tag, flat):
    entry = Entry()
    entry.scalars.tag = tag
    entry.scalars.steps.extend(flat[0::3])
    entry.scalars.wall_times.extend(flat[1::3])
    entry.scalars.values.extend(flat[2::3])
    return entry


@pytest.mark.parametrize("steps", [
    [5],
    EDGE_STEPS,
    list(range(3000)),
    np.random.default_rng(1).integers(-(2**62), 2**62, 500).tolist(),
])
def test_entry_bytes_equal_protobuf(steps):
    rng = np.random.default_rng(0)
    flat = _flat(steps, rng)
    flat[2] = float("nan")
    ours = scalar_codec.encode_entry("train/loss ü", flat)
    assert ours == _protobuf_entry("train/loss ü", flat).SerializeToString()
    record = Record.FromString(scalar_codec.record_entry(ours) * 2)
    assert len(record.entries) == 2
    assert list(record.entries[1].scalars.steps) == [int(s) for s in steps]


def test_field_numbers_match_the_proto():
    fields = {f.name: f.number for f in Entry.DESCRIPTOR.fields_by_name["scalars"].message_type.fields}
    assert fields == {"tag": 1, "steps": 2, "wall_times": 3, "values": 4}
    assert Entry.DESCRIPTOR.fields_by_name["scalars"].number == 1
    assert Record.DESCRIPTOR.fields_by_name["entries"].number == 2


def test_varint():
    assert scalar_codec.varint(0) == b"\x00"
    assert scalar_codec.varint(300) == b"\xac\x02"


# -- reading: decode_scalar_record must agree with protobuf, or step aside -----------------
def _protobuf_record(series):
    record = Record()
    for tag, flat in series:
        record.entries.append(_protobuf_entry(tag, flat))
    return record


def _assert_same(decoded, record):
    assert len(decoded) == len(record.entries)
    for got, entry in zip(decoded, record.entries):
        msg = entry.scalars
        assert got.tag == msg.tag
        assert got.steps.dtype == np.int64 and got.steps.tolist() == list(msg.steps)
        np.testing.assert_array_equal(got.wall_times, np.array(msg.wall_times))
        np.testing.assert_array_equal(got.values, np.array(msg.values))


@pytest.mark.parametrize("steps", [
    [],
    [5],
    EDGE_STEPS,
    list(range(100, 5000)),         # one size (2 bytes) and a mix of 1/2 bytes below
    list(range(0, 20000, 7)),
    np.random.default_rng(2).integers(-(2**63), 2**63 - 1, 700, dtype=np.int64).tolist(),
])
def test_decode_agrees_with_protobuf(steps):
    rng = np.random.default_rng(0)
    flat = _flat(steps, rng)
    if flat:
        flat[2], flat[-1] = float("nan"), float("-inf")
    record = _protobuf_record([("a/loss ü", flat), ("b", _flat(steps[::2], rng))])
    payload = record.SerializeToString()
    _assert_same(scalar_codec.decode_scalar_record(payload), record)
    _assert_same(scalar_codec.decode_scalar_record(memoryview(payload)), record)


def test_decode_of_our_own_bytes():
    flat = _flat(EDGE_STEPS, np.random.default_rng(3))
    payload = scalar_codec.record_entry(scalar_codec.encode_entry("t", flat)) * 3
    decoded = scalar_codec.decode_scalar_record(payload)
    _assert_same(decoded, Record.FromString(payload))
    assert decoded[0].steps.tolist() == EDGE_STEPS


def _unpacked_steps_entry():
    """protobuf may also write repeated numbers one field per value (not packed)."""
    tag = b"\x0a\x01t"
    steps = b"\x10\x05\x10\x06"                  # field 2, wire type 0, twice
    entry = b"\x0a" + bytes([len(tag + steps)]) + tag + steps
    return b"\x12" + bytes([len(entry)]) + entry


@pytest.mark.parametrize("payload", [
    Record(header={"format_major": 1}).SerializeToString(),                 # a header
    Record(entries=[Entry(text={"tag": "t", "text": "x"})]).SerializeToString(),  # another kind
    _protobuf_record([("t", [1, 2.0, 3.0])]).SerializeToString()
    + Record(entries=[Entry(text={"tag": "t"})]).SerializeToString(),       # scalars, then text
    _unpacked_steps_entry(),
    scalar_codec.record_entry(scalar_codec.encode_entry("t", [1, 2.0, 3.0]))[:-3],  # truncated
    b"\x12\x05\x0a\x03\x0a\x01\xff",                                        # tag not UTF-8
    b"\x12\x04\x0a\x02\x1a\x03",                                            # walls length past end
    b"\xff",
])
def test_decode_steps_aside_for_anything_else(payload):
    assert scalar_codec.decode_scalar_record(payload) is None


def test_decode_rejects_repeated_series_field():
    series = b"\x0a\x01t" + b"\x12\x01\x05" + b"\x12\x01\x06"  # steps given twice
    entry = b"\x0a" + bytes([len(series)]) + series
    payload = b"\x12" + bytes([len(entry)]) + entry
    assert list(Record.FromString(payload).entries[0].scalars.steps) == [5, 6]  # protobuf merges
    assert scalar_codec.decode_scalar_record(payload) is None                  # we step aside


@pytest.mark.parametrize("values", [
    [0, 1, 127],                    # one byte each
    [128, 300, 16383],              # two bytes each
    [0, 128, 2**40, -1, 5],         # mixed sizes, a 10-byte negative
    [2**63 - 1, -(2**63)],
])
def test_unpack_varints(values):
    packed = scalar_codec.packed_varints(np.array(values, dtype=np.int64))
    assert scalar_codec.unpack_varints(packed).tolist() == values


@pytest.mark.parametrize("packed", [b"\x80", b"\x05\xff", b"\xff" * 11 + b"\x01"])
def test_unpack_varints_refuses_bad_bytes(packed):
    with pytest.raises(ValueError):
        scalar_codec.unpack_varints(packed)
