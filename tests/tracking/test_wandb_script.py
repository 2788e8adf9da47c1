"""An unmodified W&B script, run with only ``import wandb`` swapped for ``import visualdl
as wandb``, then read back: the values, steps, pixels, counts, cells, config, summary and
alert it logged."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

from tests.helpers.http import client_of
from visualdl import LogReader

SCRIPT = Path(__file__).with_name("wandb_script.py")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("cwd")
    source = SCRIPT.read_text(encoding="utf-8")
    assert source.count("import wandb\n") == 1
    (cwd / "train.py").write_text(source.replace("import wandb\n", "import visualdl as wandb\n"),
                                  encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "train.py"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    root = cwd / "vdl_runs" / "mnist-demo"
    assert os.listdir(root) == ["baseline"]
    return root


@pytest.fixture(scope="module")
def logged(logdir):
    reader = LogReader(str(logdir))
    assert reader.runs() == ["baseline"]
    return reader


def test_scalars_at_wandbs_steps(logged):
    loss = logged.scalars("baseline", "loss")
    assert list(loss.steps) == [0, 1, 2]
    assert np.allclose(loss.values, [1.0, 0.5, 1 / 3])
    assert np.allclose(logged.scalars("baseline", "acc").values, [0.5, 0.6, 0.7])
    nested = logged.scalars("baseline", "val/loss")  # nested dicts: "/"-joined keys
    assert list(nested.steps) == [0, 1, 2] and np.allclose(nested.values, [2.0, 1.0, 2 / 3])


def test_images_with_captions(logged):
    image = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    for i, expected in enumerate((image, image[::-1])):  # a list: one tag per image
        (ref,) = logged.images("baseline", f"examples/{i}")
        assert ref.step == 3
        pixels = np.asarray(PILImage.open(io.BytesIO(logged.load(ref).png)))
        assert np.array_equal(pixels, expected)
    assert [(t.step, t.text) for t in logged.texts("baseline", "examples/0/caption")] == \
        [(3, "digit 7")]
    assert [(t.step, t.text) for t in logged.texts("baseline", "examples/1/caption")] == \
        [(3, "digit 1")]


def test_histogram_counts(logged):
    (hist,) = logged.histograms("baseline", "weights")
    assert hist.step == 4
    assert hist.edges.tolist() == [0.0, 1.0, 2.0] and hist.counts.tolist() == [2.0, 4.0]
    assert (hist.min, hist.max, hist.count, hist.sum) == (0.0, 2.0, 6.0, 7.0)


def test_table_cells(logged):
    (table,) = logged.tables("baseline", "predictions")
    assert table.step == 5
    assert table.columns == ("id", "prediction", "truth")
    assert table.data == ((0, 1, 2), (7, 2, 5), (7, 3, 5))  # by column


def test_config_and_summary(logged):
    config = logged.config("baseline").nested
    assert config == {
        "learning_rate": 0.01, "epochs": 3, "model": {"layers": 2, "act": "relu"},
        "optimizer": "adam",
        # the summary: the last value of each logged number, and the one set by hand
        "summary": {"best_acc": 0.7, "loss": pytest.approx(1 / 3), "acc": 0.7,
                    "val/loss": pytest.approx(2 / 3)},
    }


def test_alert_is_a_text(logged):
    (alert,) = logged.texts("baseline", "alerts")
    assert alert.step == 6
    assert alert.text == "**INFO: Training done**\n\nbest accuracy 0.70"


def test_nothing_else_was_logged(logged):
    tags = logged.tags("baseline")  # but the machine's state, sampled every 10 s
    tags["scalar"] = [t for t in tags["scalar"] if not t.startswith("system/")]
    assert tags == {
        "scalar": ["acc", "loss", "val/loss"], "image": ["examples/0", "examples/1"],
        "text": ["alerts", "examples/0/caption", "examples/1/caption"],
        "histogram": ["weights"], "config": ["config"], "table": ["predictions"]}


def test_the_server_shows_config_and_summary(logdir):
    with client_of(str(logdir)) as client:
        body = client.json("/api/config", run="baseline")
        assert body["config"]["summary"]["best_acc"] == 0.7
        assert body["flat"]["model.act"] == "relu"
        table = client.json("/api/runs/config")
        assert table["runs"] == ["baseline"]
        assert table["same"]["summary.best_acc"] == 0.7
        assert table["same"]["optimizer"] == "adam"
