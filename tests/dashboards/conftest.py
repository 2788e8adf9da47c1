"""A logdir holding every kind but scalars, written by LogWriter, and a real server on it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import requests

from visualdl import LogWriter
from visualdl.server.api_common import provider
from visualdl.server.background import start_server

IMAGE_STEPS = 40
XSS_TEXT = "# Title\n\n<script>window.__xss = 1</script><img src=x onerror=\"window.__xss=2\">" \
           "\n\n| a | b |\n|---|---|\n| 1 | 2 |"


def image_at(step: int) -> np.ndarray:
    img = np.zeros((6, 8, 3), np.uint8)
    img[..., 0] = step  # red channel carries the step
    img[..., 1] = np.arange(8, dtype=np.uint8)[None, :] * 10
    return img


def write_kinds(root: Path) -> Path:
    rng = np.random.default_rng(0)
    for run, lr in (("a", 0.1), ("b", 0.01)):
        with LogWriter(logdir=str(root / run)) as w:
            for step in range(IMAGE_STEPS):
                w.add_image("samples/input", image_at(step), step)
            for step in range(5):
                w.add_audio("voice", np.full(800, step / 10, np.float32), step, sample_rate=8000)
                w.add_text("notes", f"step **{step}** of run {run}", step)
                w.add_histogram("weights", rng.normal(step, 1.0, 1000), step, buckets=20)
                labels = rng.integers(0, 2, 200)
                w.add_pr_curve("pr", labels, np.clip(labels * 0.6 + rng.random(200) * 0.4, 0, 1),
                               step, num_thresholds=11)
                w.add_roc_curve("roc", labels, np.clip(labels * 0.6 + rng.random(200) * 0.4, 0,
                                                       1), step, num_thresholds=11)
                w.add_figure("fig", {"data": [{"type": "bar", "x": ["p", "q"], "y": [step, 1]}],
                                     "layout": {}}, step)
                w.add_scalar("loss", 1.0 / (step + 1) * (1 if run == "a" else 2), step)
            w.add_text("xss", XSS_TEXT, 0)
            mat = rng.normal(size=(60, 5))
            mat[:30] += 4
            w.add_embeddings("emb", mat, metadata=[["pos" if i < 30 else "neg", str(i)]
                                                   for i in range(60)],
                             metadata_header=["label", "index"], step=1)
            w.add_hparams({"lr": lr, "optimizer": "sgd" if run == "a" else "adam",
                           "bn": run == "a"}, ["loss", "missing_metric"])
    return root


@pytest.fixture(scope="package")
def kinds_logdir(tmp_path_factory) -> Path:
    return write_kinds(tmp_path_factory.mktemp("kinds"))


@pytest.fixture(scope="package")
def kinds_server(kinds_logdir):
    handle = start_server(kinds_logdir, reload_interval=0.5)
    provider(handle.app).wait_loaded(20)
    yield handle
    handle.stop()


class Api:
    def __init__(self, url: str) -> None:
        self.url = url
        self.session = requests.Session()

    def get(self, path: str, **params) -> requests.Response:
        return self.session.get(self.url + path, params=params, timeout=120)  # UMAP compiles on first use

    def json(self, path: str, **params):
        response = self.get(path, **params)
        assert response.status_code == 200, response.text
        return json.loads(response.text)


@pytest.fixture(scope="package")
def api(kinds_server) -> Api:
    return Api(kinds_server.url)
