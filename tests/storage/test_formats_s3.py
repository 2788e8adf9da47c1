"""Every log format visualdl reads, from one ``s3://`` logdir (moto's S3 server), served by
the real ``visualdl --logdir s3://...`` command: tensorboardX event files of every kind, a
VisualDL 2.x logdir with its model graph and a Paddle program, and our own segments; with
torch (tests marked ``torch``), PyTorch profiler traces (plain and gzipped) and a
tensorboardX graph of a torch module join them in the same logdir. Blobs read from S3 are
fetched once: a page reload costs no request, and /api/info counts the cache hits."""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import shutil
import uuid
import wave
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli import start_cli
from tests.helpers.http import Client, wait_for
from tests.kinds.profile import traces
from tests.sources.tfevents import test_real_writers as tbx
from tests.sources.vdl2.common import FIXTURES, LOGS, TRAIN, f32, png_pixels, wav_samples
from visualdl import LogWriter

# tensorboardX, and soundfile for its add_audio (the test extra has both)
HAVE_TENSORBOARDX = all(importlib.util.find_spec(name) is not None
                        for name in ("tensorboardX", "soundfile"))
IMAGE = (np.arange(5 * 4 * 3) * 7 % 256).astype(np.uint8).reshape(5, 4, 3)


def _torch_trace(torch, path: Path) -> dict:
    """A real PyTorch profiler trace (CPU), exported as Chrome-trace JSON."""
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        model(torch.randn(4, 16)).sum().backward()
    prof.export_chrome_trace(str(path))
    return json.loads(path.read_text())


def _upload(s3, local: Path, url: str) -> dict[str, bytes]:
    """Put every file under ``local`` to ``url`` (as ``aws s3 sync`` would)."""
    bucket, _, prefix = url[len("s3://"):].partition("/")
    import boto3  # (moto's, which the s3 fixture has)

    client = boto3.client("s3", endpoint_url=s3.endpoint, region_name="us-east-1")
    put = {}
    for path in sorted(local.rglob("*")):
        if path.is_file():
            key = f"{prefix}/{path.relative_to(local).as_posix()}"
            client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
            put[key[len(prefix) + 1:]] = path.read_bytes()
    return put


@pytest.fixture(scope="module")
def formats(tmp_path_factory) -> Path:
    """A local folder of every format that needs no torch, to upload (tensorboardX's event
    files where tensorboardX and soundfile are installed: the tests of those skip without)."""
    local = tmp_path_factory.mktemp("formats")
    if HAVE_TENSORBOARDX:
        from tensorboardX import SummaryWriter

        tbx._write_all(SummaryWriter, str(local / "tbx"))
    shutil.copytree(LOGS, local / "vdl2")  # runs vdl2/train, vdl2/eval
    shutil.copytree(FIXTURES / "graph" / "cnn", local / "vdl2" / "cnn")
    shutil.copy(FIXTURES / "pdmodel" / "net.pdmodel", local / "vdl2" / "cnn" / "net.pdmodel")
    return local


def _fill(s3, url: str, *folders: Path) -> dict[str, bytes]:
    """Upload ``folders`` to ``url`` and write our segments beside them (run ``ours``)."""
    uploaded = {}
    for local in folders:
        uploaded.update(_upload(s3, local, url))
    with LogWriter(logdir=f"{url}/ours") as w:  # ours: segments, written to S3 directly
        for step in range(30):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        w.flush()
        w.add_image("pic", IMAGE, step=4)
        w.add_text("note", "from **S3**", step=1)
    return uploaded


@pytest.fixture(scope="module")
def logdir(s3, formats):
    """One s3:// logdir holding every format that needs no torch; (url, what was uploaded)."""
    url = f"s3://logs/formats-{uuid.uuid4().hex[:8]}"
    return url, _fill(s3, url, formats)


@pytest.fixture(scope="module")
def torch_logdir(s3, formats, torch, tmp_path_factory):
    """The same formats plus those made with torch, in a logdir of their own (so that no
    server of the tests above meets them late): PyTorch profiler traces (plain and gzipped)
    and tensorboardX's graph of a torch module; (url, what was uploaded, the trace JSON)."""
    SummaryWriter = pytest.importorskip("tensorboardX").SummaryWriter  # (add_graph only)

    local = tmp_path_factory.mktemp("formats_torch")
    (local / "prof").mkdir()
    trace = _torch_trace(torch, local / "prof" / "worker0.1700000000.pt.trace.json")
    gz = gzip.compress((local / "prof" / "worker0.1700000000.pt.trace.json").read_bytes())
    (local / "prof" / "worker1.1700000001.pt.trace.json.gz").write_bytes(gz)
    writer = SummaryWriter(str(local / "tbxgraph"))
    model, example = tbx._net(torch)
    writer.add_graph(model, example)
    writer.close()
    url = f"s3://logs/formats-torch-{uuid.uuid4().hex[:8]}"
    return url, _fill(s3, url, formats, local), trace


TBX_RUNS = {"tbx", "tbx/acc/train", "tbx/acc/val"}
FORMATS = {"vdl2/train", "vdl2/eval", "vdl2/cnn", "ours"}
FORMATS |= TBX_RUNS if HAVE_TENSORBOARDX else set()


@pytest.fixture(scope="module")
def served(logdir):
    url, uploaded = logdir
    with start_cli("--logdir", url, "--reload-interval", "1") as cli:
        client = Client(cli.url)
        wait_for(lambda: "ours" in client.json("/api/runs")["runs"], timeout=60)
        yield client, uploaded
        client.close()


@pytest.fixture(scope="module")
def torch_served(torch_logdir):
    """A server started once the torch formats are in the logdir too."""
    url, uploaded, trace = torch_logdir
    with start_cli("--logdir", url, "--reload-interval", "1") as cli:
        client = Client(cli.url)
        wait_for(lambda: {"ours", "prof", "tbxgraph"} <= set(client.json("/api/runs")["runs"]),
                 timeout=60)
        yield client, uploaded, trace
        client.close()


def test_runs_of_every_format_and_no_errors(served):
    client, _ = served
    runs = client.json("/api/runs")["runs"]
    assert FORMATS <= set(runs), runs
    info = client.json("/api/info")
    assert info["errors"] == 0, info["error_messages"]


def test_tensorboardx_event_files_every_kind(served):
    if not HAVE_TENSORBOARDX:
        pytest.skip("tensorboardX's event files need tensorboardX and soundfile (test extra)")
    client, _ = served
    loss = client.json("/api/scalars", run="tbx", tag="train/loss")
    assert loss["steps"] == list(range(tbx.STEPS))
    assert loss["values"] == tbx.LOSS.astype(np.float64).tolist()
    acc = client.json("/api/scalars", run="tbx/acc/val", tag="acc")
    assert acc["values"] == [float(np.float32(s / 200)) for s in range(tbx.STEPS)]
    png = client.get("/api/images/data", params={"run": "tbx", "tag": "sample", "step": 3})
    assert png.status_code == 200
    assert np.array_equal(png_pixels(png.content), tbx.IMAGE_CHW.transpose(1, 2, 0))
    wav = client.get("/api/audio/data", params={"run": "tbx", "tag": "sound", "step": 4})
    with wave.open(io.BytesIO(wav.content)) as w:
        samples = np.frombuffer(w.readframes(w.getnframes()), "<i2") / 32767.0
        assert w.getframerate() == 8000
    assert np.abs(samples - tbx.AUDIO).max() <= 1.5 / 32767
    hist = client.json("/api/histograms", run="tbx", tag="weights")["entries"][0]
    assert hist["counts"] == np.histogram(tbx.HIST, bins=10)[0].astype(float).tolist()
    text_tag = client.json("/api/tags", kind="text")["runs"]["tbx"][0]
    text = client.json("/api/text", run="tbx", tag=text_tag)["entries"][0]
    assert text["text"] == "hello **world**"
    pr = client.json("/api/pr_curves", run="tbx", tag="pr")["entries"][0]
    assert pr["tp"] == tbx._expected_pr()["tp"].tolist()
    (row,) = [r for r in client.json("/api/hparams")["runs"] if r["run"] == "tbx/trial"]
    assert row["hparams"] == tbx.HPARAMS and row["metrics"]["hparam/accuracy"] == 0.75


def test_visualdl2_logs_graph_and_program(served):
    client, _ = served
    q = {"run": "vdl2/train"}
    loss = client.json("/api/scalars", tag="loss", **q)
    assert loss["steps"] == list(range(20)) and loss["values"] == f32(TRAIN["scalars"]["loss"])
    png = client.get("/api/images/data", params={**q, "tag": "sample", "step": 12})
    assert png_pixels(png.content).tolist() == TRAIN["images"]["12"]
    wav = client.get("/api/audio/data", params={**q, "tag": "wave", "step": 2})
    _, samples = wav_samples(wav.content)
    np.testing.assert_allclose(samples, TRAIN["audio"]["samples"], atol=1 / 32767)
    proj = client.json("/api/embeddings/projection", tag="emb", step=0, method="pca", dims=2,
                       **q)
    assert len(proj["coords"][0]) == 6
    assert proj["metadata"] == [[m] for m in TRAIN["embedding"]["metadata"]]
    hist = client.json("/api/histograms", tag="weights", **q)["entries"]
    assert [h["counts"] for h in hist] == [TRAIN["histograms"][s] for s in ("0", "5", "12")]
    (row,) = [r for r in client.json("/api/hparams")["runs"] if r["run"] == "vdl2/train"]
    assert row["hparams"] == TRAIN["hparams"]["hparams"]
    # the model graph (vdlgraph JSON) and the Paddle program, converted when opened
    assert client.json("/api/tags", kind="graph")["runs"]["vdl2/cnn"] == \
        ["net.pdmodel", "vdlgraph"]
    models = [m for m in client.json("/api/graph/models")["models"]
              if m["source"] == "log" and m["run"] == "vdl2/cnn"]
    assert sorted(m["tag"] for m in models) == ["net.pdmodel", "vdlgraph"]
    for model in models:
        summary = client.json("/api/graph/summary", model=model["id"])
        assert summary["counts"]["nodes"] > 0
    vdlgraph = next(m for m in models if m["tag"] == "vdlgraph")
    summary = client.json("/api/graph/summary", model=vdlgraph["id"])
    assert summary["inputs"] == [{"name": "image", "dtype": "float32", "shape": ["?", 1, 8, 8]}]
    assert "conv2d" in summary["op_types"]


def test_our_segments_beside_the_others(served):
    client, _ = served
    body = client.json("/api/scalars", run="ours", tag="loss")
    assert body["values"] == [1.0 / (s + 1) for s in range(30)]
    png = client.get("/api/images/data", params={"run": "ours", "tag": "pic", "step": 4})
    assert np.array_equal(png_pixels(png.content), IMAGE)
    assert client.json("/api/text", run="ours", tag="note")["entries"][0]["text"] == \
        "from **S3**"


BLOBS = [
    ("/api/images/data", {"run": "tbx", "tag": "sample", "step": 3}, "/tbx/events"),
    ("/api/images/data", {"run": "vdl2/train", "tag": "sample", "step": 5}, "/train/vdlrec"),
    ("/api/images/data", {"run": "ours", "tag": "pic", "step": 4}, "/ours/vdlrecords"),
    ("/api/audio/data", {"run": "vdl2/train", "tag": "wave", "step": 2}, "/train/vdlrec"),
]


def test_a_blob_is_fetched_once_then_served_from_the_cache(logdir, s3):
    """A fresh server (nothing viewed yet): each blob costs its record's ranged GETs once;
    page reloads cost no request and show as cache hits in /api/info."""
    url = logdir[0]
    with start_cli("--logdir", url, "--reload-interval", "1") as cli:
        client = Client(cli.url)
        wait_for(lambda: "ours" in client.json("/api/runs")["runs"], timeout=60)
        for path, params, key in BLOBS:
            if params["run"] == "tbx" and not HAVE_TENSORBOARDX:
                continue
            before = client.json("/api/info")["storage"]["total"]
            mark = s3.mark()
            first = client.get(path, params=params)
            assert first.status_code == 200
            fetched = [r for r in s3.since(mark) if r.is_get and key in r.path]
            assert 1 <= len(fetched) <= 2, fetched  # its record, by range
            assert sum(r.bytes_out for r in fetched) < 2 * len(first.content) + 4096
            mark = s3.mark()
            for _ in range(3):  # page reloads (no If-None-Match: a fresh tab)
                again = client.get(path, params=params)
                assert again.content == first.content
            assert [r for r in s3.since(mark) if r.is_get] == []
            after = client.json("/api/info")["storage"]["total"]
            assert after["cache_hits"] - before["cache_hits"] == 3
            assert after["gets"] - before["gets"] == len(fetched)
        client.close()


# -- with what needs torch too ------------------------------------------------------------
def test_runs_of_every_format_with_torchs_and_no_errors(torch_served):
    client, _, _ = torch_served
    runs = client.json("/api/runs")["runs"]
    assert FORMATS | {"prof", "tbxgraph"} <= set(runs), runs
    info = client.json("/api/info")
    assert info["errors"] == 0, info["error_messages"]
    models = {m["run"]: m for m in client.json("/api/graph/models")["models"]
              if m["source"] == "log"}
    groups = client.get("/api/graph/hierarchy", params={"model": models["tbxgraph"]["id"]}).text
    assert "Linear[fc1]" in groups and "Linear[fc2]" in groups


def test_pytorch_traces_plain_and_gzipped(torch_served):
    client, uploaded, trace = torch_served
    assert client.json("/api/tags", kind="profile")["runs"]["prof"] == ["worker0", "worker1"]
    expected = traces.op_table(trace, cats=("cpu_op",))
    for tag in ("worker0", "worker1"):
        index = client.json("/api/profile", run="prof", tag=tag)
        assert index["source"] == ["pytorch"] and index["error"] == [""]
        rows = {r["name"]: r for r in client.json("/api/profile/operators", run="prof",
                                                  tag=tag)["rows"]}
        assert set(rows) == set(expected)
        for name, want in expected.items():
            assert rows[name]["calls"] == want["calls"]
    # the download is the user's file, byte for byte (gzipped as it was)
    got = client.get("/api/profile/trace", params={"run": "prof", "tag": "worker1"})
    assert got.status_code == 200
    assert got.content == uploaded["prof/worker1.1700000001.pt.trace.json.gz"]
    plain = client.get("/api/profile/trace", params={"run": "prof", "tag": "worker0"})
    assert plain.content == uploaded["prof/worker0.1700000000.pt.trace.json"]


def test_a_trace_is_fetched_once_for_indexing_and_viewing(torch_logdir, s3):
    """Indexing a trace takes its bytes once; opening it in the profiler and downloading it
    are answered from the same bytes (fresh server: no earlier views)."""
    url, uploaded, _ = torch_logdir
    mark = s3.mark()
    with start_cli("--logdir", f"{url}/prof", "--reload-interval", "1") as cli:
        client = Client(cli.url)
        wait_for(lambda: client.json("/api/tags", kind="profile")["runs"].get("prof") ==
                 ["worker0", "worker1"], timeout=60)
        for tag in ("worker0", "worker1"):
            rows = client.json("/api/profile/operators", run="prof", tag=tag)["rows"]
            assert rows
            client.get("/api/profile/trace", params={"run": "prof", "tag": tag})
        client.close()
    gets = [r for r in s3.since(mark) if r.is_get]
    per_object = {name: sum(1 for r in gets if r.path.endswith(name))
                  for name in ("worker0.1700000000.pt.trace.json",
                               "worker1.1700000001.pt.trace.json.gz")}
    assert per_object == {"worker0.1700000000.pt.trace.json": 1,
                          "worker1.1700000001.pt.trace.json.gz": 1}, gets
    fetched = sum(r.bytes_out for r in gets)
    assert fetched == len(uploaded["prof/worker0.1700000000.pt.trace.json"]) + \
        len(uploaded["prof/worker1.1700000001.pt.trace.json.gz"])
