"""Logs written by the real writers users have: ``torch.utils.tensorboard.SummaryWriter``
and ``tensorboardX.SummaryWriter``, every kind read back through ``LogReader`` with the
values that went in, and served by a real server (HTTP bodies).

Each writer is skipped cleanly where it is not installed (``pip install visualdl[test]``
brings both; torch comes from the machine's wheel)."""

from __future__ import annotations

import io
import os
import wave

import numpy as np
import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl.reader import LogReader

STEPS = 40
RNG = np.random.default_rng(12)
LOSS = RNG.standard_normal(STEPS).astype(np.float32)
IMAGE_CHW = RNG.integers(0, 256, (3, 6, 7), dtype=np.uint8)
AUDIO = np.sin(np.linspace(0, 40, 800)).astype(np.float32) * 0.5
HIST = RNG.standard_normal(1000)
LABELS = RNG.integers(0, 2, 200).astype(bool)
PREDICTIONS = RNG.random(200).astype(np.float32)
HPARAMS = {"lr": 0.01, "batch_size": 32, "optimizer": "adam", "nesterov": True}
METRICS = {"hparam/accuracy": 0.75}


def _writer_class(name: str):
    if name == "torch":  # (in tests marked ``torch``)
        pytest.importorskip("tensorboard")  # torch.utils.tensorboard needs it
        from torch.utils.tensorboard import SummaryWriter
    else:
        pytest.importorskip("tensorboardX")
        pytest.importorskip("soundfile")  # tensorboardX's add_audio needs it
        from tensorboardX import SummaryWriter
    return SummaryWriter


def _net(torch):
    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = torch.nn.Linear(4, 8)
            self.fc2 = torch.nn.Linear(8, 2)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    return Net(), torch.zeros(1, 4)


def _write_all(writer_class, logdir: str, torch=None) -> None:
    """Every kind; the model graph too when given torch (``add_graph`` takes a module)."""
    w = writer_class(logdir)
    for step in range(STEPS):
        w.add_scalar("train/loss", float(LOSS[step]), step)
        w.add_scalars("acc", {"train": step / 100, "val": step / 200}, step)
    w.add_image("sample", IMAGE_CHW, 3)  # CHW, the default dataformats
    w.add_audio("sound", AUDIO, 4, sample_rate=8000)
    w.add_histogram("weights", HIST, 5, bins=10)
    w.add_text("note", "hello **world**", 6)
    w.add_pr_curve("pr", LABELS, PREDICTIONS, 7, num_thresholds=11)
    if torch is not None:
        model, example = _net(torch)
        w.add_graph(model, example)
    if "tensorboardX" in writer_class.__module__:
        w.add_hparams(HPARAMS, METRICS, name="trial")  # tensorboardX's name for it
    else:
        w.add_hparams(HPARAMS, METRICS, run_name="trial")
    w.close()


@pytest.fixture(scope="module", params=[pytest.param("torch", marks=pytest.mark.torch),
                                        "tensorboardX",
                                        pytest.param("tensorboardX+graph", marks=pytest.mark.torch)])
def written(request, tmp_path_factory):
    """(writer, logdir, whether a model graph was logged): torch's writer and tensorboardX's
    with a graph of a torch module (tests marked ``torch``), tensorboardX's without one."""
    name, _, graph = request.param.partition("+")
    writer_class = _writer_class(name)
    logdir = str(tmp_path_factory.mktemp(name.lower()))
    torch = request.getfixturevalue("torch") if name == "torch" or graph else None
    _write_all(writer_class, logdir, torch)
    return name, logdir, torch is not None


def _sub(writer: str, key: str) -> str:
    """The run of one add_scalars key: torch writes <logdir>/acc_<key>, tensorboardX
    <logdir>/acc/<key>."""
    return f"acc_{key}" if writer == "torch" else f"acc/{key}"


def _expected_pr(num: int = 11) -> dict:
    """TensorBoard's pr_curve: a prediction counts at threshold i when its bucket
    floor(p * (num - 1)) >= i."""
    bucket = np.floor(PREDICTIONS.astype(np.float64) * (num - 1)).astype(int)
    tp = np.array([np.sum(LABELS & (bucket >= i)) for i in range(num)], float)
    fp = np.array([np.sum(~LABELS & (bucket >= i)) for i in range(num)], float)
    return {"tp": tp, "fp": fp, "tn": np.sum(~LABELS) - fp, "fn": np.sum(LABELS) - tp}


def test_every_kind_reads_back(written):
    name, logdir, graph = written
    reader = LogReader(logdir)
    assert reader.errors == 0, reader.error_messages
    runs = reader.runs()
    main = os.path.basename(logdir)
    assert main in runs
    # add_scalars: one sub-directory run per key, TensorBoard's way
    assert _sub(name, "train") in runs and _sub(name, "val") in runs
    tags = reader.tags(main)

    loss = reader.scalars(main, "train/loss")
    assert loss.steps.tolist() == list(range(STEPS))
    assert loss.values.tolist() == LOSS.astype(np.float64).tolist()  # float32, exact
    acc = reader.scalars(_sub(name, "train"), "acc")
    assert acc.values.tolist() == [float(np.float32(s / 100)) for s in range(STEPS)]

    (img_ref,) = reader.images(main, "sample")
    assert img_ref.step == 3
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(reader.load(img_ref).png)))
    assert np.array_equal(pixels, IMAGE_CHW.transpose(1, 2, 0))

    (audio_ref,) = reader.audio(main, "sound")
    clip = reader.load(audio_ref)
    assert clip.sample_rate == 8000
    with wave.open(io.BytesIO(clip.wav)) as wav:
        assert wav.getframerate() == 8000
        samples = np.frombuffer(wav.readframes(wav.getnframes()), "<i2") / 32767.0
    assert len(samples) == len(AUDIO)
    assert np.abs(samples - AUDIO).max() <= 1.5 / 32767

    (hist,) = reader.histograms(main, "weights")
    assert hist.step == 5
    assert hist.counts.sum() == len(HIST)
    assert hist.min == pytest.approx(HIST.min()) and hist.max == pytest.approx(HIST.max())
    want_counts, want_edges = np.histogram(HIST, bins=10)
    assert hist.counts.tolist() == want_counts.astype(float).tolist()
    assert np.allclose(hist.edges, want_edges)

    text_tag = next(t for t in tags["text"] if t.startswith("note"))
    (text,) = reader.texts(main, text_tag)
    assert text.text == "hello **world**" and text.step == 6

    (pr,) = reader.pr_curves(main, "pr")
    want = _expected_pr()
    for key in ("tp", "fp", "tn", "fn"):
        assert getattr(pr, key).tolist() == want[key].tolist(), key

    # add_hparams: its own run (torch: <logdir>/trial) with the values and the metric
    hp_run = next(r for r in runs if r.endswith("trial"))
    hp = reader.hparams(hp_run)
    assert hp is not None
    assert hp.hparams == HPARAMS
    assert "hparam/accuracy" in hp.metric_tags
    metric = reader.scalars(hp_run, "hparam/accuracy")
    assert metric.values.tolist() == [0.75]

    if graph:
        (graph_ref,) = reader.graphs(main, tags["graph"][0])
        import onnx

        model = onnx.load_model_from_string(reader.load(graph_ref).onnx)
        names = [n.name for n in model.graph.node]
        assert any(n.startswith("Net/Linear[fc1]/") for n in names), names
        assert any(n.startswith("Net/Linear[fc2]/") for n in names), names
        ops = {n.op_type for n in model.graph.node}
        assert "aten::linear" in ops or "aten::addmm" in ops, ops


def test_served_over_http(written):
    name, logdir, graph = written
    main = os.path.basename(logdir)
    with serving([logdir]) as handle:
        client = Client(handle.url)
        try:
            body = client.get("/api/scalars", params={"run": main, "tag": "train/loss"}).json()
            assert body["steps"] == list(range(STEPS))
            assert body["values"] == LOSS.astype(np.float64).tolist()
            runs = client.get("/api/tags", params={"kind": "scalar"}).json()["runs"]
            assert runs[_sub(name, "val")] == ["acc"]

            response = client.get("/api/images/data",
                                  params={"run": main, "tag": "sample", "step": 3})
            assert response.status_code == 200
            from PIL import Image

            pixels = np.asarray(Image.open(io.BytesIO(response.content)))
            assert np.array_equal(pixels, IMAGE_CHW.transpose(1, 2, 0))

            response = client.get("/api/audio/data",
                                  params={"run": main, "tag": "sound", "step": 4})
            assert response.status_code == 200 and response.content[:4] == b"RIFF"

            hist = client.get("/api/histograms", params={"run": main, "tag": "weights"}).json()
            assert sum(hist["entries"][0]["counts"]) == len(HIST)

            text_tags = client.get("/api/tags", params={"kind": "text"}).json()["runs"][main]
            texts = client.get("/api/text", params={"run": main, "tag": text_tags[0]}).json()
            assert texts["entries"][0]["text"] == "hello **world**"
            assert "<strong>world</strong>" in texts["entries"][0]["html"]

            pr = client.get("/api/pr_curves", params={"run": main, "tag": "pr"}).json()
            assert pr["entries"][0]["tp"] == _expected_pr()["tp"].tolist()

            hp = client.get("/api/hparams").json()
            (row,) = [r for r in hp["runs"] if r["run"].endswith("trial")]
            assert row["hparams"] == HPARAMS
            assert row["metrics"]["hparam/accuracy"] == 0.75

            if graph:
                models = client.get("/api/graph/models").json()
                models = models["models"] if isinstance(models, dict) else models
                (logged,) = [m for m in models if m["source"] == "log"]
                assert logged["run"] == main
                groups = client.get("/api/graph/hierarchy",
                                    params={"model": logged["id"]}).text
                assert "Linear[fc1]" in groups and "Linear[fc2]" in groups
                view = client.get("/api/graph/view", params={"model": logged["id"]}).json()
                titles = " ".join(str(n.get("title", "")) for n in view["nodes"])
                assert "Linear[fc1]" in titles
            info = client.get("/api/info").json()
            assert info["errors"] == 0
        finally:
            client.close()


@pytest.mark.torch
def test_tensor_scalars_of_torch_new_style(tmp_path):
    """torch's ``new_style=True`` writes scalars as tensors of the scalars plugin
    (metadata on the first value only): read exactly, through the bulk path too."""
    SummaryWriter = _writer_class("torch")
    w = SummaryWriter(str(tmp_path))
    for step in range(500):
        w.add_scalar("new", float(LOSS[step % STEPS]), step, new_style=True)
        w.add_scalar("old", float(step), step)
    w.close()
    reader = LogReader(str(tmp_path))
    run = reader.runs()[0]
    assert reader.errors == 0
    new = reader.scalars(run, "new")
    assert new.steps.tolist() == list(range(500))
    assert new.values.tolist() == [float(LOSS[s % STEPS]) for s in range(500)]
    assert reader.scalars(run, "old").values.tolist() == [float(s) for s in range(500)]
