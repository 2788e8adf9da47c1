"""Boxes recorded over images: kept as data beside unchanged pixels, served by the HTTP API
with exact values, read back by ``LogReader``, counted by ``inspect``, carried by
``convert``; bad boxes are refused with the tag and the problem named, and what was logged
before stays."""

from __future__ import annotations

import io

import numpy as np
import pytest

import visualdl
from tests.helpers.http import client_of
from visualdl import LogReader, LogWriter, SummaryWriter
from visualdl.kinds.image.write import decode_png
from visualdl.reader.inspect import summarize

PIXELS = np.arange(80 * 100 * 3, dtype=np.uint32).reshape(80, 100, 3).astype(np.uint8)
BOXES = [[10.5, 10, 50, 40.25], [60, 20, 90, 70], [0, 0, 100, 80]]
LABELS = ["cat", "dog", "ünï"]
SCORES = [0.5, 0.25, 1.0]


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("boxes")
    with LogWriter(logdir=str(root / "run")) as w:
        w.add_image("det", PIXELS, 1, boxes=BOXES, labels=LABELS, scores=SCORES)
        w.add_image("det", PIXELS, 2)  # a step without boxes
        w.add_image("det", PIXELS, 3, boxes=np.array([[1, 2, 3, 4]], np.float32))
    return root


def test_reader_gives_boxes_back_and_pixels_are_untouched(logdir):
    r = LogReader(str(logdir))
    assert r.errors == 0
    refs = r.images("run", "det")
    assert [ref.meta.get("box_count") for ref in refs] == [3, None, 1]
    assert refs[1].meta == {"height": 80, "width": 100, "channels": 3}  # as before boxes
    first = r.boxes(refs[0])
    assert first.boxes.tolist() == BOXES
    assert first.labels == LABELS and first.scores.tolist() == SCORES
    assert np.array_equal(decode_png(r.load(refs[0]).png), PIXELS)  # not burned in
    assert r.boxes(refs[1]).boxes.shape == (0, 4)
    last = r.boxes(refs[2])
    assert last.boxes.tolist() == [[1, 2, 3, 4]] and last.labels == [] and len(last.scores) == 0


def test_http_api_exact_values(logdir):
    with client_of(logdir) as api:
        index = api.json("/api/images", run="run", tag="det")
        assert index["steps"] == [1, 2, 3] and index["box_count"] == [3, 0, 1]
        body = api.json("/api/images/boxes", run="run", tag="det", step=1)
        assert body == {"run": "run", "tag": "det", "step": 1, "width": 100, "height": 80,
                        "boxes": BOXES, "labels": LABELS, "scores": SCORES}
        empty = api.json("/api/images/boxes", run="run", tag="det", step=2)
        assert (empty["boxes"], empty["labels"], empty["scores"]) == ([], [], [])
        png = api.get("/api/images/data", {"run": "run", "tag": "det", "step": 1})
        assert np.array_equal(decode_png(png.content), PIXELS)
        assert api.get("/api/images/boxes", {"run": "run", "tag": "det", "step": 9}).status_code == 404
        assert api.get("/api/images/boxes", {"run": "run", "tag": "nope", "step": 1}).status_code == 404
        assert api.get("/api/images/boxes", {"run": "run", "tag": "det"}).status_code == 400


def test_inspect_counts_and_convert_carries_boxes(logdir, tmp_path):
    out = io.StringIO()
    assert summarize([str(logdir)], out) == 0
    assert "image      det  (3 points, steps 1..3, 4 boxes)" in out.getvalue()
    visualdl.convert(str(logdir), str(tmp_path / "copy"))
    r = LogReader(str(tmp_path / "copy"))
    (first, _, last) = r.images("run", "det")
    assert r.boxes(first).boxes.tolist() == BOXES and r.boxes(first).labels == LABELS
    assert r.boxes(last).boxes.tolist() == [[1, 2, 3, 4]]


@pytest.mark.parametrize("kwargs, message", [
    ({"boxes": [[0, 0, 5, 5], [90, 10, 101, 20]]}, r"'t': box 1 \(90, 10, 101, 20\) lies outside the 100x80 image"),
    ({"boxes": [[0, -1, 5, 5]]}, r"'t': box 0 .* lies outside"),
    ({"boxes": [[0, 0, 5, 81]]}, r"'t': box 0 .* lies outside the 100x80"),
    ({"boxes": [[5, 0, 4, 5]]}, r"'t': box 0 .* xmin > xmax"),
    ({"boxes": [[0, 0, 5]]}, r"'t': boxes must have shape \(N, 4\).*\(1, 3\)"),
    ({"boxes": np.zeros((2, 2, 4))}, r"'t': boxes must have shape \(N, 4\)"),
    ({"boxes": [[0, 0, np.nan, 5]]}, r"'t': box 0 has a NaN"),
    ({"boxes": [[0, 0, 5, 5]], "labels": ["a", "b"]}, r"'t': labels has 2 entries for 1 boxes"),
    ({"boxes": [[0, 0, 5, 5]], "scores": [0.1, 0.2]}, r"'t': scores has 2 entries for 1 boxes"),
    ({"boxes": [[0, 0, 5, 5]], "scores": [np.inf]}, r"'t': scores contain NaN"),
    ({"labels": ["a"]}, r"'t': labels and scores describe boxes; no boxes"),
])
def test_bad_boxes_are_refused_and_nothing_before_is_lost(tmp_path, kwargs, message):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_image("t", PIXELS, 0, boxes=[[1, 1, 2, 2]], labels=["ok"])
        with pytest.raises(ValueError, match=message):
            w.add_image("t", PIXELS, 1, **kwargs)
        w.add_image("t", PIXELS, 2)
    r = LogReader(str(tmp_path))
    assert r.errors == 0
    assert [ref.step for ref in r.images("run", "t")] == [0, 2]
    assert r.boxes(r.images("run", "t")[0]).labels == ["ok"]


def test_boxes_of_a_batch_are_refused(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        with pytest.raises(ValueError, match=r"'b': boxes belong to one image.*NHWC"):
            w.add_image("b", np.zeros((2, 4, 4, 3), np.uint8), 0, dataformats="NHWC",
                        boxes=[[0, 0, 1, 1]])


def test_summary_writer_add_image_with_boxes(tmp_path):
    chw = np.zeros((3, 20, 30), np.float32)
    chw[0] = 0.5
    with SummaryWriter(str(tmp_path / "exp")) as w:
        w.add_image_with_boxes("det", chw, np.array([[1, 2, 10, 12], [5, 5, 30, 20]]), 4,
                               labels=["a", "b"])
        w.add_image_with_boxes("big", chw, np.array([[1, 2, 10, 12]]), rescale=2)
        w.add_image_with_boxes("one", chw, np.array([[0, 0, 3, 3]]), labels="solo")
        with pytest.raises(ValueError, match=r"'bad': labels has 1 entries for 2 boxes"):
            w.add_image_with_boxes("bad", chw, np.array([[0, 0, 1, 1], [0, 0, 2, 2]]),
                                   labels=["x"])
        with pytest.raises(ValueError, match=r"'far': box 0 .* outside the 30x20 image"):
            w.add_image_with_boxes("far", chw, np.array([[0, 0, 31, 1]]))
    r = LogReader(str(tmp_path / "exp"))
    (ref,) = r.images("exp", "det")
    assert ref.step == 4 and r.boxes(ref).boxes.tolist() == [[1, 2, 10, 12], [5, 5, 30, 20]]
    assert r.boxes(ref).labels == ["a", "b"]
    pixels = decode_png(r.load(ref).png)
    assert pixels.shape == (20, 30, 3) and (pixels[..., 0] == 127).all()  # TB's truncation
    assert (pixels[..., 1:] == 0).all()  # nothing drawn into the pixels
    (big,) = r.images("exp", "big")
    assert (big.meta["width"], big.meta["height"]) == (60, 40)
    assert r.boxes(big).boxes.tolist() == [[2, 4, 20, 24]]
    assert r.boxes(r.images("exp", "one")[0]).labels == ["solo"]
    assert r.tags("exp")["image"] == ["big", "det", "one"]
