"""Profiler time of a PyTorch training run on the graph PyTorch exported of the same model
(needs torch: marked through the ``torch`` fixture). A Kineto trace with ``with_stack``
names module instances (``nn.Module: Conv2d_0``), the TorchScript export module paths
(``/layer1/layer1.0/conv1/Conv``); the mapping aligns the two trees. Checked against the
raw trace: each node's forward time is the mean per step of the ATen ops it ran."""

from __future__ import annotations

import glob
import gzip
import json
import os

import pytest

from tests.helpers.http import Client, wait_for
from tests.helpers.server import serving
from tests.kinds.graph.node_data import torch_profiled


@pytest.fixture
def torch_run(torch, tmp_path):
    run = tmp_path / "torchrun"
    torch_profiled(str(run), torch)
    (path,) = glob.glob(os.path.join(str(run), "*.pt.trace.json*"))
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    with serving(str(tmp_path)) as handle:
        client = Client(handle.url)
        yield client, trace
        client.close()


def _values(client, **params):
    def ask():
        r = client.get("/api/graph/values", params=params)
        return [r] if r.status_code != 503 else None
    r = wait_for(ask, timeout=60)[0]
    assert r.status_code == 200, r.text
    return r.json()


def _per_step(trace, name):
    """The durations of the ``name`` ops in each profiled step, in call order."""
    events = trace["traceEvents"]
    steps = sorted((e for e in events if e.get("ph") == "X"
                    and str(e.get("name", "")).startswith("ProfilerStep#")
                    and e.get("cat") != "gpu_user_annotation"), key=lambda e: e["ts"])
    out = []
    for s in steps:
        ops = sorted((e for e in events if e.get("cat") == "cpu_op" and e["name"] == name
                      and s["ts"] <= e["ts"] < s["ts"] + s["dur"]), key=lambda e: e["ts"])
        out.append([e["dur"] for e in ops])
    return out


def test_torch_profile_on_the_torch_export(torch_run):
    client, trace = torch_run
    (model,) = client.json("/api/graph/models")["models"]
    assert model["run"] == "torchrun"
    view = client.json("/api/graph/view", model=model["id"], expand="all")
    ids = {n["name"]: n["id"] for n in view["nodes"] if n["type"] == "op"}
    assert set(ids) >= {"/layer1/layer1.0/conv1/Conv", "/layer1/layer1.0/conv2/Conv",
                        "/layer1/layer1.0/relu/Relu", "/layer1/layer1.0/relu_1/Relu",
                        "/fc/Gemm"}
    body = _values(client, model=model["id"], by="profile", phase="forward")
    assert body["matched_by"] == "module tree" and body["profile"]["worker"] == "worker0"
    got = {name: body["nodes"].get(i) for name, i in ids.items()}
    conv = _per_step(trace, "aten::conv2d")
    relu = _per_step(trace, "aten::relu")
    linear = _per_step(trace, "aten::linear")
    steps = len(conv)
    assert steps == body["steps"] == 3 and all(len(c) == 2 for c in conv)
    mean = lambda k, runs: sum(r[k] for r in runs) / steps  # noqa: E731
    assert got["/layer1/layer1.0/conv1/Conv"] == pytest.approx(mean(0, conv))
    assert got["/layer1/layer1.0/conv2/Conv"] == pytest.approx(mean(1, conv))
    assert got["/layer1/layer1.0/relu/Relu"] == pytest.approx(mean(0, relu))
    assert got["/layer1/layer1.0/relu_1/Relu"] == pytest.approx(mean(1, relu))
    assert got["/fc/Gemm"] == pytest.approx(mean(0, linear))
    # what left no node in the export is named, not spread over the nodes
    unmapped = {u["name"] for u in body["unmapped"]}
    assert {"Dropout_0: aten::dropout", "BatchNorm2d_0: aten::batch_norm"} <= unmapped
    # backward: the autograd functions of the convolutions land on the Conv nodes
    back = _values(client, model=model["id"], by="profile", phase="backward")
    assert back["nodes"].get(ids["/layer1/layer1.0/conv1/Conv"], 0) > 0
    assert back["nodes"].get(ids["/fc/Gemm"], 0) > 0
    focus = _values(client, model=model["id"], by="profile", op="aten::conv2d")
    assert {n["id"] for n in focus["op_nodes"]} == {ids["/layer1/layer1.0/conv1/Conv"],
                                                   ids["/layer1/layer1.0/conv2/Conv"]}
