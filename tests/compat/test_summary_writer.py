"""``visualdl.SummaryWriter``: torch's ``SummaryWriter`` interface, our format.

Every method writes through ``LogWriter`` and comes back from ``LogReader`` with the values
that went in, with TensorBoard's semantics (step 0 for ``global_step=None``, one run per
``add_scalars`` key, CHW images, ...). When torch is installed, its signatures are the
reference; when its TensorBoard dependency is installed too, the runs and tags torch's own
writer produces are compared with ours.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import socket
import subprocess
import sys
import warnings

import numpy as np
import pytest

from visualdl import LogReader, SummaryWriter
from visualdl.kinds.audio.write import decode_wav
from visualdl.kinds.image.write import decode_png
from visualdl.reader import load_embedding

PUBLIC = sorted(
    name for name, value in vars(SummaryWriter).items()
    if callable(value) and (not name.startswith("_") or name in ("__init__", "__enter__",
                                                                  "__exit__"))
)


def _read(logdir) -> LogReader:
    reader = LogReader(str(logdir))
    assert reader.errors == 0, reader.error_messages
    return reader


# -- the interface ---------------------------------------------------------------------
def _torch_signatures(torch) -> dict[str, str]:
    """torch's ``SummaryWriter`` signatures: from the class when torch's tensorboard
    package imports, else from its source (the module imports ``tensorboard``)."""
    try:
        from torch.utils.tensorboard import SummaryWriter as TorchWriter
    except ImportError:
        path = os.path.join(os.path.dirname(torch.__file__), "utils", "tensorboard", "writer.py")
        if not os.path.exists(path):
            pytest.skip("torch has no utils/tensorboard/writer.py")
        tree = ast.parse(open(path, encoding="utf-8").read())
        (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SummaryWriter"]
        return {f.name: _ast_params(f.args) for f in cls.body if isinstance(f, ast.FunctionDef)}
    return {name: _sig_params(inspect.signature(getattr(TorchWriter, name)))
            for name in dir(TorchWriter) if inspect.isfunction(getattr(TorchWriter, name))}


def _ast_params(args: ast.arguments) -> str:
    plain = args.posonlyargs + args.args
    defaults = [None] * (len(plain) - len(args.defaults)) + list(args.defaults)
    return ", ".join(a.arg if d is None else f"{a.arg}={ast.literal_eval(d)!r}"
                     for a, d in zip(plain, defaults))


def _sig_params(sig: inspect.Signature) -> str:
    """Torch's parameters only: ours may add keyword-only ones (``system_metrics``)."""
    return ", ".join(p.name if p.default is p.empty else f"{p.name}={p.default!r}"
                     for p in sig.parameters.values() if p.kind is not p.KEYWORD_ONLY)


# Methods of ours that torch's writer has not.
EXTENSIONS = {"add_config", "add_table", "add_resize", "add_checkpoint"}  # ours alone


def test_every_public_method_has_torchs_signature(torch):
    torch_sigs = _torch_signatures(torch)
    ours = {name: _sig_params(inspect.signature(getattr(SummaryWriter, name))) for name in PUBLIC}
    checked = 0
    for name, params in ours.items():
        if name in torch_sigs:
            assert params == torch_sigs[name], name
            checked += 1
    assert checked == len(ours) - len(EXTENSIONS), sorted(set(ours) - set(torch_sigs))
    # and the other way: every public method of torch's is ours too
    theirs = {name for name in torch_sigs
              if not name.startswith("_") or name in ("__init__", "__enter__", "__exit__")}
    assert sorted(theirs - set(ours)) == []
    for name in ("add_scalar", "add_scalars", "add_histogram", "add_image", "add_images",
                 "add_figure", "add_text", "add_audio", "add_pr_curve", "add_embedding",
                 "add_hparams", "add_graph", "flush", "close", "__enter__", "__exit__"):
        assert name in ours


def test_lazy_export_imports_no_framework(tmp_path):
    script = (
        "import sys, numpy as np\n"
        "import visualdl\n"
        "assert 'visualdl.compat.summary_writer' not in sys.modules\n"
        "from visualdl import SummaryWriter\n"
        "assert 'SummaryWriter' in visualdl.__all__ and 'SummaryWriter' in dir(visualdl)\n"
        "with SummaryWriter(sys.argv[1]) as w:\n"
        "    w.add_scalar('s', 1.0); w.add_image('i', np.zeros((3, 2, 2)))\n"
        "    w.add_histogram('h', np.arange(5.0)); w.add_scalars('m', {'a': 1})\n"
        "print(sorted(m for m in ('torch', 'matplotlib', 'visualdl.framework',\n"
        "                         'visualdl.reader.log_reader') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "logs")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_default_log_dir_is_torchs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1") as w:
        w.add_scalar("s", 1.0)
    (name,) = os.listdir(tmp_path / "runs")
    assert w.get_logdir() == os.path.join("runs", name)
    assert re.fullmatch(r"[A-Z][a-z]{2}\d\d_\d\d-\d\d-\d\d_" + re.escape(socket.gethostname())
                        + r"_lr0\.1", name), name


# -- every kind, read back --------------------------------------------------------------
def test_scalars_global_step_none_is_zero(tmp_path):
    with SummaryWriter(str(tmp_path / "exp")) as w:
        w.add_scalar("loss", 0.5)
        w.add_scalar("loss", 0.25, global_step=3, walltime=1234.5)
        w.add_scalar("loss", np.float32(0.125), np.int64(4))
        w.add_scalar("floatstep", 1.0, 2.7)  # torch takes int() of the step
        w.add_scalar("floatstep", 2.0, np.float32(5.0))
        w.add_scalars("m", {"a": 1.0}, 3.9)
        with pytest.raises(TypeError, match="step"):
            w.add_scalar("bad", 1.0, float("nan"))
        with pytest.raises(TypeError, match="step"):
            w.add_scalar("bad", 1.0, "3")
    r = _read(tmp_path / "exp")
    assert r.scalars("exp", "floatstep").steps.tolist() == [2, 5]
    assert r.scalars("m_a", "m").steps.tolist() == [3]
    steps, walls, values = r.scalars("exp", "loss")
    assert steps.tolist() == [0, 3, 4] and values.tolist() == [0.5, 0.25, 0.125]
    assert walls[1] == 1234.5


def test_add_scalars_writes_one_run_per_key(tmp_path):
    with SummaryWriter(str(tmp_path / "exp")) as w:
        for step in range(3):
            w.add_scalars("loss/all", {"train": 1.0 + step, "val": 2.0 * step}, step)
        w.add_scalar("lr", 0.1, 0)
    r = _read(tmp_path / "exp")
    assert sorted(r.runs()) == ["exp", "loss_all_train", "loss_all_val"]
    assert r.tags("loss_all_train") == {"scalar": ["loss/all"]}
    assert r.tags("exp") == {"scalar": ["lr"]}
    assert r.scalars("loss_all_train", "loss/all").values.tolist() == [1.0, 2.0, 3.0]
    assert r.scalars("loss_all_val", "loss/all").values.tolist() == [0.0, 2.0, 4.0]
    assert r.scalars("loss_all_val", "loss/all").steps.tolist() == [0, 1, 2]
    assert os.path.isdir(tmp_path / "exp" / "loss_all_train")


def test_images_chw_default_and_nchw_grid(tmp_path):
    rng = np.random.default_rng(0)
    chw = rng.integers(0, 256, (3, 4, 5), dtype=np.uint8)
    floats = np.array([[[0.0, 0.5], [0.999, 1.7]]] * 3, np.float32)  # CHW, out of range too
    batch = np.zeros((2, 3, 2, 2), np.uint8)
    batch[1] = 200
    with SummaryWriter(str(tmp_path / "exp")) as w:
        w.add_image("chw", chw, 1)
        w.add_image("float", floats)
        w.add_image("hwc", chw.transpose(1, 2, 0), 2, dataformats="HWC")
        w.add_images("batch", batch, 3)
    r = _read(tmp_path / "exp")
    (ref,) = r.images("exp", "chw")
    assert ref.step == 1
    assert np.array_equal(decode_png(r.load(ref).png), chw.transpose(1, 2, 0))
    assert np.array_equal(decode_png(r.load(r.images("exp", "hwc")[0]).png),
                          chw.transpose(1, 2, 0))
    # TensorBoard's conversion: times 255, clipped, truncated (0.999 -> 254, 0.5 -> 127)
    pixels = decode_png(r.load(r.images("exp", "float")[0]).png)
    assert r.images("exp", "float")[0].step == 0
    assert pixels[:, :, 0].tolist() == [[0, 127], [254, 255]]
    grid = decode_png(r.load(r.images("exp", "batch")[0]).png)
    assert grid.shape == (2, 2 + 2 + 2, 3)  # one row of two, our 2-pixel gap between
    assert (grid[:, :2] == 0).all() and (grid[:, 4:] == 200).all()


def test_histogram_bins(tmp_path):
    values = np.random.default_rng(1).normal(size=500)
    with SummaryWriter(str(tmp_path / "exp")) as w:
        w.add_histogram("tf", values, 1)
        w.add_histogram("int", values, 2, bins=7)
        w.add_histogram("auto", values, 3, bins="auto")
        w.add_histogram("capped", values, 4, bins=50, max_bins=10)
    r = _read(tmp_path / "exp")
    (h,) = r.histograms("exp", "int")
    counts, _ = np.histogram(values, bins=7, range=(values.min(), values.max()))
    assert h.step == 2 and h.counts.tolist() == counts.tolist()
    assert len(r.histograms("exp", "tf")[0].counts) == 30
    assert len(r.histograms("exp", "auto")[0].counts) == len(np.histogram_bin_edges(values, "auto")) - 1
    assert len(r.histograms("exp", "capped")[0].counts) == 10
    assert sum(r.histograms("exp", "capped")[0].counts) == 500


def test_text_audio_pr_curve_embedding(tmp_path):
    wave = np.sin(np.linspace(0, 20, 1000)).astype(np.float32) * 0.5
    mat = np.arange(12, dtype=np.float32).reshape(4, 3)
    with SummaryWriter(str(tmp_path / "exp")) as w:
        w.add_text("notes", "**bold** ünï", 5)
        w.add_audio("mono", wave[None, :], 6)  # (1, L), torch's shape
        with pytest.warns(UserWarning, match="clipped"):
            w.add_audio("loud", np.array([2.0, -3.0, 0.5]), 7, sample_rate=8000)
        w.add_pr_curve("pr", np.array([1, 0, 1, 1, 0, 0]),
                       np.array([0.9, 0.8, 0.6, 0.3, 0.2, 0.0]), 8, num_thresholds=3)
        w.add_embedding(mat, metadata=["a", "b", "c", "d"], global_step=9)
        w.add_embedding(mat, metadata=[["a", 1], ["b", 2], ["c", 3], ["d", 4]],
                        tag="cols", metadata_header=["name", "n"])
    r = _read(tmp_path / "exp")
    (text,) = r.texts("exp", "notes")
    assert (text.step, text.text) == (5, "**bold** ünï")
    ref = r.audio("exp", "mono")[0]
    samples, rate = decode_wav(r.load(ref).wav)
    assert (ref.step, rate) == (6, 44100)
    assert np.array_equal(samples[:, 0], (wave * 32767).astype(np.int16))  # truncated, as TB
    samples, rate = decode_wav(r.load(r.audio("exp", "loud")[0]).wav)
    assert rate == 8000 and samples[:, 0].tolist() == [32767, -32767, 16383]
    (pr,) = r.pr_curves("exp", "pr")
    assert pr.step == 8 and pr.tp.tolist() == [3, 2, 0] and pr.fp.tolist() == [3, 1, 0]
    (ref,) = r.embeddings("exp", "default")
    matrix, header, rows = load_embedding(r.load(ref))
    assert ref.step == 9 and np.array_equal(matrix, mat)
    assert [row[0] for row in rows] == ["a", "b", "c", "d"]
    matrix, header, rows = load_embedding(r.load(r.embeddings("exp", "cols")[0]))
    assert header == ["name", "n"] and rows[3] == ["d", "4"]


def test_hparams_sub_run_with_metrics(tmp_path):
    with SummaryWriter(str(tmp_path / "exp")) as w:
        w.add_hparams({"lr": 0.01, "opt": "adam", "bn": True}, {"hp/acc": 0.9, "hp/loss": 0.3},
                      run_name="trial1")
        w.add_hparams({"lr": 0.1}, {"hp/acc": 0.5})  # the run is named by the time
    r = _read(tmp_path / "exp")
    hp = r.hparams("trial1")
    assert hp.hparams == {"lr": 0.01, "opt": "adam", "bn": True}
    assert hp.metric_tags == ("hp/acc", "hp/loss")
    assert r.scalars("trial1", "hp/acc").values.tolist() == [0.9]
    assert r.scalars("trial1", "hp/loss").steps.tolist() == [0]
    (other,) = set(r.runs()) - {"exp", "trial1"}
    assert float(other) > 0 and r.hparams(other).hparams == {"lr": 0.1}
    with pytest.raises(TypeError, match="dictionary"):
        SummaryWriter(str(tmp_path / "x")).add_hparams([("lr", 1)], {})


def test_matplotlib_figure_and_figure_list(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(2, 1), dpi=50)
    fig.add_subplot().plot([0, 1], [0, 1])
    figs = [plt.figure(figsize=(1, 1), dpi=20) for _ in range(2)]
    plotly_fig = {"data": [{"type": "scatter", "x": [1, 2], "y": [3, 4]}], "layout": {}}
    with SummaryWriter(str(tmp_path / "exp")) as w:
        w.add_figure("one", fig, 3)
        w.add_figure("many", figs, 4)
        w.add_figure("plotly", plotly_fig)  # close=True leaves a non-matplotlib figure be
    assert not plt.fignum_exists(fig.number)  # close=True closed them
    assert not any(plt.fignum_exists(f.number) for f in figs)
    r = _read(tmp_path / "exp")
    (ref,) = r.figures("exp", "one")
    assert ref.step == 3 and decode_png(r.load(ref).png).shape[:2] == (50, 100)
    (ref,) = r.images("exp", "many")
    grid = decode_png(r.load(ref).png)
    assert ref.step == 4 and grid.shape == (20, 20 + 2 + 20, 3)
    assert (grid[:, :20] == 255).all()  # empty white figures
    assert json.loads(r.load(r.figures("exp", "plotly")[0]).plotly_json) == plotly_fig


def test_torch_tensors_that_require_grad(tmp_path, torch):
    x = torch.tensor([0.5, 1.5, 2.5], requires_grad=True)
    with SummaryWriter(str(tmp_path / "exp")) as w:
        w.add_scalar("s", (x * 2).sum(), torch.tensor(2))
        w.add_scalars("m", {"a": x[0] * 1}, 1)
        w.add_histogram("h", x * 1, 1, bins=3)
        w.add_image("i", torch.ones(3, 2, 2, requires_grad=True) * 1)
        w.add_embedding(torch.eye(3, requires_grad=True) * 1)
        w.add_hparams({"lr": torch.tensor(0.5)}, {"acc": torch.tensor(1.0)}, run_name="hp")
    r = _read(tmp_path / "exp")
    assert r.scalars("exp", "s").values.tolist() == [9.0]
    assert r.scalars("exp", "s").steps.tolist() == [2]
    assert r.scalars("m_a", "m").values.tolist() == [0.5]
    assert r.histograms("exp", "h")[0].counts.tolist() == [1, 1, 1]
    assert decode_png(r.load(r.images("exp", "i")[0]).png).min() == 255
    assert r.hparams("hp").hparams == {"lr": 0.5}


def test_graph_from_torch_module(tmp_path, torch):
    onnx = pytest.importorskip("onnx")
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
    with SummaryWriter(str(tmp_path / "exp")) as w:
        w.add_graph(model, torch.randn(2, 4))
        with pytest.raises(ValueError, match="input_to_model"):
            w.add_graph(model)
    r = _read(tmp_path / "exp")
    (ref,) = r.graphs("exp", "model")
    proto = onnx.load_from_string(r.load(ref).onnx)
    ops = [node.op_type for node in proto.graph.node]
    assert "Relu" in ops and ("Gemm" in ops or "MatMul" in ops)


def test_missing_export_package_is_named(tmp_path, monkeypatch, torch):

    def export(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'onnxscript'", name="onnxscript")

    monkeypatch.setattr(torch.onnx, "export", export)
    with SummaryWriter(str(tmp_path / "exp")) as w:
        with pytest.raises(ImportError, match="pip install onnxscript"):
            w.add_graph(torch.nn.Linear(2, 2), torch.zeros(1, 2))


def test_purge_step_warns_and_flush_writes(tmp_path):
    with pytest.warns(UserWarning, match="purge_step"):
        w = SummaryWriter(str(tmp_path / "exp"), purge_step=5)
    w.add_scalar("s", 1.0, 1)
    w.add_scalars("m", {"a": 2.0}, 1)
    w.flush()
    r = _read(tmp_path / "exp")
    assert r.scalars("exp", "s").values.tolist() == [1.0]
    assert r.scalars("m_a", "m").values.tolist() == [2.0]
    w.close()
    w.close()  # twice is fine
    with pytest.raises(RuntimeError, match="closed"):
        w.add_scalar("s", 1.0, 2)
    with pytest.raises(RuntimeError, match="closed"):
        w.add_scalars("m", {"new": 2.0}, 2)  # a new key would open a new run
    with pytest.raises(RuntimeError, match="closed"):
        w.add_hparams({"lr": 1}, {"acc": 1})
    assert not os.path.exists(tmp_path / "exp" / "m_new")


def test_onnx_file_and_kinds_we_do_not_have(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])],
                                                "g", [x], [y]))
    onnx.save(model, str(tmp_path / "m.onnx"))
    with SummaryWriter(str(tmp_path / "exp")) as w:
        w.add_onnx_graph(str(tmp_path / "m.onnx"))
    r = _read(tmp_path / "exp")
    assert r.load(r.graphs("exp", "model")[0]).onnx == model.SerializeToString()


def test_small_max_queue_keeps_every_point(tmp_path):
    with SummaryWriter(str(tmp_path / "exp"), max_queue=1, flush_secs=1) as w:
        for step in range(5000):
            w.add_scalar("s", float(step), step)
            w.add_scalars("m", {"a": step}, step)
    r = _read(tmp_path / "exp")
    assert r.scalars("exp", "s").values.tolist() == [float(i) for i in range(5000)]
    assert r.scalars("m_a", "m").steps.tolist() == list(range(5000))
    with pytest.raises(ValueError, match="max_queue"):
        SummaryWriter(str(tmp_path / "bad"), max_queue=0)


def test_bad_arguments_are_named(tmp_path):
    with SummaryWriter(str(tmp_path / "exp")) as w:
        with pytest.raises(ValueError, match="dataformats"):
            w.add_image("i", np.zeros((2, 2)), dataformats="XYZ")
        with pytest.raises(TypeError, match="bins"):
            w.add_histogram("h", np.arange(3.0), bins=None)
        with pytest.raises(ValueError, match="snd_tensor"):
            w.add_audio("a", np.zeros((2, 5)))
        with pytest.raises(TypeError, match="tag_scalar_dict"):
            w.add_scalars("m", [1, 2])


# -- against torch's own writer --------------------------------------------------------
def _calls(writer, torch, matplotlib_figure):
    x = torch.arange(6, dtype=torch.float32)
    writer.add_scalar("loss", 0.5, 1)
    writer.add_scalar("nostep", 2.0)
    writer.add_scalar("nostep", 3.0, 2.7)
    writer.add_scalars("parts", {"a": 1.0, "b": 2.0}, 1)
    writer.add_histogram("w", x, 1)
    writer.add_image("img", torch.arange(48, dtype=torch.float32).reshape(3, 4, 4) / 40, 1)
    writer.add_images("imgs", torch.zeros(2, 3, 4, 4), 1)
    writer.add_text("note", "hi", 1)
    writer.add_audio("snd", torch.sin(torch.arange(100) / 7.0)[None] * 0.9, 1)
    writer.add_pr_curve("pr", torch.tensor([0, 1, 1]), torch.tensor([0.1, 0.6, 0.9]), 1)
    writer.add_figure("fig", matplotlib_figure(), 1)
    writer.add_hparams({"lr": 0.1}, {"hp/acc": 0.5}, run_name="trial")


def test_same_runs_and_tags_as_torchs_writer(tmp_path, torch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    try:  # tensorboard, and every package it needs
        from tensorboard.backend.event_processing.event_multiplexer import EventMultiplexer
        from torch.utils.tensorboard import SummaryWriter as TorchWriter
    except ImportError as exc:
        pytest.skip(f"torch's SummaryWriter is not usable here: {exc}")

    def figure():
        fig = Figure(figsize=(1, 1), dpi=20)
        fig.add_subplot().plot([0, 1])
        return fig

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with TorchWriter(str(tmp_path / "tb" / "exp")) as w:
            _calls(w, torch, figure)
    with SummaryWriter(str(tmp_path / "vdl" / "exp")) as w:
        _calls(w, torch, figure)
    tb = EventMultiplexer().AddRunsFromDirectory(str(tmp_path / "tb")).Reload()
    theirs = {}
    for run, tags in tb.Runs().items():
        name = os.path.basename(run) if run != "." else run
        theirs[name] = set(tags.get("scalars", [])) | set(tags.get("images", [])) | \
            set(tags.get("audio", [])) | set(tags.get("histograms", []))
    r = _read(tmp_path / "vdl" / "exp")
    assert "pr" in tb.Runs()["exp"]["tensors"] and r.tags("exp")["pr_curve"] == ["pr"]
    ours = {run: {t for kind, tags in r.tags(run).items()
                  if kind in ("scalar", "image", "audio", "histogram") for t in tags}
            for run in r.runs()}
    # the sub-runs (add_scalars' keys, add_hparams' trial) are the same, with the same tags
    for run in ("parts_a", "parts_b", "trial"):
        assert ours[run] == theirs[run], run
    # the main run: TensorBoard keeps the figure as an image, we keep it as a figure
    assert ours["exp"] == theirs["exp"] - {"fig"}
    assert json.dumps(sorted(ours)) == json.dumps(sorted(theirs))
    # the same pixels and samples: TensorBoard's conversions are followed
    (tb_image,) = tb.Images("exp", "img")
    assert np.array_equal(decode_png(r.load(r.images("exp", "img")[0]).png),
                          decode_png(tb_image.encoded_image_string))
    (tb_audio,) = tb.Audio("exp", "snd")
    assert np.array_equal(decode_wav(r.load(r.audio("exp", "snd")[0]).wav)[0],
                          decode_wav(tb_audio.encoded_audio_string)[0])
    assert [e.step for e in tb.Scalars("exp", "nostep")] == [0, 2] == \
        r.scalars("exp", "nostep").steps.tolist()
    assert [e.value for e in tb.Scalars(os.path.join("exp", "parts_b"), "parts")] == \
        r.scalars("parts_b", "parts").values.tolist()
