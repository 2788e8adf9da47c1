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
