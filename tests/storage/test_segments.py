"""SegmentWriter on its own (``memory://``): size-capped segments, and a failed upload that
the LogWriter retries without losing or duplicating a point."""

from __future__ import annotations

import pytest

from visualdl import LogReader, LogWriter
from visualdl.format.framing import scan
from visualdl.format.record_pb2 import FileHeader, Record
from visualdl.storage import open_fs
from visualdl.writer.record_file import RecordWriteError
from visualdl.format.names import segment_key
from visualdl.writer.segments import SegmentWriter


def test_segments_are_capped_and_each_starts_with_the_header(memory_url):
    remote = open_fs(memory_url)
    header = Record(header=FileHeader(format_major=1, pid=7)).SerializeToString()
    writer = SegmentWriter(remote, f"{memory_url}/vdlrecords.1.h.7.abcdef01", max_bytes=400)
    writer.write([header])  # the header alone uploads nothing
    assert remote.stats.puts == 0
    records = [bytes([i]) * 100 for i in range(10)]
    writer.write(records)
    objects = sorted(remote.find(memory_url), key=lambda o: segment_key(o.url)[1])
    assert len(objects) == writer.segments == remote.stats.puts >= 3
    got = []
    for info in objects:
        assert info.size <= 400
        data = remote.read(info.url, 0, info.size)
        result = scan(data)
        assert not result.errors and result.end == len(data)
        assert bytes(result.records[0][1]) == header
        got += [bytes(r) for _, r in result.records[1:]]
    assert got == records
    assert writer.size == sum(o.size for o in objects)


def test_a_failed_upload_is_retried_by_the_next_flush(memory_url):
    writer = LogWriter(logdir=f"{memory_url}/run", flush_secs=1000)
    remote = writer._remote
    real = remote.write
    calls = {"n": 0}

    def flaky(url, data):
        calls["n"] += 1
        if calls["n"] == 2:
            raise ConnectionError("endpoint went away")
        real(url, data)

    remote.write = flaky
    for step in range(10):
        writer.add_scalar("x", float(step), step)
    writer.flush()
    for step in range(10, 20):
        writer.add_scalar("x", float(step), step)
    with pytest.raises(RuntimeError, match="endpoint went away"):
        writer.flush()
    writer.flush()  # the retry: the same records, once
    writer.close()
    steps = LogReader(memory_url).scalars("run", "x").steps
    assert steps.tolist() == list(range(20))
    names = sorted(o.url for o in remote.find(memory_url))
    assert [segment_key(n)[1] for n in names] == [1, 2]  # no gap, no duplicate


def test_segment_failure_reports_what_was_written(memory_url):
    remote = open_fs(memory_url)

    def broken(url, data):
        raise TimeoutError("slow")

    remote.write = broken
    writer = SegmentWriter(remote, f"{memory_url}/vdlrecords.1.h.1.00000000")
    with pytest.raises(RecordWriteError) as info:
        writer.write([b"header", b"a", b"b"])
    assert info.value.written == 1  # the header is kept; a and b are not stored
