"""Event files get the same tolerance as ours: torn tail waits, bad CRC skipped and
counted, garbage refused with a message, appended events read incrementally."""

from __future__ import annotations

import os

from visualdl.reader import LogReader
from tests.sources.tfevents.tbwrite import EventWriter, torn


def _write(path, steps, start=0):
    w = EventWriter(str(path))
    for step in range(start, start + steps):
        w.add_scalar("loss", float(step), step, 100.0 + step)
    return w


def test_torn_tail_waits_then_reads(tmp_path):
    w = _write(tmp_path, 10)
    w.close()
    with open(w.path, "rb") as f:
        data = f.read()
    torn(w.path, 7)
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    assert reader.scalars(run, "loss").steps.tolist() == list(range(9))
    assert reader.errors == 0
    with open(w.path, "wb") as f:
        f.write(data)
    reader.reload()
    assert reader.scalars(run, "loss").steps.tolist() == list(range(10))
    assert reader.errors == 0


def test_incremental_tailing(tmp_path):
    w = _write(tmp_path, 5)
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    for step in range(5, 8):
        w.add_scalar("loss", float(step), step, 100.0 + step)
    assert reader.reload() == 3
    assert reader.scalars(run, "loss").values.tolist() == [float(i) for i in range(8)]
    w.close()


def test_flipped_byte_is_one_counted_bad_record(tmp_path):
    w = _write(tmp_path, 10)
    w.close()
    with open(w.path, "rb") as f:
        data = bytearray(f.read())
    data[-10] ^= 0xFF  # inside the last event's payload
    with open(w.path, "wb") as f:
        f.write(data)
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    assert reader.scalars(run, "loss").steps.tolist() == list(range(9))
    assert reader.errors == 1 and reader.files(run)[0].errors == 1
    assert "CRC" in reader.error_messages[0]


def test_garbage_file_is_refused_with_a_message(tmp_path):
    path = tmp_path / "events.out.tfevents.123.host"
    path.write_bytes(os.urandom(200))
    reader = LogReader(str(tmp_path))
    assert reader.runs() == []
    [state] = reader.files()
    assert state.refused == "not a TensorBoard event file (bad framing at offset 0)"
    assert reader.errors == 1


def test_a_first_record_that_parses_as_an_event_is_read_as_tensorboard_does(tmp_path):
    """No file_version event first is no refusal (tensorboardX 1.x writes none); a record
    TensorBoard's parser takes (unknown fields ignored) holds nothing to show."""
    from visualdl.format.framing import frame
    from visualdl.format.record_pb2 import FileHeader, Record

    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(frame(Record(header=FileHeader(format_major=1)).SerializeToString()))
    reader = LogReader(str(tmp_path))
    assert reader.files()[0].refused == "" and reader.errors == 0 and reader.runs() == []


def test_a_first_record_that_is_no_event_is_refused(tmp_path):
    from visualdl.format.framing import frame

    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(frame(b"\x0a\x05ab"))  # a length past the payload's end
    reader = LogReader(str(tmp_path))
    refused = reader.files()[0].refused
    assert refused.startswith("not a TensorBoard event file (its first record is not an Event")
    assert reader.errors == 1


def test_files_of_a_run_merge_in_time_order(tmp_path):
    a = _write(tmp_path, 5)
    b = _write(tmp_path, 5, start=5)
    a.close()
    b.close()
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    assert len(reader.files(run)) == 2
    assert reader.scalars(run, "loss").steps.tolist() == list(range(10))


# -- the bulk path (numpy over a chunk) gets the same tolerance ------------------------------
def _big(path, steps=20000):
    w = EventWriter(str(path))
    for step in range(steps):
        w.add_scalar("loss", float(step), step, 100.0 + step)
    w.close()
    return w


def test_torn_tail_of_a_large_file_at_every_kind_of_cut(tmp_path):
    w = _big(tmp_path)
    with open(w.path, "rb") as f:
        data = f.read()
    record = (len(data) - 38) // 20000  # the file_version event, then equal-sized events
    for cut in (1, 5, 12, 13, record - 1, record + 3):
        with open(w.path, "wb") as f:
            f.write(data[:-cut])
        reader = LogReader(str(tmp_path))
        run = reader.runs()[0]
        complete = 20000 - (cut + record - 1) // record
        assert len(reader.scalars(run, "loss").steps) == complete, cut
        assert reader.errors == 0, (cut, reader.error_messages)
        with open(w.path, "wb") as f:
            f.write(data)
        reader.reload()  # the rest arrives: read once complete, nothing counted
        assert reader.scalars(run, "loss").steps.tolist() == list(range(20000))
        assert reader.errors == 0


def test_garbage_between_good_events_is_skipped_once(tmp_path):
    import numpy as np

    from visualdl.format.framing import frame
    from visualdl.sources.tfevents import event_pb2 as pb

    w = _big(tmp_path, 2500)
    junk = np.random.default_rng(1).integers(0, 256, 3000, dtype=np.uint8).tobytes()
    with open(w.path, "ab") as f:
        f.write(junk)
        for step in range(2500, 5000):
            f.write(frame(pb.Event(wall_time=100.0 + step, step=step, summary=pb.Summary(
                value=[pb.Summary.Value(tag="loss", simple_value=step)])).SerializeToString()))
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    assert reader.scalars(run, "loss").steps.tolist() == list(range(5000))
    assert reader.errors == 1
    assert "skipped 3000 bytes" in reader.error_messages[0]


def test_empty_and_random_event_files(tmp_path):
    import numpy as np

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "events.out.tfevents.1.host").write_bytes(b"")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "events.out.tfevents.2.host").write_bytes(b"\x05\x00\x00")
    (tmp_path / "c").mkdir()
    rng = np.random.default_rng(5)
    (tmp_path / "c" / "events.out.tfevents.3.host").write_bytes(
        rng.integers(0, 256, 100_000, dtype=np.uint8).tobytes())
    _write(tmp_path / "good", 3).close()
    reader = LogReader(str(tmp_path))
    assert reader.scalars("good", "loss").steps.tolist() == [0, 1, 2]
    assert reader.errors == 1  # the random file, refused with a message; short ones wait
    assert "not a TensorBoard event file" in reader.error_messages[0]


def test_a_bad_graph_def_is_a_clear_error_not_a_500(tmp_path):
    from tests.helpers.http import Client
    from tests.helpers.server import serving
    from visualdl.sources.tfevents import event_pb2 as pb

    w = _write(tmp_path, 3)
    w.write(pb.Event(wall_time=1.0, step=0, graph_def=b"\xff\xff\xff not a GraphDef"))
    w.close()
    with serving([str(tmp_path)]) as handle:
        client = Client(handle.url)
        try:
            models = client.get("/api/graph/models").json()
            models = models["models"] if isinstance(models, dict) else models
            (logged,) = [m for m in models if m["source"] == "log"]
            response = client.get("/api/graph/summary", params={"model": logged["id"]})
            assert response.status_code == 422
            assert "GraphDef" in response.json()["error"]
            body = client.get("/api/scalars", params={"run": logged["run"], "tag": "loss"})
            assert body.json()["steps"] == [0, 1, 2]
        finally:
            client.close()
