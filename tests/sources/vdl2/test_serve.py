"""VisualDL 2.x runs served by a real server (HTTP bodies hold the values VisualDL wrote) and
summarised by ``visualdl inspect``; a garbage vdlrecords file never makes an answer fail."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.cli import run_cli
from tests.helpers.http import Client
from tests.helpers.server import serving
from tests.sources.vdl2.common import LOGS, T0, TRAIN, copy_logs, f32, png_pixels, wav_samples


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    logdir = copy_logs(tmp_path_factory.mktemp("vdl2") / "logs")
    (logdir / "junk").mkdir()
    (logdir / "junk" / "vdlrecords.9.log").write_bytes(b"\x00\xff garbage " * 50)
    with serving([str(logdir)]) as handle:
        c = Client(handle.url)
        try:
            yield c
        finally:
            c.close()


def test_runs_tags_and_scalars(client):
    tags = client.get("/api/tags", params={"kind": "scalar"}).json()["runs"]
    assert tags == {"eval": ["loss"], "train": ["loss", "lr/cos", "lr/warm", "metrics/acc"]}
    body = client.get("/api/scalars", params={"run": "train", "tag": "loss"}).json()
    assert body["steps"] == list(range(20))
    assert body["values"] == f32(TRAIN["scalars"]["loss"])
    assert body["wall_times"] == [T0 + s for s in range(20)]
    info = client.get("/api/info").json()
    assert info["errors"] == 1  # the garbage file, refused


def test_blobs_and_events(client):
    q = {"run": "train"}
    images = client.get("/api/images", params={**q, "tag": "sample"}).json()
    assert images["steps"] == [0, 5, 12]
    png = client.get("/api/images/data", params={**q, "tag": "sample", "step": 12})
    assert png.status_code == 200 and png.headers["Content-Type"] == "image/png"
    assert png_pixels(png.content).tolist() == TRAIN["images"]["12"]
    wav = client.get("/api/audio/data", params={**q, "tag": "wave", "step": 2})
    assert wav.status_code == 200
    rate, samples = wav_samples(wav.content)
    np.testing.assert_allclose(samples, TRAIN["audio"]["samples"], atol=1 / 32767)
    text = client.get("/api/text", params={**q, "tag": "note"}).json()["entries"]
    assert [e["text"] for e in text] == [TRAIN["text"]["0"], TRAIN["text"]["5"]]
    assert "<strong>world</strong>" in text[0]["html"]
    hist = client.get("/api/histograms", params={**q, "tag": "weights"}).json()["entries"]
    assert [h["counts"] for h in hist] == [TRAIN["histograms"][s] for s in ("0", "5", "12")]
    pr = client.get("/api/pr_curves", params={**q, "tag": "pr"}).json()["entries"][0]
    np.testing.assert_allclose(pr["precision"], TRAIN["pr_curve"]["precision"])
    roc = client.get("/api/roc_curves", params={**q, "tag": "roc"}).json()["entries"][0]
    np.testing.assert_allclose(roc["tpr"], TRAIN["roc_curve"]["tpr"])
    emb = client.get("/api/embeddings", params={**q, "tag": "emb"}).json()
    assert emb["shape"] == [[6, 3]]  # one per step
    proj = client.get("/api/embeddings/projection", params={
        **q, "tag": "emb", "step": 0, "method": "pca", "dims": 2}).json()
    assert len(proj["coords"]) == 2 and len(proj["coords"][0]) == 6
    assert proj["metadata"] == [[m] for m in TRAIN["embedding"]["metadata"]]
    hp = client.get("/api/hparams").json()
    (row,) = [r for r in hp["runs"] if r["run"] == "train"]
    assert row["hparams"] == TRAIN["hparams"]["hparams"]
    assert row["metrics"]["loss"] == pytest.approx(TRAIN["scalars"]["loss"][-1], rel=1e-6)


def test_bad_queries_are_client_errors(client):
    for path, params in (("/api/scalars", {"run": "junk", "tag": "loss"}),
                         ("/api/images/data", {"run": "train", "tag": "sample", "step": 99}),
                         ("/api/scalars", {"run": "train", "tag": "nope"})):
        assert 400 <= client.get(path, params=params).status_code < 500


def test_inspect_a_vdl2_logdir():
    done = run_cli("inspect", str(LOGS))
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "2 run(s)" in out
    assert "run train: 2 file(s), 77 records" in out
    assert "scalar     loss  (20 points, steps 0..19)" in out
    assert "image      sample  (3 points, steps 0..12)" in out
    assert "hparams    3 values, metrics: loss, metrics/acc" in out
    assert "run eval: 1 file(s), 5 records" in out
    assert "bad records or files: 0" in out


def test_inspect_names_a_garbage_file(tmp_path):
    (tmp_path / "vdlrecords.1.log").write_bytes(b"garbage, not a record file" * 4)
    done = run_cli("inspect", str(tmp_path))
    assert done.returncode == 1
    assert ("vdlrecords.1.log: not a visualdl record file (bad framing at offset 0; nor a "
            "VisualDL 2.x log)") in done.stdout
