"""A logdir mixing our runs and TensorBoard runs, served by a real server and inspected by
``visualdl inspect``."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tests.helpers.cli import run_cli
from tests.helpers.http import Client
from tests.helpers.server import serving
from tests.sources.tfevents.tbwrite import EventWriter, add_scalars
from visualdl import LogWriter

PIXELS = np.arange(6 * 7 * 3, dtype=np.uint8).reshape(6, 7, 3)


@pytest.fixture
def mixed(tmp_path):
    with LogWriter(logdir=str(tmp_path / "ours")) as w:
        for step in range(5):
            w.add_scalar("loss", 1.0 + step, step=step, walltime=1000.0 + step)
    writers: dict = {}
    with EventWriter(str(tmp_path / "tb")) as w:
        for step in range(5):
            w.add_scalar("loss", 0.5 * step, step, 1000.0 + step)
            add_scalars(str(tmp_path / "tb"), "acc", {"train": 0.25 * step}, step,
                        1000.0 + step, writers)
        w.add_image("sample", PIXELS, 3, 1003.0)
    for sub in writers.values():
        sub.close()
    return tmp_path


def test_server_shows_both_formats(mixed):
    with serving([str(mixed)]) as handle:
        client = Client(handle.url)
        try:
            tags = client.get("/api/tags", params={"kind": "scalar"}).json()["runs"]
            assert tags == {"ours": ["loss"], "tb": ["loss"], "tb/acc_train": ["acc"]}
            body = client.get("/api/scalars", params={"run": "tb", "tag": "loss"}).json()
            assert body["steps"] == [0, 1, 2, 3, 4]
            assert body["values"] == [0.0, 0.5, 1.0, 1.5, 2.0]
            assert body["wall_times"] == [1000.0 + s for s in range(5)]
            body = client.get("/api/scalars", params={"run": "ours", "tag": "loss"}).json()
            assert body["values"] == [1.0, 2.0, 3.0, 4.0, 5.0]
            body = client.get("/api/scalars",
                              params={"run": "tb/acc_train", "tag": "acc"}).json()
            assert body["values"] == [0.0, 0.25, 0.5, 0.75, 1.0]
            response = client.get("/api/images/data",
                                  params={"run": "tb", "tag": "sample", "step": 3})
            assert response.status_code == 200
            from PIL import Image

            assert np.array_equal(np.asarray(Image.open(io.BytesIO(response.content))), PIXELS)
            info = client.get("/api/info").json()
            assert info["errors"] == 0
        finally:
            client.close()


def test_inspect_a_tfevents_logdir(mixed):
    done = run_cli("inspect", str(mixed / "tb"))
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "2 run(s)" in out
    assert "run tb: 1 file(s), 7 records" in out  # file_version + 5 scalars + 1 image
    assert "scalar     loss  (5 points, steps 0..4)" in out
    assert "image      sample  (1 points, steps 3)" in out
    assert "run acc_train: 1 file(s), 6 records" in out
    assert "bad records or files: 0" in out
