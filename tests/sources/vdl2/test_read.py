"""LogReader reads VisualDL 2.5.3's logs: every kind, every file of a run, the values that
went in (``fixtures/values.json``, written beside the logs by VisualDL itself)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.protos import assert_pb2_current
from tests.sources.vdl2.common import LOGS, T0, TRAIN, VALUES, f32, png_pixels, wav_samples
from visualdl.reader import LogReader
from visualdl.sources import vdl2
from visualdl.sources.vdl2 import vdl2_record_pb2 as pb
from visualdl.sources.vdl2.decode import FileDecoder, fast_scalar
from visualdl.sources.vdl2.framing import looks_like_vdl2

PROTO = Path(vdl2.__file__).resolve().parent / "vdl2_record.proto"


@pytest.fixture(scope="module")
def reader():
    return LogReader(str(LOGS))


def test_runs_and_tags(reader):
    assert reader.runs() == ["eval", "train"]
    assert reader.errors == 0, reader.error_messages
    assert reader.tags("train") == {
        "scalar": ["loss", "lr/cos", "lr/warm", "metrics/acc"],
        "image": ["figure", "gray", "sample"], "audio": ["wave"], "text": ["note"],
        "histogram": ["weights"], "pr_curve": ["pr"], "roc_curve": ["roc"],
        "embedding": ["emb"], "hparams": ["hparams"], "custom_scalars": ["custom_scalars"]}
    assert reader.tags("eval") == {"scalar": ["loss"]}


def test_every_file_of_a_run_is_read_in_step_order(reader):
    files = reader.files("train")
    assert [Path(f.path).name for f in files] == ["vdlrecords.1700000000.log",
                                                  "vdlrecords.1700000100.log"]
    assert all(f.header.writer_version == "VisualDL 2.x" and not f.refused for f in files)
    loss = reader.scalars("train", "loss")
    assert loss.steps.tolist() == list(range(20))  # VisualDL itself shows only 10..19
    assert loss.values.tolist() == f32(TRAIN["scalars"]["loss"])
    assert loss.wall_times.tolist() == [T0 + s for s in range(20)]
    acc = reader.scalars("train", "metrics/acc")
    assert acc.values.tolist() == f32(TRAIN["scalars"]["metrics/acc"])
    ev = reader.scalars("eval", "loss")
    assert ev.steps.tolist() == VALUES["eval"]["scalars"]["steps"]
    assert ev.values.tolist() == f32(VALUES["eval"]["scalars"]["loss"])


def test_add_scalars_keys_are_tags_and_one_chart(reader):
    for key in ("warm", "cos"):
        s = reader.scalars("train", f"lr/{key}")
        assert s.steps.tolist() == list(range(10))
        assert s.values.tolist() == f32(TRAIN["scalars"][f"lr/{key}"])
    charts = reader.events("train", "custom_scalars", "custom_scalars")
    last = charts[-1]
    assert (last.main_tag, last.series, last.keys) == ("lr", ("lr/warm", "lr/cos"),
                                                       ("warm", "cos"))


def test_images_and_figure_pixels(reader):
    refs = reader.images("train", "sample")
    assert [r.step for r in refs] == [0, 5, 12]  # the last one from the second file
    for ref in refs:
        msg = reader.load(ref)
        pixels = png_pixels(msg.png)
        assert pixels.tolist() == TRAIN["images"][str(ref.step)]
        assert (msg.height, msg.width, msg.channels) == (6, 8, 3)
        assert ref.wall_time == T0 + ref.step
    gray = reader.load(reader.images("train", "gray")[0])
    pixels = png_pixels(gray.png)  # VisualDL stores an HW image as RGB, grey on each channel
    assert gray.channels == 3 and pixels.shape == (5, 4, 3)
    assert all(pixels[..., c].tolist() == TRAIN["gray"]["pixels"] for c in range(3))
    fig = reader.images("train", "figure")[0]
    assert fig.step == TRAIN["figure"]["step"]
    assert [fig.meta["height"], fig.meta["width"]] == TRAIN["figure"]["size"]


def test_audio_samples(reader):
    (ref,) = reader.audio("train", "wave")
    msg = reader.load(ref)
    assert (msg.step, msg.sample_rate, msg.channels) == (2, 8000, 1)
    rate, samples = wav_samples(msg.wav)
    expected = np.asarray(TRAIN["audio"]["samples"])
    assert rate == 8000 and msg.frames == len(expected) == len(samples)
    np.testing.assert_allclose(samples, expected, atol=1 / 32767)


def test_text(reader):
    got = {e.step: e.text for e in reader.texts("train", "note")}
    assert got == {int(k): v for k, v in TRAIN["text"].items()}


def test_histograms(reader):
    events = reader.histograms("train", "weights")
    assert [e.step for e in events] == [0, 5, 12]
    for e in events:
        assert e.counts.tolist() == TRAIN["histograms"][str(e.step)]
        np.testing.assert_allclose(e.edges, TRAIN["histogram_edges"][str(e.step)])
        assert e.count == 200 and e.min == e.edges[0] and e.max == e.edges[-1]


def test_pr_and_roc_curves(reader):
    (pr,) = reader.pr_curves("train", "pr")
    want = TRAIN["pr_curve"]
    assert pr.step == want["step"]
    for name in ("tp", "fp", "tn", "fn"):
        np.testing.assert_allclose(getattr(pr, name), want[name])
    np.testing.assert_allclose(pr.x, want["recall"])
    np.testing.assert_allclose(pr.y, want["precision"])
    np.testing.assert_allclose(pr.thresholds, np.arange(11) / 10)
    (roc,) = reader.roc_curves("train", "roc")
    want = TRAIN["roc_curve"]
    for name in ("tp", "fp", "tn", "fn"):
        np.testing.assert_allclose(getattr(roc, name), want[name])
    np.testing.assert_allclose(roc.x, want["fpr"])
    np.testing.assert_allclose(roc.y, want["tpr"])


def test_embeddings(reader):
    from visualdl.kinds.embedding.read import load_embedding

    (ref,) = reader.embeddings("train", "emb")
    matrix, header, rows = load_embedding(reader.load(ref))
    np.testing.assert_allclose(matrix, TRAIN["embedding"]["matrix"], rtol=1e-6)
    assert rows == [[m] for m in TRAIN["embedding"]["metadata"]]
    assert header == []


def test_hparams(reader):
    h = reader.hparams("train")
    assert h.hparams == TRAIN["hparams"]["hparams"]
    assert isinstance(h.hparams["layers"], int)
    assert list(h.metric_tags) == TRAIN["hparams"]["metrics"]


def test_told_apart_by_content_not_name():
    ours_head = bytes.fromhex("1a00000000000000") + b"\x00\x00\x00\x00"
    data = (LOGS / "train" / "vdlrecords.1700000000.log").read_bytes()
    assert looks_like_vdl2(data[:12])
    assert not looks_like_vdl2(ours_head)
    assert not looks_like_vdl2(b"hello world, not a log")


def test_fast_path_agrees_with_protobuf():
    rng = random.Random(3)
    for _ in range(300):
        value = pb.Record.Value(id=rng.choice([0, 1, rng.randint(-5, 2 ** 40)]),
                                tag=rng.choice(["", "a", "b/c", "ünï" * 50]),
                                timestamp=rng.choice([0, rng.randint(0, 2 ** 42)]),
                                value=rng.choice([0.0, rng.uniform(-1e6, 1e6)]))
        payload = pb.Record(values=[value]).SerializeToString()
        fast = fast_scalar(payload)
        assert fast is not None
        assert fast == (value.tag, value.id, value.timestamp / 1000.0, value.value)
        assert FileDecoder().decode(payload) == [fast]


def test_fast_path_declines_anything_else():
    text = pb.Record(values=[pb.Record.Value(id=1, tag="t", text=pb.Record.Text(
        encoded_text_string="x"))]).SerializeToString()
    two = pb.Record(values=[pb.Record.Value(id=1, tag="a", value=1.0)] * 2).SerializeToString()
    empty = pb.Record(values=[pb.Record.Value(id=1, tag="a")]).SerializeToString()
    for payload in (text, two, empty, b"", b"\x0a\x05abc"):
        assert fast_scalar(payload) is None
    assert FileDecoder().decode(empty) == []


def test_vdl2_record_pb2_is_current(tmp_path):
    assert_pb2_current(PROTO, pb, tmp_path)


def test_bulk_decoding_agrees_with_protobuf(tmp_path):
    """Records read in bulk (numpy) give what protobuf gives record by record: random
    steps (negative, huge, absent), wall times (absent too), tags, values, and records of
    other kinds and layouts between them."""
    import struct

    rng = random.Random(11)
    payloads = []
    for _ in range(3000):
        r = rng.random()
        if r < 0.85:
            value = pb.Record.Value(
                id=rng.choice([0, 1, 127, 128, rng.randint(-2 ** 40, 2 ** 62)]),
                tag=rng.choice(["loss", "a/b", "ünï", "x" * 120]),
                timestamp=rng.choice([0, rng.randint(0, 2 ** 45)]),
                value=rng.choice([0.0, -1.5, rng.uniform(-1e30, 1e30)]))
        elif r < 0.9:
            value = pb.Record.Value(id=rng.randint(0, 9), tag="tv", timestamp=5,
                                    tag_value=pb.Record.TagValue(tag="k", value=2.5))
        elif r < 0.95:
            value = pb.Record.Value(id=3, tag="t" * 200, value=1.0)  # a 2-byte length
        else:
            value = pb.Record.Value(id=4, tag="", value=3.0)  # no tag field at all
        payloads.append(pb.Record(values=[value]).SerializeToString())
    run = tmp_path / "run"
    run.mkdir()
    (run / "vdlrecords.1.log").write_bytes(
        b"".join(struct.pack("<Q", len(p)) + p for p in payloads))
    decoder, want = FileDecoder(), {}
    for p in payloads:
        for item in decoder.decode(p):
            if isinstance(item, tuple):
                cols = want.setdefault(item[0], ([], [], []))
                for col, v in zip(cols, item[1:]):
                    col.append(v)
    reader = LogReader(str(tmp_path))
    assert reader.errors == 0 and reader.files()[0].records == len(payloads)
    assert sorted(reader.tags("run")["scalar"]) == sorted(want)
    for tag, (steps, walls, values) in want.items():
        got = reader.scalars("run", tag)
        assert got.steps.tolist() == steps, tag
        assert got.wall_times.tolist() == walls, tag
        assert got.values.tolist() == values, tag
