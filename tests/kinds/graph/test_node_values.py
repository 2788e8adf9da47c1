"""Values on the nodes, without a server: parameters and FLOPs against numbers counted by
hand on small ONNX models, group sums, and how node names give layer paths (ours and
PyTorch's exporter)."""

from __future__ import annotations

import pytest

from tests.helpers.onnx_models import residual_cnn, values_model
from visualdl.kinds.graph.document import GraphDocument
from visualdl.kinds.graph.layer_paths import framework_op, module_path, nodes_by_layer
from visualdl.kinds.graph.node_values import activations, flops, parameters, to_json
from visualdl.kinds.graph.parse import parse_model
from visualdl.kinds.graph.parsed_model import Node


@pytest.fixture(scope="module")
def small():
    return parse_model(values_model())


def _by_name(model, nv):
    return {n.name: nv.values.get(n.id) for n in model.nodes if n.role == "op"}


def test_parameters_by_hand(small):
    got = _by_name(small, parameters(small))
    assert got == {
        "/dense/MatMul": 12, "/dense/Add": 3, "/head/Softmax": 0,
        "/head/Mul": 1, "/head/Mul_1": 0,  # the shared scalar counts once, at its first reader
        "/norm/LayerNormalization": 6, "/gemm/Gemm": 15 + 5, "/up/ConvTranspose": 32 + 4,
        "/pool/MaxPool": 0, "/flat/Reshape": 2, "/conv/Conv": 18, "/custom/Mystery": 0,
        "/custom/Relu": 0}
    summary = GraphDocument(small).summary()
    assert sum(parameters(small).values.values()) == summary["counts"]["parameters"]


def test_flops_by_hand(small):
    nv = flops(small)
    got = _by_name(small, nv)
    assert got == {
        "/dense/MatMul": 2 * 2 * 3 * 4,  # [2,4] x [4,3]: 2 * out * K
        "/dense/Add": 6, "/head/Softmax": 5 * 6, "/head/Mul": 6, "/head/Mul_1": 6,
        "/norm/LayerNormalization": 7 * 6,
        "/gemm/Gemm": 2 * 2 * 5 * 3 + 2 * 5,  # M=2 N=5 K=3, plus the bias
        # 18 input elements each spread over C_out/group (4) x kernel (2x2), plus the bias
        "/up/ConvTranspose": 2 * 18 * 4 * 4 + 4 * 4 * 4,
        "/pool/MaxPool": 4 * 2 * 2 * (2 * 2),  # out [1,4,2,2] x kernel 2x2
        "/flat/Reshape": 0,
        "/conv/Conv": 2 * (2 * 3 * 3) * (1 * 3 * 3),  # out [N=1,2,3,3] x C_in*k
        "/custom/Mystery": None,  # no formula
        "/custom/Relu": None}  # its input's shape is unknown: no guess
    assert nv.extra["symbols"] == ["N"] and nv.label == "FLOPs (N=1)"


def test_answer_lists_missing_nodes_and_sums_groups():
    model = parse_model(residual_cnn(blocks=2, channels=8))
    doc = GraphDocument(model)
    body = to_json(doc.hierarchy, flops(model))
    assert body["missing"] == []
    ids = {n.name: f"n{n.id}" for n in model.nodes}
    block0 = [v for k, v in body["nodes"].items()
              if model.nodes[int(k[1:])].name.startswith("/layer1/block0/")]
    assert body["groups"]["g:layer1/block0"] == sum(block0) == 2 * 294912 + 3 * 2048
    assert body["groups"]["g:layer1"] == 2 * body["groups"]["g:layer1/block0"]
    assert body["total"] == sum(body["nodes"].values())
    assert body["top"][0]["id"] in (ids["/layer1/block0/conv1/Conv"],
                                    ids["/layer1/block0/conv2/Conv"])
    assert body["max"] == 294912 and body["min"] == 0
    small = parse_model(values_model())
    missing = to_json(GraphDocument(small).hierarchy, flops(small))["missing"]
    assert sorted(small.nodes[int(i[1:])].name for i in missing) == ["/custom/Mystery",
                                                                   "/custom/Relu"]


def test_activation_values_sit_on_each_layers_last_node():
    model = parse_model(residual_cnn(blocks=2))
    doc = GraphDocument(model)
    nv = activations(model, {"layer1.block0": 0.25, "stem.relu": 0.5, "nowhere": 1.0},
                     "zero_fraction")
    names = {model.nodes[n].name: v for n, v in nv.values.items()}
    assert names == {"/layer1/block0/relu_1/Relu": 0.25, "/stem/relu/Relu": 0.5}
    assert nv.extra["unmatched"] == ["nowhere"]
    body = to_json(doc.hierarchy, nv)
    assert body["groups"]["g:layer1/block0"] == 0.25  # a group shows its output's value
    assert body["total"] is None


def _node(name: str, op_type: str, doc: str = "") -> Node:
    return Node(0, "op", name, op_type, "", 0, "", "", "op", doc=doc)


@pytest.mark.parametrize("name, op_type, op, expected", [
    ("features/0", "Conv", "conv2d", ("features/0", "conv2d", 0)),  # a leaf layer's only op
    ("block/add", "Add", "add", ("block", "add", 0)),
    ("block/add_2", "Add", "add", ("block", "add", 2)),
    ("fc/linear/MatMul", "MatMul", "linear", ("fc", "linear", 0)),  # one op, two ONNX nodes
    ("fc/linear_1/Add_1", "Add", "linear", ("fc", "linear", 1)),
    ("fc", "Gemm", "linear", ("fc", "linear", 0)),
])
def test_framework_names(name, op_type, op, expected):
    found = framework_op(_node(name, op_type, f"visualdl.framework op {op}"))
    assert (found.scope, found.op, found.index) == expected
    assert framework_op(_node(name, op_type)) is None  # not our exporter's


@pytest.mark.parametrize("name, path", [
    ("/layer1/layer1.0/conv1/Conv", "layer1.0.conv1"),
    ("/fc/Gemm", "fc"),
    ("/Flatten", ""),
    ("/encoder/layers.0/self_attn/MatMul", "encoder.layers.0.self_attn"),
])
def test_torch_module_paths(name, path):
    assert module_path(name) == path


def test_nodes_by_layer_include_sub_layers():
    model = parse_model(residual_cnn(blocks=1))
    layers = nodes_by_layer(model)
    assert [model.nodes[n].name for n in layers["layer1.block0.conv1"]] == \
        ["/layer1/block0/conv1/Conv"]
    assert len(layers["layer1.block0"]) == 5 and len(layers["layer1"]) == 5


def test_an_op_exported_as_several_nodes_puts_its_time_on_the_main_one():
    """A ``linear`` on a 3-D input is exported as Transpose, MatMul and Add: its profiled
    time goes to the MatMul (a real vf.profiler profile of the real export)."""
    import json

    import numpy as np

    import visualdl.framework as vf
    from visualdl.framework import nn
    from visualdl.kinds.graph.profile_map import profile_values
    from visualdl.kinds.profile.model import TraceModel
    from visualdl.kinds.profile.parse import parse_trace

    class Net(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.act = nn.ReLU()

        def forward(self, x):
            return self.act(self.fc(x))

    net = Net()
    x = vf.tensor(np.ones((2, 5, 4), np.float32))
    graph = parse_model(vf.onnx.to_onnx(net, [x]))
    ops = {n.name: n.id for n in graph.nodes if n.role == "op"}
    assert set(ops) == {"fc/Transpose", "fc/MatMul", "fc/Add", "act"}
    with vf.profiler.Profiler(scheduler=(0, 2)) as prof:
        for _ in range(3):
            net(x).sum().backward()
            prof.step()
    trace = prof.trace()
    model = TraceModel(parse_trace(json.dumps(trace).encode()))
    nv = profile_values(graph, model)
    assert set(nv.values) == {ops["fc/MatMul"], ops["act"]}
    linear = [e for e in trace["traceEvents"] if e.get("name") in ("linear", "linear_grad")]
    assert nv.values[ops["fc/MatMul"]] == pytest.approx(sum(e["dur"] for e in linear) / 2,
                                                        rel=0.05)
