"""LogWriter and LogReader against a real S3 API (moto's server): segments, many writers
in one run, a writer killed mid-run, and what a reload costs in requests."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.helpers.cli import cli_env
from visualdl import LogReader, LogWriter
from visualdl.format.framing import scan
from visualdl.format.record_pb2 import Record
from visualdl.format.names import segment_key

SEGMENT_NAME = re.compile(r"^vdlrecords\.\d{19}\.[^/]+\.\d+\.[0-9a-f]{8}\.seg\d{6}$")


def _objects(s3, url: str) -> dict[str, bytes]:
    import boto3  # (moto's, which the s3 fixture has)

    bucket, _, prefix = url[len("s3://"):].partition("/")
    client = boto3.client("s3", endpoint_url=s3.endpoint, region_name="us-east-1")
    out = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            body = client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
            out[item["Key"][len(prefix) + 1:]] = body
    return out


def test_writer_uploads_each_flush_once_as_a_segment_with_a_header(s3, s3_url):
    run = f"{s3_url}/run"
    mark = s3.mark()
    writer = LogWriter(logdir=run, flush_secs=1000)
    for flush in range(3):
        for step in range(flush * 100, flush * 100 + 100):
            writer.add_scalar("loss", step * 0.5, step)
        writer.flush()
    writer.close()
    objects = _objects(s3, run)
    names = sorted(objects)
    assert len(names) == 3, names
    assert all(SEGMENT_NAME.match(n) for n in names), names
    assert [segment_key(n)[1] for n in names] == [1, 2, 3]
    assert len({segment_key(n)[0] for n in names}) == 1  # one writer, one stream
    for name in names:  # each a complete record file: header first, then the data
        result = scan(objects[name])
        assert result.end == len(objects[name]) and not result.errors
        first = Record.FromString(bytes(result.records[0][1]))
        assert first.HasField("header") and first.header.pid > 0
    puts = [r for r in s3.since(mark) if r.method == "PUT"]
    # every byte uploaded once: no object rewritten, nothing re-uploaded
    assert len(puts) == 3
    assert sum(r.bytes_in for r in puts) == sum(len(b) for b in objects.values())
    # nothing is left behind as a local folder named after the URL
    steps, _, values = LogReader(run).scalars("run", "loss")
    assert steps.tolist() == list(range(300))
    assert values.tolist() == [s * 0.5 for s in range(300)]


def test_many_processes_write_one_run(s3, s3_url, tmp_path):
    run = f"{s3_url}/shared"
    code = textwrap.dedent("""
        import sys
        from visualdl import LogWriter
        k = int(sys.argv[1])
        with LogWriter(logdir=sys.argv[2], flush_secs=0.05) as w:
            for step in range(500):
                w.add_scalar(f"worker{k}/loss", k + step / 1000, step)
                w.add_scalar("all/loss", k * 1000 + step, step)
            w.add_text("note", f"worker {k}", step=k)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(k), run], env=cli_env())
             for k in range(3)]
    assert [p.wait(120) for p in procs] == [0, 0, 0]
    streams = {segment_key(n)[0] for n in _objects(s3, run)}
    assert len(streams) == 3  # each process its own segments
    reader = LogReader(s3_url)
    assert reader.runs() == ["shared"]
    assert reader.errors == 0, reader.error_messages
    for k in range(3):
        steps, _, values = reader.scalars("shared", f"worker{k}/loss")
        assert steps.tolist() == list(range(500))
        np.testing.assert_allclose(values, [k + s / 1000 for s in range(500)])
    _, _, values = reader.scalars("shared", "all/loss")
    assert sorted(values.tolist()) == sorted(k * 1000 + s for k in range(3) for s in range(500))
    assert sorted(t.text for t in reader.texts("shared", "note")) == \
        ["worker 0", "worker 1", "worker 2"]


def test_a_killed_writer_loses_nothing_it_flushed(s3, s3_url):
    run = f"{s3_url}/killed"
    code = textwrap.dedent("""
        import sys, time
        from visualdl import LogWriter
        w = LogWriter(logdir=sys.argv[1], flush_secs=1000)
        for step in range(2000):
            w.add_scalar("loss", step / 10, step)
            if step % 500 == 499:
                w.flush()
                print("flushed", step, flush=True)
        for step in range(2000, 2500):   # buffered, never flushed
            w.add_scalar("loss", step / 10, step)
        print("waiting", flush=True)
        time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code, run], env=cli_env(),
                            stdout=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line.strip())
            if line.startswith("waiting"):
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert lines[-2] == "flushed 1999"
    reader = LogReader(run)
    steps, _, values = reader.scalars("killed", "loss")
    assert steps.tolist() == list(range(2000))  # every acknowledged point, nothing torn
    assert values.tolist() == [s / 10 for s in range(2000)]
    assert reader.errors == 0


def test_idle_reload_lists_once_and_fetches_nothing_known(s3, s3_url):
    for r in range(3):
        with LogWriter(logdir=f"{s3_url}/run{r}") as w:
            for step in range(50):
                w.add_scalar("loss", r + step, step)
    reader = LogReader(s3_url)
    assert reader.runs() == ["run0", "run1", "run2"]
    for _ in range(3):
        mark = s3.mark()
        assert reader.reload() == 0
        requests = s3.since(mark)
        assert len(requests) == 1 and requests[0].is_list, requests  # one LIST, no GET
    # one more flush in run1: exactly that one new segment is fetched
    with LogWriter(logdir=f"{s3_url}/run1") as w:
        w.add_scalar("loss", 99.0, 50)
    mark = s3.mark()
    assert reader.reload() > 0
    requests = s3.since(mark)
    gets = [r for r in requests if r.is_get]
    assert len([r for r in requests if r.is_list]) == 1
    assert len(gets) == 1 and "/run1/" in gets[0].path and ".seg000001" in gets[0].path
    assert reader.scalars("run1", "loss").values[-1] == 99.0
    # the reader's own counters agree with the server's log
    stats = reader.storage_stats()
    assert stats.lists >= 5 and stats.gets == 4


def test_blobs_are_read_by_range_from_s3(s3, s3_url):
    image = (np.arange(8 * 8 * 3) % 256).astype(np.uint8).reshape(8, 8, 3)
    with LogWriter(logdir=f"{s3_url}/img") as w:
        w.add_image("pic", image, step=3)
        w.add_scalar("x", 1.0, 0)
    reader = LogReader(s3_url)
    ref = reader.images("img", "pic")[0]
    assert ref.path.startswith("s3://")
    mark = s3.mark()
    msg = reader.load(ref)
    assert (msg.width, msg.height) == (8, 8)
    from PIL import Image
    import io
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(msg.png))), image)
    gets = [r for r in s3.since(mark) if r.is_get]
    assert len(gets) == 2  # the record's length, then its bytes; never the whole segment


def test_endpoint_from_storage_options(s3, s3_url, monkeypatch):
    """--storage-option / storage_options= reach the filesystem (here: the endpoint)."""
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    options = {"endpoint_url": s3.endpoint}
    with LogWriter(logdir=f"{s3_url}/opt", storage_options=options) as w:
        w.add_scalar("a", 2.5, 7)
    reader = LogReader(s3_url, storage_options=options)
    assert reader.scalars("opt", "a").values.tolist() == [2.5]
