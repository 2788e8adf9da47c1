"""Small models for the diff tests: an MLP whose variants rename, change, add and remove
ops, and two exports of a layer stack by our framework that differ in one layer."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp(*, names=("fc1", "act", "fc2"), alpha: float | None = None, w2_scale: float = 1.0,
         hidden: int = 4, extra_tanh: bool = False, drop_relu: bool = False) -> onnx.ModelProto:
    """x[1,3] -> MatMul(W1) -> Relu (or LeakyRelu with alpha) -> MatMul(W2) -> [Tanh] -> Identity -> y."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((3, hidden)).astype(np.float32), "W1")
    w2 = numpy_helper.from_array((w2_scale * np.ones((hidden, 2))).astype(np.float32), "W2")
    act = (helper.make_node("Relu", ["h"], ["a"], name=names[1]) if alpha is None else
           helper.make_node("LeakyRelu", ["h"], ["a"], name=names[1], alpha=alpha))
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h"], name=names[0])]
    if drop_relu:
        nodes.append(helper.make_node("MatMul", ["h", "W2"], ["z"], name=names[2]))
    else:
        nodes += [act, helper.make_node("MatMul", ["a", "W2"], ["z"], name=names[2])]
    if extra_tanh:
        nodes.append(helper.make_node("Tanh", ["z"], ["t"], name="squash"))
    nodes.append(helper.make_node("Identity", ["t" if extra_tanh else "z"], ["y"], name="out"))
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])], [w1, w2])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def framework_pair() -> tuple[onnx.ModelProto, onnx.ModelProto]:
    """``Linear(4,8) ReLU Linear(8,3)`` and the same stack with a last layer of 5 outputs,
    exported by ``visualdl.framework`` (the first layer's weights are equal: same seed)."""
    import visualdl.framework as vf
    from visualdl.framework import nn

    def export(out: int) -> onnx.ModelProto:
        vf.seed(0)
        stack = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, out))
        return stack.to_onnx([np.zeros((2, 4), np.float32)])

    return export(3), export(5)


def unrelated() -> onnx.ModelProto:
    """One Sigmoid on an input named unlike the MLP's: nothing of it matches the MLP."""
    return helper.make_model(helper.make_graph(
        [helper.make_node("Sigmoid", ["p"], ["q"], name="s")], "other",
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("q", TensorProto.FLOAT, [2])]),
        opset_imports=[helper.make_opsetid("", 17)])


def _value(name: str, shape: list) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _weight(name: str, *shape: int) -> onnx.TensorProto:
    return numpy_helper.from_array(np.full(shape, 0.5, np.float32), name)


def mlp3() -> onnx.ModelProto:
    """A torch-style MLP x -> Gemm -> Relu -> Gemm -> y (3 ops, names ``/fc1/Gemm``...)."""
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="/fc1/Gemm", transB=1),
             helper.make_node("Relu", ["h"], ["a"], name="/act/Relu"),
             helper.make_node("Gemm", ["a", "w2", "b2"], ["y"], name="/fc2/Gemm", transB=1)]
    graph = helper.make_graph(nodes, "mlp3", [_value("x", [2, 4])], [_value("y", [2, 3])],
                              [_weight("w1", 8, 4), _weight("b1", 8), _weight("w2", 3, 8),
                               _weight("b2", 3)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def cnn() -> onnx.ModelProto:
    """A small CNN with the MLP's input and output names and, like it, a Gemm last:
    x -> Conv -> Relu -> Conv -> Relu -> GlobalAveragePool -> Flatten -> Gemm -> y."""
    nodes = [helper.make_node("Conv", ["x", "k1"], ["c1"], name="/stem/Conv", pads=[1] * 4),
             helper.make_node("Relu", ["c1"], ["r1"], name="/Relu"),
             helper.make_node("Conv", ["r1", "k2"], ["c2"], name="/conv/Conv", pads=[1] * 4),
             helper.make_node("Relu", ["c2"], ["r2"], name="/relu/Relu"),
             helper.make_node("GlobalAveragePool", ["r2"], ["p"], name="/pool/GlobalAveragePool"),
             helper.make_node("Flatten", ["p"], ["f"], name="/Flatten"),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="/fc/Gemm", transB=1)]
    graph = helper.make_graph(nodes, "cnn", [_value("x", [2, 3, 8, 8])], [_value("y", [2, 10])],
                              [_weight("k1", 4, 3, 3, 3), _weight("k2", 4, 4, 3, 3),
                               _weight("wf", 10, 4), _weight("bf", 10)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def one_custom_op() -> onnx.ModelProto:
    """x -> MyOp (a custom domain) -> y: one op, the CNN's input and output names."""
    graph = helper.make_graph([helper.make_node("MyOp", ["x"], ["y"], name="mine", domain="my")],
                              "custom", [_value("x", [2, 3, 8, 8])], [_value("y", [2, 10])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid("my", 1)])


def constant_add(values: np.ndarray, *, alpha: float = 0.3, name: str = "cv",
                 ints: list[int] | None = None) -> onnx.ModelProto:
    """x -> Add(Constant ``values``) -> LeakyRelu(alpha) -> y, and with ``ints`` a second
    Constant holding them (``value_ints``) as a second output."""
    n = values.size
    nodes = [helper.make_node("Constant", [], ["c"], name="const",
                              value=numpy_helper.from_array(values, name)),
             helper.make_node("Add", ["x", "c"], ["h"], name="add"),
             helper.make_node("LeakyRelu", ["h"], ["y"], name="lrelu", alpha=alpha)]
    outputs = [_value("y", [n])]
    if ints is not None:
        nodes.append(helper.make_node("Constant", [], ["k"], name="ints", value_ints=ints))
        outputs.append(helper.make_tensor_value_info("k", TensorProto.INT64, [len(ints)]))
    graph = helper.make_graph(nodes, "const", [_value("x", [n])], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
