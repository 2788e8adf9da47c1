"""The standard logdirs of the tests, written by LogWriter, and what the tests know of them.

``write_logs``: scalars only (train, eval and a run with a hostile name), for the server
tests. ``write_kinds``: every kind (scalars too) in runs "a" and "b", for the dashboard API
and browser tests.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np

from tests.helpers import onnx_models
from visualdl import LogWriter

# -- write_logs ------------------------------------------------------------------------------------
HOSTILE_RUN = "<script>alert(1)</script>"
HOSTILE_TAGS = ("../../etc/passwd", "<img src=x onerror=alert(1)>")
SPECIAL_VALUES = [1.0, math.nan, math.inf, -math.inf, 2.0]
LOSS_STEPS = 3000
SPIKE_STEP = 1234
EVAL_STEPS = 30  # eval/loss is logged every EVAL_STRIDE steps
EVAL_STRIDE = 100


def loss_value(step: int) -> float:
    """Smooth decay with one spike, so a downsampler that drops spikes is caught."""
    return 100.0 if step == SPIKE_STEP else 1.0 / (1.0 + step * 0.01)


def eval_loss(step: int) -> float:
    """eval's loss at ``step`` (a multiple of EVAL_STRIDE)."""
    return 0.5 - step / EVAL_STRIDE / 100


def write_logs(root: Path) -> Path:
    """The standard scalar logdir: train, eval and a run with a hostile name."""
    with LogWriter(logdir=str(root / "train")) as w:
        for step in range(LOSS_STEPS):
            w.add_scalar("loss", loss_value(step), step=step, walltime=1000.0 + step)
        for step in range(50):
            w.add_scalar("metrics/acc", step / 50, step=step * 10, walltime=1000.0 + step)
        for i, value in enumerate(SPECIAL_VALUES):
            w.add_scalar("special", value, step=i, walltime=2000.0 + i)
    with LogWriter(logdir=str(root / "eval")) as w:
        for i in range(EVAL_STEPS):
            step = i * EVAL_STRIDE
            w.add_scalar("loss", eval_loss(step), step=step, walltime=1000.0 + i)
    with LogWriter(logdir=str(root / HOSTILE_RUN)) as w:
        for tag in HOSTILE_TAGS:
            for step in range(3):
                w.add_scalar(tag, float(step), step=step, walltime=3000.0 + step)
    return root


# -- write_kinds -----------------------------------------------------------------------------------
KIND_RUNS = {"a": 0.1, "b": 0.01}  # run -> its "lr" hparam
IMAGE_STEPS = 40
CURVE_STEPS = 5  # audio, text, histograms, curves, plotly figures and scalars: steps 0..4
CURVE_SAMPLES = 200
MPL_STEPS = 3  # run "a" only
MPL_SIZE = (40, 30)  # the matplotlib figure's width and height in pixels
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None  # the test extra's
XSS_TEXT = "# Title\n\n<script>window.__xss = 1</script><img src=x onerror=\"window.__xss=2\">" \
           "\n\n| a | b |\n|---|---|\n| 1 | 2 |"


def image_at(step: int) -> np.ndarray:
    """The 6x8 RGB image logged at ``step``: its red channel is the step."""
    img = np.zeros((6, 8, 3), np.uint8)
    img[..., 0] = step
    img[..., 1] = np.arange(8, dtype=np.uint8)[None, :] * 10
    return img


def pr_labels(run: str, step: int) -> np.ndarray:
    """The binary labels of the "pr" and "roc" curves of ``run`` at ``step``."""
    seed = [sorted(KIND_RUNS).index(run), step]
    return np.random.default_rng(seed).integers(0, 2, CURVE_SAMPLES)


def mpl_red(step: int) -> int:
    """The red channel of the matplotlib figure logged at ``step`` (its background)."""
    return step * 50


def mpl_figure(step: int):
    """A real matplotlib Figure (no pyplot, so no GUI backend), MPL_SIZE pixels, filled
    with a colour whose red channel is ``mpl_red(step)``."""
    from matplotlib.figure import Figure

    width, height = MPL_SIZE
    return Figure(figsize=(width / 100, height / 100), dpi=100,
                  facecolor=(mpl_red(step) / 255, 0.0, 200 / 255))


def write_kinds(root: Path) -> Path:
    """Every kind in runs "a" and "b"; run "a" also has matplotlib figures ("mpl") where
    matplotlib is installed."""
    rng = np.random.default_rng(0)
    for run, lr in KIND_RUNS.items():
        with LogWriter(logdir=str(root / run)) as w:
            for step in range(IMAGE_STEPS):
                w.add_image("samples/input", image_at(step), step)
            for step in range(CURVE_STEPS):
                w.add_audio("voice", np.full(800, step / 10, np.float32), step, sample_rate=8000)
                w.add_text("notes", f"step **{step}** of run {run}", step)
                w.add_histogram("weights", rng.normal(step, 1.0, 1000), step, buckets=20)
                labels = pr_labels(run, step)
                for kind in ("pr", "roc"):  # scores separate the classes: positives >= 0.6
                    scores = np.clip(labels * 0.6 + rng.random(CURVE_SAMPLES) * 0.4, 0, 1)
                    add = w.add_pr_curve if kind == "pr" else w.add_roc_curve
                    add(kind, labels, scores, step, num_thresholds=11)
                w.add_figure("fig", {"data": [{"type": "bar", "x": ["p", "q"], "y": [step, 1]}],
                                     "layout": {}}, step)
                w.add_scalar("loss", 1.0 / (step + 1) * (1 if run == "a" else 2), step)
                w.add_scalar("system/host0/cpu/percent", 10.0 * step, step)  # system metrics
            if run == "a" and HAVE_MATPLOTLIB:  # (the tests of "mpl" skip without it)
                for step in range(MPL_STEPS):
                    w.add_figure("mpl", mpl_figure(step), step)
            w.add_text("xss", XSS_TEXT, 0)
            mat = rng.normal(size=(60, 5))
            mat[:30] += 4
            w.add_embeddings("emb", mat, metadata=[["pos" if i < 30 else "neg", str(i)]
                                                   for i in range(60)],
                             metadata_header=["label", "index"], step=1)
            w.add_hparams({"lr": lr, "optimizer": "sgd" if run == "a" else "adam",
                           "bn": run == "a"}, ["loss", "missing_metric"])
            w.add_config({"model": {"depth": 2 if run == "a" else 4}, "lr": lr})
            w.add_graph(onnx_models.residual_cnn(blocks=1), tag="model")
            w.add_custom_scalars({"Custom": {"loss": ["Multiline", ["^loss$"]]}})
            w.add_profile("worker0", {"traceEvents": [
                {"ph": "X", "cat": "cpu_op", "name": "matmul", "pid": 1, "tid": 1, "ts": 0,
                 "dur": 40 if run == "a" else 80}]}, 0)
            w.add_table("results", {"id": [1, 2], "name": ["x", run]}, 0)
            w.add_tensor("weights", np.arange(6, dtype=np.float32).reshape(2, 3), 0)
            w.add_video("clip", np.full((2, 4, 4, 3), 100, np.uint8), 0)
            w.add_mesh("cloud", np.eye(3), 0, faces=[[0, 1, 2]])
            w.add_checkpoint(f"ckpt/{run}/step{CURVE_STEPS - 1}", CURVE_STEPS - 1)
            w.add_resize(1, CURVE_STEPS // 2, 1)
    return root
