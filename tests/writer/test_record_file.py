"""The record framing and the .proto source of truth."""

import os
import struct
from pathlib import Path

import google_crc32c
import pytest

from tests.helpers.cli import REPO
from tests.helpers.protos import assert_pb2_current
from visualdl.format import record_pb2
from visualdl.format.framing import frame, masked_crc, read_record_at, scan
from visualdl.writer import record_file

ROOT = str(REPO)


def test_crc32c_is_castagnoli_and_masked_like_tfrecord():
    assert google_crc32c.value(b"123456789") == 0xE3069283  # the CRC-32C check value
    crc = 0xE3069283
    expected = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert masked_crc(b"123456789") == expected


def test_frame_layout():
    data = b"hello records"
    framed = frame(data)
    assert len(framed) == 8 + 4 + len(data) + 4
    assert struct.unpack("<Q", framed[:8])[0] == len(data)
    assert struct.unpack("<I", framed[8:12])[0] == masked_crc(framed[:8])
    assert framed[12:-4] == data
    assert struct.unpack("<I", framed[-4:])[0] == masked_crc(data)


def test_scan_splits_records_and_stops_before_a_torn_tail():
    blobs = [b"a" * 10, b"", b"c" * 1000]
    buf = b"".join(frame(b) for b in blobs)
    result = scan(buf + frame(b"tail")[:-3], base=100)
    assert [bytes(d) for _, d in result.records] == blobs
    assert [o for o, _ in result.records] == [100, 100 + 26, 100 + 26 + 16]
    assert result.end == 100 + len(buf)
    assert result.errors == []


def test_scan_skips_bad_data_crc_and_goes_on():
    buf = bytearray(frame(b"one") + frame(b"two") + frame(b"three"))
    buf[len(frame(b"one")) + 12] ^= 0xFF  # first byte of "two"
    result = scan(bytes(buf))
    assert [bytes(d) for _, d in result.records] == [b"one", b"three"]
    assert len(result.errors) == 1 and "data CRC" in result.errors[0]


def test_scan_resyncs_after_bad_length():
    garbage = os.urandom(37)
    result = scan(frame(b"one") + garbage + frame(b"two"))
    assert [bytes(d) for _, d in result.records] == [b"one", b"two"]
    assert result.errors and "length CRC" in result.errors[0]


def test_read_record_at_checks_crc(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(frame(b"one") + frame(b"two"))
    assert read_record_at(str(path), len(frame(b"one"))) == b"two"
    with pytest.raises(ValueError, match="offset 3"):
        read_record_at(str(path), 3)


def test_writer_file_cuts_torn_tail_before_appending(tmp_path):
    path = tmp_path / "vdlrecords.x.log"
    path.write_bytes(frame(b"kept") + frame(b"torn")[:7])
    w = record_file.RecordFileWriter(str(path))
    w.write([b"new"])
    w.close()
    assert [bytes(d) for _, d in scan(path.read_bytes()).records] == [b"kept", b"new"]


def test_generated_pb2_matches_proto(tmp_path):
    """record_pb2.py must be regenerated whenever record.proto changes."""
    pytest.importorskip("grpc_tools")
    assert_pb2_current(Path(ROOT) / "visualdl/format/record.proto", record_pb2, tmp_path)
