"""TensorBoard event files read back by LogReader with the exact values written."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest

from visualdl.reader import LogReader
from tests.sources.tfevents.tbwrite import EventWriter, add_hparams, add_scalars


def test_scalars_exact(tmp_path):
    with EventWriter(str(tmp_path)) as w:
        for step in range(100):
            w.add_scalar("train/loss", 1.0 / (step + 1), step, 1000.0 + step)
            w.add_scalar("train/acc", step / 100, step, 1000.0 + step)
    reader = LogReader(str(tmp_path))
    assert reader.runs() == [os.path.basename(tmp_path)]
    run = reader.runs()[0]
    assert reader.tags(run) == {"scalar": ["train/acc", "train/loss"]}
    s = reader.scalars(run, "train/loss")
    assert s.steps.tolist() == list(range(100))
    assert s.wall_times.tolist() == [1000.0 + i for i in range(100)]
    # simple_value is a float32
    assert s.values.tolist() == [float(np.float32(1.0 / (i + 1))) for i in range(100)]
    assert reader.errors == 0
    assert reader.files(run)[0].header.writer_version == "brain.Event:2"


def test_scalar_tensor_form_and_metadata_only_on_first(tmp_path):
    with EventWriter(str(tmp_path)) as w:
        for step in range(5):
            w.add_scalar_tensor("lr", 0.5 * step, step, 10.0 + step)
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    assert reader.scalars(run, "lr").values.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]


def test_add_scalars_sub_directories_are_runs(tmp_path):
    writers: dict = {}
    with EventWriter(str(tmp_path)) as main:
        for step in range(3):
            main.add_scalar("loss", float(step), step, 1.0 + step)
            add_scalars(str(tmp_path), "run/acc", {"train": 0.5 + step, "val": 0.25 + step},
                        step, 1.0 + step, writers)
    for w in writers.values():
        w.close()
    reader = LogReader(str(tmp_path))
    root = os.path.basename(tmp_path)
    assert reader.runs() == sorted([root, "run_acc_train", "run_acc_val"])
    assert reader.scalars("run_acc_train", "run/acc").values.tolist() == [0.5, 1.5, 2.5]
    assert reader.scalars("run_acc_val", "run/acc").values.tolist() == [0.25, 1.25, 2.25]
    assert reader.scalars(root, "loss").steps.tolist() == [0, 1, 2]


def test_histograms_both_forms(tmp_path):
    rng = np.random.default_rng(3)
    values = rng.normal(size=1000)
    rows = np.array([[0.0, 1.0, 3.0], [1.0, 2.0, 5.0], [2.0, 4.0, 1.0]])
    with EventWriter(str(tmp_path)) as w:
        w.add_histogram("weights", values, 7, 50.0)
        w.add_histogram_tensor("bias", rows, 8, 51.0)
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    [h] = reader.histograms(run, "weights")
    counts, edges = np.histogram(values, bins=10)
    assert h.step == 7 and h.counts.tolist() == counts.tolist()
    assert h.edges.tolist() == edges.tolist()
    assert h.min == values.min() and h.max == values.max() and h.count == 1000
    [b] = reader.histograms(run, "bias")
    assert b.step == 8 and b.edges.tolist() == [0.0, 1.0, 2.0, 4.0]
    assert b.counts.tolist() == [3.0, 5.0, 1.0] and b.count == 9.0


def test_image_pixels_and_text(tmp_path):
    from PIL import Image

    pixels = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    with EventWriter(str(tmp_path)) as w:
        w.add_image("samples", pixels, 3, 20.0)
        w.add_text("notes", "hello **world**", 4, 21.0)
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    [ref] = reader.images(run, "samples")
    assert (ref.step, ref.meta) == (3, {"height": 4, "width": 5, "channels": 3})
    img = reader.load(ref)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(img.png))), pixels)
    [t] = reader.texts(run, "notes/text_summary")
    assert (t.step, t.text) == (4, "hello **world**")


def test_pr_curve_tensor(tmp_path):
    data = np.array([[5, 3, 1], [4, 2, 0], [1, 3, 5], [0, 2, 4],
                     [0.5, 0.6, 1.0], [1.0, 0.6, 0.2]], np.float32)
    with EventWriter(str(tmp_path)) as w:
        w.add_pr_curve_tensor("pr", data, 2, 30.0)
    reader = LogReader(str(tmp_path))
    [c] = reader.pr_curves(reader.runs()[0], "pr")
    assert c.tp.tolist() == [5, 3, 1] and c.fn.tolist() == [0, 2, 4]
    assert c.y.tolist() == data[4].astype(float).tolist()   # precision
    assert c.x.tolist() == data[5].astype(float).tolist()   # recall
    assert c.thresholds.tolist() == [0.0, 0.5, 1.0]


def test_hparams_sub_run(tmp_path):
    add_hparams(str(tmp_path), {"lr": 0.01, "optim": "adam", "bn": True},
                {"hparam/accuracy": 0.9}, "1700000000.5", 99.0)
    reader = LogReader(str(tmp_path))
    assert reader.runs() == ["1700000000.5"]
    h = reader.hparams("1700000000.5")
    assert h.hparams == {"lr": 0.01, "optim": "adam", "bn": True}
    assert h.metric_tags == ("hparam/accuracy",)
    assert reader.scalars("1700000000.5", "hparam/accuracy").values.tolist() == \
        [float(np.float32(0.9))]
    assert reader.errors == 0


def _wav(samples: np.ndarray, rate: int) -> bytes:
    import wave

    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.astype("<i2").tobytes())
    return out.getvalue()


def test_legacy_audio_and_images_plugin_tensor(tmp_path):
    from tests.sources.tfevents.tbwrite import png
    from visualdl.sources.tfevents import event_pb2 as pb

    wav = _wav(np.arange(800) % 50, 8000)
    pixels = np.full((2, 3, 4), 200, np.uint8)
    with EventWriter(str(tmp_path)) as w:
        w.value(5, 40.0, tag="speech", audio=pb.Summary.Audio(
            sample_rate=8000, num_channels=1, length_frames=800, encoded_audio_string=wav,
            content_type="audio/wav"))
        tensor = pb.TensorProto(dtype=7, string_val=[b"3", b"2", png(pixels)])
        w.value(6, 41.0, tag="img", tensor=tensor, metadata=pb.SummaryMetadata(
            plugin_data=pb.SummaryMetadata.PluginData(plugin_name="images")))
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    [clip] = reader.audio(run, "speech")
    assert clip.meta == {"sample_rate": 8000, "channels": 1, "frames": 800}
    assert reader.load(clip).wav == wav
    [ref] = reader.images(run, "img")
    assert ref.meta == {"height": 2, "width": 3, "channels": 4}
    assert reader.load(ref).png == png(pixels)
    assert reader.errors == 0


def test_hparams_whatever_the_order_of_its_tags(tmp_path):
    """The session's values may come before the experiment's metric list: the later one
    completes the run's hparams."""
    from google.protobuf import struct_pb2
    from visualdl.sources.tfevents import event_pb2 as pb

    start = pb.SessionStartInfo()
    start.hparams["depth"].CopyFrom(struct_pb2.Value(number_value=4))
    exp = pb.Experiment(metric_infos=[pb.MetricInfo(name=pb.MetricName(tag="acc"))])
    with EventWriter(str(tmp_path)) as w:
        for wall, (tag, data) in enumerate([
                ("_hparams_/session_start_info",
                 pb.HParamsPluginData(session_start_info=start)),
                ("_hparams_/experiment", pb.HParamsPluginData(experiment=exp))]):
            w.value(0, 10.0 + wall, tag=tag, metadata=pb.SummaryMetadata(
                plugin_data=pb.SummaryMetadata.PluginData(
                    plugin_name="hparams", content=data.SerializeToString())))
    reader = LogReader(str(tmp_path))
    h = reader.hparams(reader.runs()[0])
    assert h.hparams == {"depth": 4.0} and h.metric_tags == ("acc",)


def test_a_bad_value_is_a_counted_bad_event_not_a_crash(tmp_path):
    from visualdl.sources.tfevents import event_pb2 as pb

    with EventWriter(str(tmp_path)) as w:
        w.add_scalar("ok", 1.0, 0, 1.0)
        w.value(1, 2.0, tag="h", histo=pb.HistogramProto(bucket_limit=[1.0, 2.0], bucket=[1]))
        w.value(2, 3.0, tag="h2", histo=pb.HistogramProto(
            min=0, max=2, num=2, bucket_limit=[1.0, 2.0], bucket=[1, float("nan")]))
        w.add_scalar("ok", 2.0, 3, 4.0)
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    assert reader.scalars(run, "ok").values.tolist() == [1.0, 2.0]
    assert reader.errors == 2
    assert "2 bucket limits for 1 buckets" in reader.error_messages[0]
    assert "histogram" in reader.error_messages[1]


def test_tensor_content_form_and_empty_histograms(tmp_path):
    """TensorFlow 2 writes tensors as raw little-endian bytes; an empty histogram (0 x 3, or
    no buckets) is nothing to draw, not a bad event."""
    from visualdl.sources.tfevents import event_pb2 as pb

    def shape(*dims):
        return pb.TensorShapeProto(dim=[pb.TensorShapeProto.Dim(size=d) for d in dims])

    rows = np.array([[-1.0, 0.0, 2.0], [0.0, 1.0, 4.0]], "<f8")
    with EventWriter(str(tmp_path)) as w:
        w.value(1, 5.0, tag="h", tensor=pb.TensorProto(
            dtype=2, tensor_shape=shape(2, 3), tensor_content=rows.tobytes()),
            metadata=pb.SummaryMetadata(
                plugin_data=pb.SummaryMetadata.PluginData(plugin_name="histograms")))
        w.value(2, 6.0, tag="h", tensor=pb.TensorProto(dtype=2, tensor_shape=shape(0, 3)))
        w.value(3, 7.0, tag="loss", tensor=pb.TensorProto(
            dtype=1, tensor_content=np.array(0.25, "<f4").tobytes()),
            metadata=pb.SummaryMetadata(
                plugin_data=pb.SummaryMetadata.PluginData(plugin_name="scalars")))
        w.value(4, 8.0, tag="legacy", histo=pb.HistogramProto())
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    [h] = reader.histograms(run, "h")
    assert h.step == 1 and h.edges.tolist() == [-1.0, 0.0, 1.0]
    assert h.counts.tolist() == [2.0, 4.0]
    assert reader.scalars(run, "loss").values.tolist() == [0.25]
    assert reader.tags(run) == {"scalar": ["loss"], "histogram": ["h"]}
    assert reader.errors == 0


def test_inspect_names_a_single_event_file(tmp_path):
    from tests.helpers.cli import run_cli

    with EventWriter(str(tmp_path / "run")) as w:
        w.add_scalar("loss", 1.5, 2, 3.0)
    done = run_cli("inspect", w.path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "run run: 1 file(s), 2 records" in done.stdout
    assert "scalar     loss  (1 points, steps 2)" in done.stdout


def test_node_name_stands_in_for_a_missing_tag(tmp_path):
    from visualdl.sources.tfevents import event_pb2 as pb

    with EventWriter(str(tmp_path)) as w:
        w.value(1, 2.0, node_name="old/loss", simple_value=0.5,
                metadata=pb.SummaryMetadata(display_name="x"))
    reader = LogReader(str(tmp_path))
    assert reader.scalars(reader.runs()[0], "old/loss").values.tolist() == [0.5]
