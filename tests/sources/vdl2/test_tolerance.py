"""VisualDL 2.x files get the tolerance our own files get, though they have no CRC: a torn
tail waits, damaged bytes are skipped and counted, garbage is refused with a message, and
appended records are read incrementally."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np

from tests.sources.vdl2.common import LOGS, TRAIN, f32
from visualdl.reader import LogReader

SESSION1 = LOGS / "train" / "vdlrecords.1700000000.log"
LOSS = f32(TRAIN["scalars"]["loss"])


def _records(data: bytes) -> list[tuple[int, int]]:
    """(offset, framed size) of each record of a VisualDL 2.x file."""
    out, pos = [], 0
    while pos < len(data):
        n = struct.unpack_from("<Q", data, pos)[0]
        out.append((pos, 8 + n))
        pos += 8 + n
    return out


def _run(tmp_path: Path, data: bytes) -> Path:
    run = tmp_path / "run"
    run.mkdir(parents=True, exist_ok=True)
    path = run / "vdlrecords.1.log"
    path.write_bytes(data)
    return path


def _loss_steps(reader: LogReader) -> list[int]:
    return reader.scalars("run", "loss").steps.tolist()


def test_torn_tail_waits_then_reads(tmp_path):
    data = SESSION1.read_bytes()
    last_off, last_size = _records(data)[-1]
    path = _run(tmp_path, data[:last_off + last_size // 2])
    reader = LogReader(str(tmp_path))
    assert "hparams" not in reader.tags("run")  # the last record (add_hparams) is torn
    assert reader.scalars("run", "loss").values.tolist() == LOSS[:10]
    assert reader.errors == 0, reader.error_messages
    for cut in (last_off + last_size - 1, last_off + last_size):  # one byte short, then whole
        path.write_bytes(data[:cut])
        reader.reload()
    assert reader.hparams("run").hparams["opt"] == "adam"
    assert reader.errors == 0, reader.error_messages


def test_torn_length_waits(tmp_path):
    data = SESSION1.read_bytes()
    path = _run(tmp_path, data[:5])
    reader = LogReader(str(tmp_path))
    assert reader.runs() == [] and reader.errors == 0
    path.write_bytes(data)
    assert reader.reload() > 0
    assert _loss_steps(reader) == list(range(10))


def test_incremental_tailing(tmp_path):
    data = SESSION1.read_bytes()
    records = _records(data)
    path = _run(tmp_path, b"")
    reader = LogReader(str(tmp_path))
    seen = []
    for k in range(0, len(records), 7):
        off = records[k][0]
        end = records[min(k + 7, len(records)) - 1]
        with open(path, "ab") as f:
            f.write(data[off:end[0] + end[1]])
        reader.reload()
        if "loss" in reader.tags("run").get("scalar", []):
            seen.append(len(_loss_steps(reader)))
    assert seen == sorted(seen) and seen[0] < 10  # points came in as the file grew
    assert reader.scalars("run", "loss").values.tolist() == LOSS[:10]
    assert reader.files("run")[0].records == len(records)
    assert reader.errors == 0


def test_damaged_length_is_skipped_and_counted(tmp_path):
    data = bytearray(SESSION1.read_bytes())
    records = _records(bytes(data))
    off, _ = records[5]  # the loss of step 1 (after meta and step 0's four scalars)
    data[off + 6] = 0x7F  # a length of petabytes
    _run(tmp_path, bytes(data))
    reader = LogReader(str(tmp_path))
    assert reader.errors == 1
    assert "bad record at offset" in reader.error_messages[0]
    assert _loss_steps(reader) == [0] + list(range(2, 10))  # only step 1 lost
    assert reader.hparams("run") is not None and len(reader.images("run", "sample")) == 2


def test_damaged_payload_is_skipped_and_counted(tmp_path):
    data = bytearray(SESSION1.read_bytes())
    records = _records(bytes(data))
    data[records[9][0] + 8] = 0x0B  # the loss of step 2: not a Record.values field
    tag_at = bytes(data).index(b"note")  # a text's tag: no longer UTF-8
    data[tag_at] = 0xFF
    _run(tmp_path, bytes(data))
    reader = LogReader(str(tmp_path))
    assert reader.errors == 2, reader.error_messages
    assert _loss_steps(reader) == [0, 1] + list(range(3, 10))
    assert [e.step for e in reader.texts("run", "note")] == [5]  # step 0's text was damaged
    assert any("undecodable" in m for m in reader.error_messages)


def test_garbage_file_is_refused_with_a_message(tmp_path):
    good = _run(tmp_path, SESSION1.read_bytes())
    bad = good.parent.parent / "junk"
    bad.mkdir()
    rng = np.random.default_rng(0)
    (bad / "vdlrecords.2.log").write_bytes(rng.integers(0, 256, 5000, np.uint8).tobytes())
    (bad / "vdlrecords.3.log").write_bytes(b"not a log at all, just some text\n" * 10)
    reader = LogReader(str(tmp_path))
    assert reader.runs() == ["run"]
    refused = sorted(Path(f.path).name for f in reader.files() if f.refused)
    assert refused == ["vdlrecords.2.log", "vdlrecords.3.log"]
    assert all("VisualDL 2.x" in f.refused for f in reader.files() if f.refused)
    assert reader.errors == 2
    reader.reload()
    assert reader.errors == 2  # refused once, not on every reload


def test_garbage_after_good_records_is_counted_once(tmp_path):
    data = SESSION1.read_bytes()
    path = _run(tmp_path, data + b"\xde\xad\xbe\xef" * 100)
    reader = LogReader(str(tmp_path))
    assert _loss_steps(reader) == list(range(10))
    assert reader.errors == 1 and "to the end of the file skipped" in reader.error_messages[0]
    reader.reload()
    assert reader.errors == 1
    size = os.path.getsize(path)
    assert reader.files("run")[0].offset > size - 16
    with open(path, "ab") as f:  # a writer that goes on after the damage is read on
        f.write((LOGS / "train" / "vdlrecords.1700000100.log").read_bytes())
    reader.reload()
    assert _loss_steps(reader) == list(range(20))
    assert reader.errors == 2  # the few bad bytes kept back, reported with where they end


def test_damaged_first_record_does_not_lose_the_file(tmp_path):
    for flip in (0, 8):  # the first record's length, then its first payload byte
        data = bytearray(SESSION1.read_bytes())
        data[flip] ^= 0x5A
        _run(tmp_path / str(flip), bytes(data))
        reader = LogReader(str(tmp_path / str(flip)))
        assert not reader.files()[0].refused
        assert reader.errors == 1, reader.error_messages
        assert "bad record at offset 0" in reader.error_messages[0]
        assert _loss_steps(reader) == list(range(10))  # only the meta record was lost


def test_every_single_flipped_byte_is_survived(tmp_path):
    """No flipped byte makes reading raise, refuses the file, or loses more than the
    records around it (there is no CRC: a flip inside a value can go unseen)."""
    data = SESSION1.read_bytes()
    records = _records(data)
    for at in range(0, len(data), 11):
        damaged = bytearray(data)
        damaged[at] ^= 0xFF
        root = tmp_path / f"f{at}"
        _run(root, bytes(damaged))
        reader = LogReader(str(root))
        (state,) = reader.files()
        assert not state.refused, at
        assert state.records >= len(records) - 3, (at, reader.error_messages)


def test_undecodable_media_are_counted_not_shown(tmp_path):
    from visualdl.sources.vdl2 import vdl2_record_pb2 as pb

    values = [pb.Record.Value(id=1, tag="img", timestamp=1000,
                              image=pb.Record.Image(encoded_image_string=b"not a png")),
              pb.Record.Value(id=1, tag="snd", timestamp=1000,
                              audio=pb.Record.Audio(encoded_audio_string=b"RIFF junk")),
              pb.Record.Value(id=1, tag="loss", timestamp=1000, value=0.5)]
    payloads = [pb.Record(values=[v]).SerializeToString() for v in values]
    _run(tmp_path, b"".join(struct.pack("<Q", len(p)) + p for p in payloads))
    reader = LogReader(str(tmp_path))
    assert reader.errors == 2, reader.error_messages
    assert "image is not a PNG" in reader.error_messages[0]
    assert "audio is not a WAV file" in reader.error_messages[1]
    assert reader.tags("run") == {"scalar": ["loss"]}
    assert reader.scalars("run", "loss").values.tolist() == [0.5]
