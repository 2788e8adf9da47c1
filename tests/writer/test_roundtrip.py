"""Every kind written by LogWriter comes back from LogReader with exact values."""

import json
import math

import numpy as np
import pytest

from visualdl import LogReader, LogWriter
from visualdl.reader import load_embedding
from visualdl.kinds.audio.write import decode_wav
from visualdl.kinds.image.write import decode_png


@pytest.fixture
def logdir(tmp_path):
    return tmp_path / "logs"


def _read(logdir):
    reader = LogReader(str(logdir))
    assert reader.errors == 0, reader.error_messages
    return reader


def test_scalars_exact_with_nan_and_inf(logdir):
    values = [0.5, float("nan"), float("inf"), -float("inf"), 1e-300, -2.5]
    with LogWriter(logdir=str(logdir / "run")) as w:
        for i, v in enumerate(values):
            w.add_scalar("loss", v, step=i * 10, walltime=1000.0 + i)
        w.add_scalar("acc", np.float32(0.25), np.int64(3))
        w.add_scalar("acc", np.array(0.75), 4)
    r = _read(logdir)
    assert r.runs() == ["run"]
    steps, walls, got = r.scalars("run", "loss")
    assert steps.tolist() == [0, 10, 20, 30, 40, 50]
    assert walls.tolist() == [1000.0 + i for i in range(6)]
    assert got[0] == 0.5 and math.isnan(got[1]) and got[2] == math.inf
    assert got[3] == -math.inf and got[4] == 1e-300 and got[5] == -2.5
    assert r.scalars("run", "acc").values.tolist() == [0.25, 0.75]
    assert steps.dtype == np.int64 and not steps.flags.writeable


def test_add_scalars_stays_in_one_run(logdir):
    with LogWriter(logdir=str(logdir)) as w:
        w.add_scalars("loss", {"train": 1.0, "eval": 2.0}, step=1)
    r = _read(logdir)
    assert len(r.runs()) == 1
    run = r.runs()[0]
    # the chart add_scalars draws is recorded too (issue 16: the grouping is data)
    assert r.tags(run) == {"scalar": ["loss/eval", "loss/train"],
                           "custom_scalars": ["custom_scalars"]}
    assert r.scalars(run, "loss/eval").values.tolist() == [2.0]


@pytest.mark.parametrize("fmt,shape", [("HWC", (5, 7, 3)), ("CHW", (3, 5, 7)), ("HW", (5, 7)),
                                       ("HWC", (5, 7, 4)), ("HWC", (5, 7, 1))])
def test_images_pixel_exact(logdir, fmt, shape):
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, size=shape, dtype=np.uint8)
    before = img.copy()
    with LogWriter(logdir=str(logdir)) as w:
        w.add_image("img", img, step=3, dataformats=fmt)
        img[:] = 0  # the writer kept its own copy
    r = _read(logdir)
    run = r.runs()[0]
    (ref,) = r.images(run, "img")
    assert (ref.step, ref.meta["height"], ref.meta["width"]) == (3, 5, 7)
    pixels = decode_png(r.load(ref).png)
    if fmt == "CHW":
        expect = before.transpose(1, 2, 0)
    elif fmt == "HW":
        expect = before[:, :, None]
    else:
        expect = before
    assert np.array_equal(pixels, expect)


def test_float_image_and_batch_grid(logdir):
    batch = np.zeros((4, 3, 2, 2), np.float32)  # NCHW, 4 images of 2x2
    for i in range(4):
        batch[i] = i / 3
    with LogWriter(logdir=str(logdir)) as w:
        w.add_image("grid", batch, step=0, dataformats="NCHW")
        w.add_image("f", np.full((2, 2, 3), 0.5), step=0)
    r = _read(logdir)
    run = r.runs()[0]
    grid = decode_png(r.load(r.images(run, "grid")[0]).png)
    assert grid.shape == (2 + 2 + 2, 2 + 2 + 2, 3)  # 2x2 grid with a 2-pixel gap
    assert grid[0, 0, 0] == 0 and grid[0, 4, 0] == 85 and grid[4, 0, 0] == 170
    assert grid[4, 4, 0] == 255 and grid[2, 2, 0] == 0
    assert decode_png(r.load(r.images(run, "f")[0]).png)[0, 0].tolist() == [128, 128, 128]


def test_audio_sample_exact(logdir):
    mono = (np.sin(np.linspace(0, 20, 800)) * 0.5).astype(np.float32)
    stereo = np.random.default_rng(1).integers(-32768, 32767, (300, 2), dtype=np.int16)
    with LogWriter(logdir=str(logdir)) as w:
        w.add_audio("mono", mono, step=1, sample_rate=16000)
        w.add_audio("stereo", stereo, step=2, sample_rate=8000)
    r = _read(logdir)
    run = r.runs()[0]
    ref = r.audio(run, "mono")[0]
    assert ref.meta == {"sample_rate": 16000, "channels": 1, "frames": 800}
    samples, rate = decode_wav(r.load(ref).wav)
    assert rate == 16000
    assert np.array_equal(samples[:, 0], np.rint(mono * 32767).astype(np.int16))
    samples, rate = decode_wav(r.load(r.audio(run, "stereo")[0]).wav)
    assert rate == 8000 and np.array_equal(samples, stereo)


def test_text(logdir):
    with LogWriter(logdir=str(logdir)) as w:
        w.add_text("notes", "# Title\n*emph* <b>x</b> ünïcode", step=5)
    r = _read(logdir)
    (event,) = r.texts(r.runs()[0], "notes")
    assert (event.step, event.text) == (5, "# Title\n*emph* <b>x</b> ünïcode")


def test_histogram_bucket_exact(logdir):
    values = np.random.default_rng(2).normal(size=1000)
    with LogWriter(logdir=str(logdir)) as w:
        w.add_histogram("w", values, step=7, buckets=12)
        w.add_histogram("nan", np.array([1.0, np.nan, np.inf, 2.0]), step=1, buckets=2)
    r = _read(logdir)
    run = r.runs()[0]
    (h,) = r.histograms(run, "w")
    counts, edges = np.histogram(values, bins=12, range=(values.min(), values.max()))
    assert h.step == 7
    assert np.array_equal(h.counts, counts) and np.allclose(h.edges, edges, rtol=0, atol=0)
    assert (h.min, h.max, h.count) == (values.min(), values.max(), 1000)
    assert h.sum == pytest.approx(values.sum()) and h.sum_squares == pytest.approx((values**2).sum())
    (h,) = r.histograms(run, "nan")
    assert h.counts.tolist() == [1, 1] and h.nonfinite == 2 and h.count == 2


def test_pr_and_roc_curves(logdir):
    labels = np.array([1, 0, 1, 1, 0, 0])
    preds = np.array([0.9, 0.8, 0.6, 0.3, 0.2, 0.0])
    with LogWriter(logdir=str(logdir)) as w:
        w.add_pr_curve("pr", labels, preds, step=1, num_thresholds=3)
        w.add_roc_curve("roc", labels.astype(bool), preds, step=1, num_thresholds=3)
        w.add_pr_curve("wpr", labels, preds, step=2, num_thresholds=3,
                       weights=[2, 1, 1, 1, 1, 1])
    r = _read(logdir)
    run = r.runs()[0]
    (pr,) = r.pr_curves(run, "pr")
    # thresholds 0, .5, 1: positives predicted at >= t
    assert pr.thresholds.tolist() == [0.0, 0.5, 1.0]
    assert pr.tp.tolist() == [3, 2, 0] and pr.fp.tolist() == [3, 1, 0]
    assert pr.fn.tolist() == [0, 1, 3] and pr.tn.tolist() == [0, 2, 3]
    assert pr.y.tolist() == [0.5, 2 / 3, 1.0]  # precision; 1 where nothing is predicted
    assert pr.x.tolist() == [1.0, 2 / 3, 0.0]  # recall
    (roc,) = r.roc_curves(run, "roc")
    assert roc.y.tolist() == [1.0, 2 / 3, 0.0] and roc.x.tolist() == [1.0, 1 / 3, 0.0]
    (wpr,) = r.pr_curves(run, "wpr")
    assert wpr.tp.tolist() == [4, 3, 0]


def test_embeddings_hparams_figure_graph(logdir, tmp_path):
    mat = np.arange(12, dtype=np.float64).reshape(4, 3) / 7
    plotly_fig = {"data": [{"type": "scatter", "x": [1, 2], "y": [3, 4]}], "layout": {}}
    onnx_path = tmp_path / "m.onnx"
    onnx_path.write_bytes(b"\x08\x07fake-onnx")
    with LogWriter(logdir=str(logdir)) as w:
        w.add_embeddings("emb", mat, metadata=[["a", 1], ["b", 2], ["c", 3], ["d", 4]],
                         metadata_header=["name", "n"], step=2)
        w.add_hparams({"lr": 0.01, "opt": "adam", "bn": False, "layers": 3, "seed": -7,
                       "huge": 2**70, "np_int": np.int32(5)}, ["loss", "acc"])
        w.add_figure("fig", plotly_fig, step=4)
        w.add_graph(str(onnx_path))
    r = _read(logdir)
    run = r.runs()[0]
    matrix, header, rows = load_embedding(r.load(r.embeddings(run, "emb")[0]))
    assert np.array_equal(matrix, mat.astype(np.float32))
    assert header == ["name", "n"] and rows[2] == ["c", "3"]
    hp = r.hparams(run)
    assert hp.hparams == {"lr": 0.01, "opt": "adam", "bn": False, "layers": 3, "seed": -7,
                          "huge": float(2**70), "np_int": 5}
    types = {k: type(v) for k, v in hp.hparams.items()}
    assert types == {"lr": float, "opt": str, "bn": bool, "layers": int, "seed": int,
                     "huge": float, "np_int": int}
    assert hp.metric_tags == ("loss", "acc")
    fig = r.load(r.figures(run, "fig")[0])
    assert json.loads(fig.plotly_json) == plotly_fig
    assert r.load(r.graphs(run, "model")[0]).onnx == b"\x08\x07fake-onnx"
    assert set(r.tags(run)) == {"embedding", "hparams", "figure", "graph"}


def test_plotly_figure_object(logdir):
    go = pytest.importorskip("plotly.graph_objects")
    fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))
    with LogWriter(logdir=str(logdir)) as w:
        w.add_figure("plotly", fig, step=0)
        fig.data[0].y = [9, 9]  # later changes do not leak into the log
    r = _read(logdir)
    got = json.loads(r.load(r.figures(r.runs()[0], "plotly")[0]).plotly_json)
    assert got["data"][0]["y"] in ([1, 2], {"dtype": "i1", "bdata": "AQI="})


def test_matplotlib_figure_is_stored_as_png(logdir):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1), dpi=50)
    fig.add_subplot().plot([0, 1], [0, 1])
    with LogWriter(logdir=str(logdir)) as w:
        w.add_figure("mpl", fig, step=3)
    r = _read(logdir)
    (ref,) = r.figures(r.runs()[0], "mpl")
    assert ref.step == 3 and ref.meta == {"format": "png"}
    pixels = decode_png(r.load(ref).png)
    assert pixels.shape[:2] == (50, 100)  # 2 x 1 inches at 50 dpi


def test_tensor_like_values_without_importing_frameworks(logdir):
    class FakeTensor:  # what torch / framework tensors look like to the writer
        def __init__(self, a):
            self.a = np.asarray(a)

        def detach(self):
            return self

        def cpu(self):
            return self

        def numpy(self):
            return self.a

        def item(self):
            return self.a.item()

    with LogWriter(logdir=str(logdir)) as w:
        w.add_scalar("s", FakeTensor(1.5), 0)
        w.add_histogram("h", FakeTensor([1.0, 2.0, 3.0]), 0, buckets=3)
        w.add_image("i", FakeTensor(np.zeros((2, 2), np.uint8)), 0, dataformats="HW")
    r = _read(logdir)
    run = r.runs()[0]
    assert r.scalars(run, "s").values.tolist() == [1.5]
    assert r.histograms(run, "h")[0].counts.tolist() == [1, 1, 1]
    assert len(r.images(run, "i")) == 1


def test_every_step_kept_for_blobs(logdir):
    with LogWriter(logdir=str(logdir), max_queue=7) as w:
        for step in range(250):
            w.add_image("img", np.full((2, 2), step % 256, np.uint8), step, dataformats="HW")
            w.add_text("t", f"step {step}", step)
    r = _read(logdir)
    run = r.runs()[0]
    refs = r.images(run, "img")
    assert [ref.step for ref in refs] == list(range(250))
    assert decode_png(r.load(refs[199]).png)[0, 0, 0] == 199
    assert [t.text for t in r.texts(run, "t")][-1] == "step 249"
