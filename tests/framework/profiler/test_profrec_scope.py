"""Each op of a ``vf.profiler`` trace carries the layer that ran it (``Layer Scope``), the
same path ``vf.onnx`` writes into the exported nodes' names: the graph view maps profiled
time onto the graph with it."""

from __future__ import annotations

import numpy as np
import pytest

import visualdl.framework as vf
import visualdl.framework.nn.functional as F
from visualdl.framework import hooks, nn

pytest.importorskip("onnx")


class Block(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x)) + x  # an op of the block itself: block/add


class Net(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Linear(16, 8)
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


def test_ops_carry_the_scope_the_export_names_nodes_by():
    from visualdl.kinds.graph.layer_paths import framework_ops
    from visualdl.kinds.graph.parse import parse_model

    vf.seed(0)
    net = Net()
    x = vf.tensor(np.random.default_rng(0).random((4, 16), np.float32))
    y = vf.tensor(np.array([0, 1, 2, 1]))
    with vf.profiler.Profiler() as prof:
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        assert hooks.layer_scope is not None
    assert hooks.layer_scope is None  # stopped: Layer.__call__ is as before
    trace = prof.trace()
    forward = [e for e in trace["traceEvents"] if e.get("cat") == "Operator"]
    scopes = [(e["args"].get("Layer Scope", ""), e["name"]) for e in forward]
    assert scopes == [("stem", "linear"), ("blocks/0/fc", "linear"), ("blocks/0/act", "relu"),
                      ("blocks/0", "add"), ("blocks/1/fc", "linear"), ("blocks/1/act", "relu"),
                      ("blocks/1", "add"), ("head", "linear"), ("", "cross_entropy")]
    graph = parse_model(vf.onnx.to_onnx(net, [x]))
    exported = {(op.scope, op.op) for op in framework_ops(graph).values()}
    assert set(scopes[:-1]) == exported  # every op of the model has its node; the loss none
    by_seq = {e["args"]["Sequence number"]: e["args"].get("Layer Scope", "") for e in forward}
    backward = [e for e in trace["traceEvents"] if e.get("cat") == "Backward"
                and "Forward Op" in e.get("args", {})]
    assert len(backward) == len(forward)
    for e in backward:  # a backward op carries its forward op's layer
        assert e["args"].get("Layer Scope", "") == by_seq[e["args"]["Sequence number"]]

def test_a_layer_called_outside_the_model_is_named_by_its_class():
    net = nn.Sequential(nn.Linear(4, 2))
    loose = nn.ReLU()
    x = vf.tensor(np.ones((1, 4), np.float32))
    with vf.profiler.Profiler() as prof:
        with vf.no_grad():
            out = net(x)
            loose(out)
    ops = [(e["args"].get("Layer Scope", ""), e["name"]) for e in prof.trace()["traceEvents"]
           if e.get("cat") == "Operator"]
    assert ops == [("0", "linear"), ("", "relu")]  # the loose ReLU is a model of its own
