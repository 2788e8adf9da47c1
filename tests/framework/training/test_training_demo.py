"""The README's main job: examples/train_demo.py trains and leaves a logdir with every kind
the dashboard shows for it."""

import os
import subprocess
import sys

import pytest

from tests.helpers.cli import REPO
from visualdl import LogReader

ROOT = str(REPO)


def test_train_demo_writes_curves_histograms_images_graph_and_hparams(tmp_path):
    pytest.importorskip("sklearn")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", "train_demo.py"), "--logdir",
         str(tmp_path), "--epochs", "3", "--verbose", "0"],
        capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    reader = LogReader(str(tmp_path))
    assert reader.errors == 0
    runs = reader.runs()
    assert "cnn" in runs and len([r for r in runs if r.startswith("sweep/")]) == 3
    tags = reader.tags("cnn")
    assert {"scalar", "histogram", "image", "graph", "hparams", "profile"} <= set(tags)
    assert "train/loss" in tags["scalar"] and "eval/loss" in tags["scalar"]
    assert any(t.startswith("weights/features.block1.conv") for t in tags["histogram"])
    loss = reader.scalars("cnn", "train/loss").values
    assert len(loss) > 10 and loss[-1] < loss[0]  # it trained
    assert set(reader.hparams("cnn").metric_tags) >= {"eval/loss"}
