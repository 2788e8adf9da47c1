"""Event files get the same tolerance as ours: torn tail waits, bad CRC skipped and
counted, garbage refused with a message, appended events read incrementally."""

from __future__ import annotations

import os

from visualdl.reader import LogReader
from tests.tfevents.tbwrite import EventWriter, torn


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


def test_our_records_without_file_version_are_refused(tmp_path):
    from visualdl.format.framing import frame
    from visualdl.format.record_pb2 import FileHeader, Record

    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(frame(Record(header=FileHeader(format_major=1)).SerializeToString()))
    reader = LogReader(str(tmp_path))
    assert "no file_version" in reader.files()[0].refused


def test_files_of_a_run_merge_in_time_order(tmp_path):
    a = _write(tmp_path, 5)
    b = _write(tmp_path, 5, start=5)
    a.close()
    b.close()
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    assert len(reader.files(run)) == 2
    assert reader.scalars(run, "loss").steps.tolist() == list(range(10))
