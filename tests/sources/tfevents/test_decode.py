"""The hand-written scalar parser agrees with protobuf, and the committed event_pb2 is
generated from event.proto."""

from __future__ import annotations

import random
from pathlib import Path

from tests.helpers.cli import REPO
from tests.helpers.protos import assert_pb2_current
from visualdl.sources.tfevents import event_pb2 as pb
from visualdl.sources.tfevents.decode import FileDecoder, ScalarPoint, fast_scalars

ROOT = str(REPO)


def _event(rng: random.Random) -> pb.Event:
    values = [pb.Summary.Value(tag=rng.choice(["a", "b/c", "ünï", ""]),
                               simple_value=rng.uniform(-1e6, 1e6))
              for _ in range(rng.randint(1, 4))]
    return pb.Event(wall_time=rng.uniform(0, 2e9), step=rng.randint(-5, 2 ** 40),
                    summary=pb.Summary(value=values))


def test_fast_path_agrees_with_protobuf():
    rng = random.Random(7)
    for _ in range(500):
        event = _event(rng)
        fast = fast_scalars(event.SerializeToString())
        assert fast is not None
        slow = [ScalarPoint(v.tag, event.step, event.wall_time, v.simple_value)
                for v in event.summary.value]
        assert fast == slow


def test_fast_path_declines_anything_else():
    with_meta = pb.Event(step=1, summary=pb.Summary(value=[pb.Summary.Value(
        tag="x", simple_value=1.0, metadata=pb.SummaryMetadata(display_name="d"))]))
    for event in (pb.Event(file_version="brain.Event:2"), with_meta,
                  pb.Event(step=1, summary=pb.Summary(value=[pb.Summary.Value(
                      tag="h", histo=pb.HistogramProto(min=1))]))):
        assert fast_scalars(event.SerializeToString()) is None
    # protobuf still decodes what the fast path declines
    assert FileDecoder().decode(with_meta.SerializeToString()) == [ScalarPoint("x", 1, 0.0, 1.0)]


def test_fast_path_declines_damaged_bytes_without_raising():
    rng = random.Random(11)
    for _ in range(300):
        data = bytearray(_event(rng).SerializeToString())
        cut = rng.randrange(len(data))
        if rng.random() < 0.5:
            data = data[:cut]
        else:
            data[cut] = rng.randrange(256)
        result = FileDecoder().decode(bytes(data))  # a list, a str (error), never raises
        assert isinstance(result, (list, str))


def test_committed_event_pb2_is_current(tmp_path):
    assert_pb2_current(Path(ROOT) / "visualdl/sources/tfevents/event.proto", pb, tmp_path)
