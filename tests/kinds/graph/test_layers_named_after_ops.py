"""Layers named after their op (``self.relu = nn.ReLU()``, ``self.flatten = nn.Flatten()``),
at the top level and nested: ``vf.onnx`` names the node ``block/relu``, which also reads as
op ``relu`` called in layer ``block``. Activation statistics and profiler time both find
them (one rule, :func:`visualdl.kinds.graph.layer_paths.framework_alternates`), checked on
a real ``Model.fit`` run with the ``VisualDL`` callback."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.http import Client, wait_for
from tests.helpers.server import serving
from visualdl import LogReader
from visualdl.kinds.graph.node_values import ACTIVATION_STATS, activations
from visualdl.kinds.graph.parse import load_model, parse_model

#: layer -> the node its output comes from
LAYER_NODES = {"block.fc": "block/fc/Add", "block.relu": "block/relu",
               "block.flatten": "block/flatten", "relu": "relu", "flatten": "flatten",
               "out": "out"}


def _net():
    from visualdl.framework import nn

    class Block(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.relu = nn.ReLU()
            self.flatten = nn.Flatten()

        def forward(self, x):  # (the scaling keeps every layer's statistics apart)
            return self.flatten(self.relu(self.fc(x)) * 2.0)

    class Net(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.block = Block()
            self.flatten = nn.Flatten()
            self.relu = nn.ReLU()
            self.out = nn.Linear(8, 3)

        def forward(self, x):
            return self.out(self.relu(self.flatten(self.block(x) + 0.5) - 1.0))

    return Net()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Two steps of training on (batch, 2, 4) inputs, activations of every leaf layer logged
    and the second step profiled."""
    import visualdl.framework as vf
    from visualdl.framework import nn

    logdir = tmp_path_factory.mktemp("named")
    vf.seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 2, 4)).astype(np.float32)
    y = rng.integers(0, 3, 16).astype(np.int64)
    net = _net()
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.05), nn.CrossEntropyLoss())
    cb = vf.callbacks.VisualDL(str(logdir / "run"), histogram_freq=0, log_images=False,
                               activation_layers=list(LAYER_NODES), profile_steps=(1, 2),
                               system_metrics=False)
    model.fit(vf.data.TensorDataset(x, y), batch_size=8, epochs=1, verbose=0, callbacks=[cb])
    return logdir


def _logged(logdir, stat: str):
    reader = LogReader(str(logdir))
    (ref,) = reader.blobs("run", "graph", "model")
    graph = parse_model(load_model(bytes(reader.load(ref).onnx))[0])
    stats = {layer: reader.scalars("run", f"activations/{layer}/{stat}").values[-1]
             for layer in LAYER_NODES}
    return graph, stats


def test_the_export_names_the_nodes_so(run):
    graph, _ = _logged(run, "mean")
    ops = {n.name for n in graph.nodes if n.role == "op"}
    assert ops == {"block/fc/Transpose", "block/fc/MatMul", "block/fc/Add", "block/relu",
                   "block/mul", "block/flatten", "add", "flatten", "sub", "relu", "out"}


def test_each_layer_goes_to_its_own_node(run):
    graph, stats = _logged(run, "mean")
    assert len(set(stats.values())) == len(stats)  # a value on the wrong node would show
    nv = activations(graph, stats, "mean")
    got = {graph.nodes[n].name: v for n, v in nv.values.items()}
    assert got == {LAYER_NODES[layer]: value for layer, value in stats.items()}
    assert nv.extra["unmatched"] == [] and nv.notes == []


def _values(client, **params):
    def ask():
        r = client.get("/api/graph/values", params=params)
        return [r] if r.status_code != 503 else None
    return wait_for(ask, timeout=30)[0]


def test_the_api_colours_every_logged_layer_and_profiles_them(run):
    with serving(str(run), models=[]) as handle:
        client = Client(handle.url)
        model = client.json("/api/graph/models")["models"][0]
        view = client.json("/api/graph/view", model=model["id"], expand="all")
        names = {n["id"]: n["name"] for n in view["nodes"] if n["type"] == "op"}
        for stat in ACTIVATION_STATS:
            _, stats = _logged(run, stat)
            body = _values(client, model=model["id"], by="activations", stat=stat).json()
            assert {names[k]: v for k, v in body["nodes"].items()} == pytest.approx(
                {LAYER_NODES[layer]: value for layer, value in stats.items()})
            assert body["unmatched"] == [] and body["notes"] == []
        profile = _values(client, model=model["id"], by="profile").json()
        timed = {names[k] for k, v in profile["nodes"].items() if v > 0}
        assert timed >= {"block/relu", "block/flatten", "relu", "flatten"}
        client.close()
