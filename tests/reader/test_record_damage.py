"""Damaged record files (issue 13, items 2 and 4): a bogus length must not hide the rest of
a file, resuming must not destroy it, and damaged regions are skipped by a vectorised search
that finds exactly the positions a byte-by-byte search finds."""

from __future__ import annotations

import io
import os
import struct
import tracemalloc
import warnings

import numpy as np
import pytest

from visualdl import LogReader, LogWriter
from visualdl.format.framing import frame, masked_crc, scan
from visualdl.format.record_pb2 import Record
from visualdl.reader.inspect import summarize
from visualdl.writer.record_file import RecordFileWriter


def _scalar_file(run_dir, points=1200, per_record=75) -> str:
    with LogWriter(logdir=str(run_dir), flush_secs=1000) as w:
        for i in range(points):
            w.add_scalar("x", float(i), i)
            if i % per_record == per_record - 1:
                w.flush()
        return w.file_name


def _offsets(data: bytes) -> list[int]:
    offsets, pos = [], 0
    while pos < len(data):
        offsets.append(pos)
        pos += struct.unpack_from("<Q", data, pos)[0] + 16
    return offsets


def _set_length(data: bytearray, offset: int, length: int) -> None:
    """A length field with a valid length CRC: only the data CRC can tell it is wrong."""
    head = struct.pack("<Q", length)
    data[offset:offset + 12] = head + struct.pack("<I", masked_crc(head))


BOGUS = {"2^30": lambda size: 1 << 30, "2^31-1": lambda size: (1 << 31) - 1,
         "file size + 1": lambda size: size + 1}


@pytest.fixture(params=list(BOGUS))
def bogus_file(request, tmp_path):
    """1,200 points in 16 records after the header; record 8 (points 450..524) gets a
    length past the end of the file. Returns (run dir, path, original bytes)."""
    run = tmp_path / "run"
    path = _scalar_file(run)
    data = bytearray(open(path, "rb").read())
    offsets = _offsets(bytes(data))
    assert len(offsets) == 18  # and the close marker
    _set_length(data, offsets[7], BOGUS[request.param](len(data)))
    open(path, "wb").write(bytes(data))
    return run, path, bytes(data)


WANT = [float(i) for i in range(1200) if not 450 <= i < 525]  # all but the damaged record


def test_bogus_length_past_the_end_is_damage_not_a_torn_tail(bogus_file):
    run, path, data = bogus_file
    r = LogReader(str(run))
    assert r.scalars("run", "x").values.tolist() == WANT
    assert r.errors == 1
    assert "past the end of the file" in r.error_messages[0]
    out = io.StringIO()
    assert summarize([str(run)], out) == 1
    assert "past the end of the file" in out.getvalue()


def test_resuming_after_a_bogus_length_truncates_nothing(bogus_file):
    run, path, data = bogus_file
    with LogWriter(logdir=str(run), file_name=os.path.basename(path)) as w:
        w.add_scalar("x", 5000.0, 5000)
    after = open(path, "rb").read()
    assert after[:len(data)] == data  # appended, nothing cut
    r = LogReader(str(run))
    assert r.scalars("run", "x").values.tolist() == WANT + [5000.0]
    assert r.errors == 1


def test_a_live_torn_tail_with_a_huge_length_is_still_just_not_written_yet(tmp_path):
    """A header whose length points past the end, with nothing good after it: a record
    still being written. No error; read once it is complete."""
    run = tmp_path / "run"
    path = _scalar_file(run, points=150)
    rec = Record()
    text = rec.entries.add().text
    text.tag, text.step, text.text = "note", 7, "y" * 300_000
    big = frame(rec.SerializeToString())
    with open(path, "ab") as f:
        f.write(big[:100_000])
    r = LogReader(str(run))
    assert len(r.scalars("run", "x").values) == 150 and r.errors == 0
    with open(path, "ab") as f:
        f.write(big[100_000:])
    r.reload()
    assert [e.text for e in r.texts("run", "note")] == ["y" * 300_000] and r.errors == 0


def test_wrong_length_inside_the_file_loses_only_its_record(tmp_path):
    """A length (with a valid CRC) that swallows the next record: resynchronising from the
    next byte, not from the declared end, keeps the swallowed record."""
    run = tmp_path / "run"
    path = _scalar_file(run)
    data = bytearray(open(path, "rb").read())
    offsets = _offsets(bytes(data))
    _set_length(data, offsets[7], offsets[9] - offsets[7] - 16)  # ends where record 9 starts
    open(path, "wb").write(bytes(data))
    r = LogReader(str(run))
    assert r.scalars("run", "x").values.tolist() == WANT
    assert r.errors == 1


def test_a_damaged_region_spanning_chunks_is_one_error(tmp_path, monkeypatch):
    from visualdl.sources import base as sources_base

    monkeypatch.setattr(sources_base, "READ_CHUNK", 4096)
    run = tmp_path / "run"
    path = _scalar_file(run, points=150)
    good = open(path, "rb").read()
    tail = open(_scalar_file(tmp_path / "more", points=150), "rb").read()
    skip = _offsets(tail)[1]  # drop the second file's header
    with open(path, "wb") as f:
        f.write(good + bytes(100_000) + tail[skip:])
    r = LogReader(str(run))
    assert r.scalars("run", "x").values.tolist() == [float(i) for i in range(150)] * 2
    assert r.errors == 1 and "skipped 100000 bytes" in r.error_messages[0]


def test_resume_keeps_a_file_ending_in_garbage_and_writes_a_new_one(tmp_path):
    run = tmp_path / "run"
    path = _scalar_file(run, points=150)
    garbage = bytes(range(256)) * 8
    with open(path, "ab") as f:
        f.write(garbage)
    before = open(path, "rb").read()
    with pytest.warns(RuntimeWarning, match="not a record"):
        w = LogWriter(logdir=str(run), file_name=os.path.basename(path))
    w.add_scalar("x", 999.0, 999)
    w.close()
    assert open(path, "rb").read() == before  # untouched
    assert w.file_name != path and os.path.dirname(w.file_name) == str(run)
    r = LogReader(str(run))
    assert r.scalars("run", "x").values.tolist() == [float(i) for i in range(150)] + [999.0]


def test_resume_cuts_a_zero_filled_tail(tmp_path):
    """What a power loss leaves: zeros after the last record. Cutting zeros loses nothing."""
    run = tmp_path / "run"
    path = _scalar_file(run, points=150)
    size = os.path.getsize(path)
    with open(path, "ab") as f:
        f.write(bytes(4096))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with LogWriter(logdir=str(run), file_name=os.path.basename(path)) as w:
            w.add_scalar("x", 999.0, 999)
    assert w.file_name == path
    r = LogReader(str(run))
    assert r.scalars("run", "x").values.tolist() == [float(i) for i in range(150)] + [999.0]
    assert r.errors == 0 and os.path.getsize(path) > size


def test_resume_scans_in_chunks(tmp_path):
    """Opening a 24 MB file for appending allocates about one chunk, not the file."""
    path = tmp_path / "vdlrecords.big.log"
    rec = frame(b"\x01" * (1 << 20))
    with open(path, "wb") as f:
        for _ in range(24):
            f.write(rec)
        f.write(rec[:1000])  # a torn tail, cut on opening
    tracemalloc.start()
    try:
        w = RecordFileWriter(str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    w.close()
    assert os.path.getsize(path) == 24 * len(rec)
    assert peak < 8 << 20  # a few 2 MB chunks, not 24 MB


def _brute_force_candidates(data: bytes) -> list[int]:
    """Every position whose length CRC checks and whose length is below 2**31."""
    found = []
    for p in range(len(data) - 11):
        (crc,) = struct.unpack_from("<I", data, p + 8)
        if masked_crc(data[p:p + 8]) == crc and struct.unpack_from("<Q", data, p)[0] < 1 << 31:
            found.append(p)
    return found


@pytest.mark.parametrize("seed", range(4))
def test_vectorised_search_finds_what_a_byte_by_byte_search_finds(seed):
    rng = np.random.default_rng(seed)
    parts = []
    for _ in range(60):
        choice = rng.integers(4)
        if choice == 0:
            parts.append(frame(rng.bytes(int(rng.integers(0, 200)))))
        elif choice == 1:
            parts.append(bytes(int(rng.integers(1, 300))))  # zeros
        elif choice == 2:
            # small little-endian doubles and ints: many zero bytes, many plausible lengths
            parts.append(np.arange(int(rng.integers(1, 40)), dtype="<f8").tobytes())
            parts.append(frame(b""))  # the record of length 0
        else:
            parts.append(rng.bytes(int(rng.integers(1, 300))))
    from visualdl.format import framing

    data = b"".join(parts)
    arr = np.frombuffer(data, np.uint8)
    assert list(framing._candidates(arr, 0, len(data) - 11)) == _brute_force_candidates(data)


def test_scan_reports_unresolved_damage_to_scan_file(tmp_path):
    """scan() alone stops at bad bytes it cannot resolve in its buffer; scan_file goes on
    in the file and finds the record after them."""
    from visualdl.format.framing import scan_file

    data = frame(b"one") + os.urandom(5000) + frame(b"two")
    assert scan(data[:2000]).damage == "length CRC"
    path = tmp_path / "f"
    path.write_bytes(data)
    seen, errors = [], []
    with open(path, "rb") as f:
        for r in scan_file(f, chunk=1024):
            # a result's records point into a buffer the next chunk reuses: copy them now
            seen.extend(bytes(d) for _, d in r.records)
            errors.extend(r.errors)
            end = r.end
    assert seen == [b"one", b"two"]
    assert end == len(data) and len(errors) == 1 and "skipped 5000 bytes" in errors[0]
