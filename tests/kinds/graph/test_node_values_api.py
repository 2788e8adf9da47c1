"""``/api/graph/values`` on a real server over a real run: a small CNN trained by
``Model.fit`` with the ``VisualDL`` callback, which logs its graph, its layers' activation
statistics and a ``vf.profiler`` profile into one run. Every number is checked against the
logged data themselves (the scalars, the trace's events)."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict

import pytest

from tests.helpers.http import Client, wait_for
from tests.helpers.server import serving
from tests.kinds.graph.node_data import fit_tiny_cnn
from visualdl import LogReader

pytest.importorskip("numba")


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("nodedata")
    fit_tiny_cnn(str(logdir / "cnn"))
    _other_profile(str(logdir / "other"))
    reader = LogReader(str(logdir))
    (ref,) = reader.blobs("cnn", "profile", "worker0")
    trace = json.loads(gzip.decompress(reader.load(ref).trace_gz))
    with serving(str(logdir), models=[]) as handle:
        client = Client(handle.url)
        model = client.json("/api/graph/models")["models"][0]
        yield client, model, trace, reader
        client.close()


def _other_profile(logdir: str) -> None:
    """A profile of another model (an MLP: its layers are not the CNN's)."""
    import numpy as np

    import visualdl.framework as vf
    from visualdl.framework import nn

    net = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    x = vf.tensor(np.ones((2, 4), np.float32))
    handler = vf.profiler.export_visualdl(logdir, tag="worker0")
    with vf.profiler.Profiler(scheduler=(0, 2), on_trace_ready=handler) as prof:
        for _ in range(3):
            net(x).sum().backward()
            prof.step()


def values(client, **params):
    """The answer, waiting out a 503 while the trace is parsed."""
    def ask():
        r = client.get("/api/graph/values", params=params)
        return [r] if r.status_code != 503 else None  # (an error Response is falsy)
    return wait_for(ask, timeout=30)[0]


def _names(client, model):
    view = client.json("/api/graph/view", model=model["id"], expand="all")
    return {n["id"]: n["name"] for n in view["nodes"] if n["type"] == "op"}


def test_the_run_holds_the_graph_and_the_profile(fitted):
    client, model, trace, _ = fitted
    assert model["run"] == "cnn" and model["tag"] == "model"
    ops = [e for e in trace["traceEvents"] if e.get("cat") == "Operator"]
    # vf.profiler records the layer each op ran in, as vf.onnx names the nodes
    assert {e["args"].get("Layer Scope") for e in ops} >= {"features/0", "features/3",
                                                           "classifier"}


def test_parameters_and_flops(fitted):
    client, model, _, _ = fitted
    names = _names(client, model)
    by_name = lambda body: {names[k]: v for k, v in body["nodes"].items()}  # noqa: E731
    params = values(client, model=model["id"], by="params").json()
    assert by_name(params) == {"features/0": 4 * 9 + 4, "features/1": 0, "features/2": 0,
                               "features/3": 8 * 4 * 9 + 8, "features/4": 0, "flatten": 0,
                               "classifier": 128 * 10 + 10}
    assert params["groups"] == {"g:features": 40 + 296} and params["unit"] == "parameters"
    assert params["top"][0]["name"] == "classifier" and params["missing"] == []
    body = values(client, model=model["id"], by="flops").json()
    assert by_name(body)["features/0"] == 2 * (4 * 8 * 8) * 9 + 4 * 8 * 8  # + bias
    assert by_name(body)["classifier"] == 2 * 10 * 128 + 10
    assert body["symbols"] == ["batch"] and body["label"] == "FLOPs (batch=1)"


@pytest.mark.parametrize("stat", ["mean", "std", "zero_fraction"])
def test_activation_statistics_are_the_logged_scalars(fitted, stat):
    client, model, _, reader = fitted
    names = _names(client, model)
    body = values(client, model=model["id"], by="activations", stat=stat).json()
    expected = {layer: reader.scalars("cnn", f"activations/{layer}/{stat}").values[-1]
                for layer in ("features.0", "features.1", "features.3", "classifier")}
    got = {names[k]: v for k, v in body["nodes"].items()}
    # a layer's value sits on its last op: features.0 is Conv 0, classifier the Linear
    assert got == pytest.approx({"features/0": expected["features.0"],
                                 "features/1": expected["features.1"],
                                 "features/3": expected["features.3"],
                                 "classifier": expected["classifier"]})
    assert body["groups"]["g:features"] == pytest.approx(expected["features.3"])
    first = values(client, model=model["id"], by="activations", stat=stat, step=1).json()
    assert first["step"] == 1


def test_profile_time_is_the_traces_op_time(fitted):
    client, model, trace, _ = fitted
    names = _names(client, model)
    body = values(client, model=model["id"], by="profile").json()
    assert body["matched_by"] == "layer scope" and body["unit"] == "us"
    steps = [e for e in trace["traceEvents"] if e.get("cat") == "ProfileStep"]
    assert body["steps"] == len(steps) == 3
    # expected from the raw events: forward ops by (scope, op), backward ones by scope too
    ops = [e for e in trace["traceEvents"] if e.get("cat") in ("Operator", "Backward")
           and "Sequence number" in e.get("args", {})
           and steps[0]["ts"] <= e["ts"] < steps[-1]["ts"] + steps[-1]["dur"]]
    per_scope = defaultdict(float)
    for e in ops:
        per_scope[e["args"].get("Layer Scope", "")] += e["dur"]
    got = {names[k]: v for k, v in body["nodes"].items()}
    for scope in ("features/0", "features/1", "features/2", "features/3", "features/4",
                  "flatten", "classifier"):
        assert got[scope] == pytest.approx(per_scope[scope] / 3, rel=0.02), scope
    assert [u["name"] for u in body["unmapped"]] == ["cross_entropy", "cross_entropy_grad"] \
        or {u["name"] for u in body["unmapped"]} == {"cross_entropy", "cross_entropy_grad"}
    assert body["missing"] == []
    forward = values(client, model=model["id"], by="profile", phase="forward").json()
    fwd = defaultdict(float)
    for e in ops:
        if e["cat"] == "Operator":
            fwd[e["args"].get("Layer Scope", "")] += e["dur"]
    assert {names[k]: v for k, v in forward["nodes"].items()}["features/3"] == \
        pytest.approx(fwd["features/3"] / 3, rel=0.02)


def test_an_operator_names_its_costliest_nodes(fitted):
    client, model, trace, _ = fitted
    names = _names(client, model)
    body = values(client, model=model["id"], by="profile", op="conv2d_grad").json()
    assert [names[n["id"]] for n in body["op_nodes"]] in (["features/3", "features/0"],
                                                          ["features/0", "features/3"])
    assert body["op_nodes"][0]["us"] >= body["op_nodes"][1]["us"]
    assert body["op"] == "conv2d_grad"


@pytest.mark.parametrize("params, status, words", [
    ({"by": "weights"}, 400, "by"),
    ({"by": "activations", "stat": "median"}, 400, "stat"),
    ({"by": "profile", "phase": "sideways"}, 400, "phase"),
    ({"by": "profile", "profile_run": "nope"}, 404, "unknown run"),
    ({"by": "profile", "worker": "worker9"}, 404, "worker9"),
    ({"by": "activations", "run": "cnn", "step": "0"}, 404, "at or before step 0"),
    ({"by": "activations", "step": "9" * 400}, 400, "step"),
    ({"by": "activations", "step": "nan"}, 400, "step"),
    ({"by": "profile", "profile_step": "-1e400"}, 400, "profile_step"),
    ({"by": "activations", "run": "../../etc"}, 404, "unknown run"),
    ({"by": "profile", "profile_step": "999"}, 404, "step 999"),
])
def test_bad_requests_are_named(fitted, params, status, words):
    client, model, _, _ = fitted
    r = client.get("/api/graph/values", params={"model": model["id"], **params})
    assert r.status_code == status, r.text
    assert words in r.json()["error"]


def test_an_operator_that_ran_nowhere_lists_no_node(fitted):
    client, model, _, _ = fitted
    body = values(client, model=model["id"], by="profile", op="\u0000" + "x" * 5000).json()
    assert body["op_nodes"] == [] and body["count"] == 7  # the colouring is unchanged


def test_the_profile_of_another_model_is_refused(fitted):
    client, model, _, _ = fitted
    r = values(client, model=model["id"], by="profile", profile_run="other")
    assert r.status_code == 422
    assert "no profiled op matches a node of this graph" in r.json()["error"]
    assert "other/worker0" in r.json()["error"]


def test_unknown_model_is_a_404(fitted):
    client, _, _, _ = fitted
    r = client.get("/api/graph/values", params={"model": "file:9", "by": "params"})
    assert r.status_code == 404
