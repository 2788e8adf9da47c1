"""The hand-built scalar series bytes are exactly what protobuf itself writes."""

import numpy as np
import pytest

from visualdl.writer import scalar_codec
from visualdl.writer.record_pb2 import Entry, Record

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
