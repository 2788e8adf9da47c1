"""Issue 13, item 8: records with valid CRCs but inconsistent contents are skipped and
counted as bad records, never a 500. Crafted with the real framing into a real logdir,
served by a real server."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogReader, LogWriter
from visualdl.format.framing import frame
from visualdl.format.record_pb2 import Record


def _good_histogram(msg, step):
    msg.tag, msg.step, msg.wall_time = "h", step, 1.0 + step
    msg.edges[:] = [0.0, 1.0, 2.0]
    msg.counts[:] = [1.0, 1.0]
    msg.min, msg.max, msg.sum, msg.sum_squares, msg.count = 0.5, 1.5, 2.0, 2.5, 2.0


def _hist(**change):
    def fill(entry, step):
        msg = entry.histogram
        _good_histogram(msg, step)
        for name, value in change.items():
            field = getattr(msg, name)
            if hasattr(field, "extend"):
                field[:] = value
            else:
                setattr(msg, name, value)
    return fill


def _embedding(shape, matrix):
    def fill(entry, step):
        msg = entry.embedding
        msg.tag, msg.step, msg.wall_time = "emb", step, 1.0 + step
        msg.shape[:] = shape
        msg.matrix = matrix
    return fill


def _pr(**change):
    def fill(entry, step):
        msg = entry.pr_curve
        msg.tag, msg.step, msg.wall_time = "pr", step, 1.0 + step
        for name in ("precision", "recall", "thresholds", "tp", "fp", "tn", "fn"):
            getattr(msg, name)[:] = change.get(name, [1.0, 0.5])
    return fill


def _image(height, width, channels):
    def fill(entry, step):
        msg = entry.image
        msg.tag, msg.step, msg.wall_time = "img", step, 1.0 + step
        msg.png, msg.height, msg.width, msg.channels = b"\x89PNG", height, width, channels
    return fill


BAD = {
    "histogram edges shorter than counts": _hist(edges=[0.0, 1.0]),
    "histogram without buckets": _hist(edges=[], counts=[]),
    "histogram infinite sum": _hist(sum=math.inf),
    "histogram infinite sum of squares": _hist(sum_squares=math.inf),
    "histogram mean squared overflows": _hist(sum=1e200, sum_squares=1e300, count=1.0),
    "histogram NaN minimum": _hist(min=math.nan),
    "histogram NaN edge": _hist(edges=[0.0, math.nan, 2.0]),
    "histogram decreasing edges": _hist(edges=[2.0, 1.0, 0.0]),
    "histogram negative count": _hist(counts=[-1.0, 3.0]),
    "histogram NaN mean": _hist(mean=math.nan, std=0.0),
    "histogram negative std": _hist(mean=1.0, std=-1.0),
    "histogram min above max": _hist(min=3.0, max=1.0),
    "embedding shape does not match bytes": _embedding([3, 4], b"\0" * 4),
    "embedding 1-D shape": _embedding([4], b"\0" * 16),
    "embedding NaN": _embedding([1, 1], np.array([np.nan], "<f4").tobytes()),
    "pr curve columns differ": _pr(precision=[1.0]),
    "pr curve NaN count": _pr(tp=[math.nan, 1.0]),
    "pr curve empty": _pr(precision=[], recall=[], thresholds=[], tp=[], fp=[], tn=[], fn=[]),
    "image with 2 channels": _image(4, 4, 2),
    "image of height 0": _image(0, 4, 3),
}


def _logdir(tmp_path, bad):
    """A run with good entries at step 0 and the crafted ones (each its own record)."""
    run = tmp_path / "run"
    with LogWriter(logdir=str(run)) as w:
        w.add_histogram("h", [0.5, 1.5], 0, buckets=2)
        w.add_embeddings("emb", np.eye(3, dtype=np.float32), ["a", "b", "c"], step=0)
        w.add_pr_curve("pr", [0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3], 0, num_thresholds=5)
        w.add_image("img", np.zeros((4, 4, 3), np.uint8), 0)
        path = w.file_name
    with open(path, "ab") as f:
        for step, fill in enumerate(bad, start=1):
            record = Record()
            fill(record.entries.add(), step)
            f.write(frame(record.SerializeToString()))
    return tmp_path


@pytest.mark.parametrize("name", list(BAD))
def test_inconsistent_entry_is_skipped_and_counted(tmp_path, name):
    r = LogReader(str(_logdir(tmp_path, [BAD[name]])))
    assert r.errors == 1, r.error_messages
    assert "bad entry" in r.error_messages[0]
    assert r.histograms("run", "h")[0].step == 0 and len(r.histograms("run", "h")) == 1
    assert [e.step for e in r.embeddings("run", "emb")] == [0]
    assert [e.step for e in r.pr_curves("run", "pr")] == [0]
    assert [e.step for e in r.images("run", "img")] == [0]


def test_server_never_500s_on_inconsistent_entries(tmp_path):
    with serving(_logdir(tmp_path, list(BAD.values()))) as server:
        client = Client(server.url)
        assert client.json("/api/info")["errors"] == len(BAD)
        hist = client.json("/api/histograms", run="run", tag="h")
        assert [e["step"] for e in hist["entries"]] == [0]
        assert hist["entries"][0]["mean"] == 1.0 and hist["entries"][0]["std"] == 0.5
        dist = client.json("/api/distributions", run="run", tag="h")
        assert dist["steps"] == [0]
        assert client.json("/api/embeddings", run="run", tag="emb")["steps"] == [0]
        proj = client.json("/api/embeddings/projection", run="run", tag="emb", step=0)
        assert proj["total"] == 3 and proj["metadata"] == [["a"], ["b"], ["c"]]
        for step in range(1, len(BAD) + 1):
            response = client.get("/api/embeddings/projection", run="run", tag="emb", step=step)
            assert response.status_code == 404, response.text
        assert [e["step"] for e in client.json("/api/pr_curves", run="run", tag="pr")["entries"]] == [0]
        assert client.json("/api/images", run="run", tag="img")["steps"] == [0]
        client.close()


def test_old_writer_histogram_with_overflowed_sums_is_a_bad_record(tmp_path):
    """What the old writer stored for add_histogram("h", [1e200, 2e200]): inf sum of squares
    and no mean/std. It used to be a 500 on /api/histograms."""
    def old(entry, step):
        msg = entry.histogram
        msg.tag, msg.step, msg.wall_time = "h", step, 1.0 + step
        msg.edges[:], msg.counts[:] = [1e200, 1.5e200, 2e200], [1.0, 1.0]
        msg.min, msg.max, msg.sum, msg.sum_squares, msg.count = 1e200, 2e200, 3e200, math.inf, 2
    with serving(_logdir(tmp_path, [old])) as server:
        client = Client(server.url)
        assert [e["step"] for e in client.json("/api/histograms", run="run", tag="h")["entries"]] == [0]
        assert client.json("/api/distributions", run="run", tag="h")["steps"] == [0]
        assert client.json("/api/info")["errors"] == 1
        client.close()
