"""``memory://`` logdirs, ranged reads of objects that grow, and clear errors for URLs
whose filesystem is not installed (gcsfs is not in the test extra)."""

from __future__ import annotations

import importlib.util
import os

import pytest

from visualdl import LogReader, LogWriter
from visualdl.format.framing import frame
from visualdl.format.record_pb2 import FileHeader, Record
from visualdl.format.scalar_codec import encode_entry, record_entry
from visualdl.storage import StorageUnavailable, is_url, local_path, parse_storage_options

gcsfs_missing = pytest.mark.skipif(importlib.util.find_spec("gcsfs") is not None,
                                   reason="gcsfs is installed: no missing filesystem to test")


def test_memory_roundtrip_of_several_kinds(memory_url):
    with LogWriter(logdir=f"{memory_url}/a") as w:
        for step in range(10):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        w.add_text("notes", "**hi**", step=2)
        w.add_histogram("h", [1.0, 2.0, 2.5, 3.0], step=1)
        w.add_hparams({"lr": 0.01}, ["loss"])
    reader = LogReader(memory_url)
    assert reader.runs() == ["a"]
    assert reader.scalars("a", "loss").values.tolist() == [1.0 / (s + 1) for s in range(10)]
    assert reader.texts("a", "notes")[0].text == "**hi**"
    assert reader.hparams("a").hparams == {"lr": 0.01}
    assert reader.histograms("a", "h")[0].step == 1


def _record(tag: str, points: list[tuple[int, float]]) -> bytes:
    flat = []
    for step, value in points:
        flat += [step, 1000.0 + step, value]
    return frame(record_entry(encode_entry(tag, flat)))


def test_a_growing_object_is_read_from_its_stored_offset(memory_url):
    """An object that grows (a filesystem that allows it, or a tool that re-uploads a
    longer file): only the new bytes are fetched, by a ranged read."""
    import fsspec  # (memory_url has it)

    fs = fsspec.filesystem("memory")
    path = memory_url[len("memory://"):] + "/run/vdlrecords.1.host.1.log"
    header = frame(Record(header=FileHeader(format_major=1, pid=1)).SerializeToString())
    first = header + _record("x", [(0, 0.5), (1, 1.5)])
    fs.pipe_file(path, first)
    reader = LogReader(memory_url)
    assert reader.scalars("run", "x").values.tolist() == [0.5, 1.5]
    before = reader.storage_stats()
    more = _record("x", [(2, 2.5)])
    fs.pipe_file(path, first + more)
    reader.reload()
    delta = reader.storage_stats().minus(before)
    assert (delta.lists, delta.gets, delta.bytes_read) == (1, 1, len(more))
    assert reader.scalars("run", "x").values.tolist() == [0.5, 1.5, 2.5]
    before = reader.storage_stats()
    reader.reload()
    assert reader.storage_stats().minus(before).gets == 0


@gcsfs_missing
def test_url_without_its_filesystem_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ImportError, match=r'pip install "visualdl\[gcs\]"'):
        LogWriter(logdir="gs://bucket/run")
    with pytest.raises(StorageUnavailable, match="gcsfs"):
        LogReader("gs://bucket/logs")
    assert os.listdir(tmp_path) == []  # no local folder named "gs:"


def test_s3_url_never_becomes_a_local_folder(tmp_path, monkeypatch):
    """Before: LogWriter(logdir="s3://b/run") wrote into ./s3:/b/run without a word."""
    pytest.importorskip("s3fs", reason="s3:// needs s3fs (test extra)")
    monkeypatch.chdir(tmp_path)
    for key, value in {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "k",
                       "AWS_SECRET_ACCESS_KEY": "s", "AWS_MAX_ATTEMPTS": "1"}.items():
        monkeypatch.setenv(key, value)
    writer = LogWriter(logdir="s3://bucket/run")
    writer.add_scalar("a", 1.0, 1)
    with pytest.raises(RuntimeError, match="could not write s3://bucket/run/vdlrecords"):
        writer.close()  # nothing listens there: the upload fails, and says so
    assert os.listdir(tmp_path) == []


def test_unknown_protocol_is_a_value_error():
    pytest.importorskip("fsspec")  # (it knows the protocols; without it: the extra named)
    with pytest.raises(ValueError, match="unknown storage protocol 'nosuchfs'"):
        LogReader("nosuchfs://x/y")


def test_url_helpers():
    assert is_url("s3://b/k") and is_url("memory://x") and is_url("gs://b")
    assert not is_url("/tmp/x") and not is_url("file:///tmp/x") and not is_url("C:\\x")
    assert local_path("file:///tmp/x") == "/tmp/x"
    assert parse_storage_options(["anon=true", "client_kwargs.region_name=eu-west-1",
                                  "endpoint_url=http://h:9000", "n=3"]) == {
        "anon": True, "client_kwargs": {"region_name": "eu-west-1"},
        "endpoint_url": "http://h:9000", "n": 3}
    with pytest.raises(ValueError, match="key=value"):
        parse_storage_options(["novalue"])


def test_file_url_is_the_local_path(tmp_path):
    with LogWriter(logdir=f"file://{tmp_path}/run") as w:
        w.add_scalar("a", 3.0, 1)
    assert w.file_name.endswith(".log") and os.path.isdir(tmp_path / "run")
    assert LogReader(f"file://{tmp_path}").scalars("run", "a").values.tolist() == [3.0]
