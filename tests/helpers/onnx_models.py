"""ONNX models built with onnx.helper for the graph tests (and the benchmark): nothing is
downloaded. Each builder returns a model that passes onnx.checker."""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = [helper.make_opsetid("", 17)]


def _init(name: str, shape: tuple[int, ...], seed: int = 0) -> onnx.TensorProto:
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def _finish(graph: onnx.GraphProto, producer: str = "visualdl-tests") -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=OPSET, producer_name=producer,
                              producer_version="1.0")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def residual_cnn(blocks: int = 2, channels: int = 8) -> onnx.ModelProto:
    """A small ResNet-shaped CNN with PyTorch-style scoped names.

    stem (Conv, Relu) -> ``blocks`` residual blocks (Conv, Relu, Conv, Add, Relu) -> head
    (GlobalAveragePool, Flatten, Gemm).
    """
    nodes, inits = [], []
    c = channels
    inits.append(_init("stem.conv.weight", (c, 3, 3, 3), 1))
    nodes.append(helper.make_node("Conv", ["input", "stem.conv.weight"], ["stem_conv"],
                                  name="/stem/conv/Conv", pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["stem_conv"], ["stem_out"], name="/stem/relu/Relu"))
    x = "stem_out"
    for b in range(blocks):
        p = f"/layer1/block{b}"
        w1, w2 = f"layer1.{b}.conv1.weight", f"layer1.{b}.conv2.weight"
        inits += [_init(w1, (c, c, 3, 3), 10 + b), _init(w2, (c, c, 3, 3), 20 + b)]
        nodes += [
            helper.make_node("Conv", [x, w1], [f"b{b}_c1"], name=f"{p}/conv1/Conv",
                             pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
            helper.make_node("Relu", [f"b{b}_c1"], [f"b{b}_r1"], name=f"{p}/relu/Relu"),
            helper.make_node("Conv", [f"b{b}_r1", w2], [f"b{b}_c2"], name=f"{p}/conv2/Conv",
                             pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
            helper.make_node("Add", [f"b{b}_c2", x], [f"b{b}_add"], name=f"{p}/Add"),
            helper.make_node("Relu", [f"b{b}_add"], [f"b{b}_out"], name=f"{p}/relu_1/Relu"),
        ]
        x = f"b{b}_out"
    inits += [_init("fc.weight", (10, c), 99), _init("fc.bias", (10,), 98)]
    nodes += [
        helper.make_node("GlobalAveragePool", [x], ["pooled"], name="/head/pool/GlobalAveragePool"),
        helper.make_node("Flatten", ["pooled"], ["flat"], name="/head/Flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"],
                         name="/head/fc/Gemm", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "residual_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 16, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])],
        initializer=inits,
    )
    return _finish(graph)


def control_flow() -> onnx.ModelProto:
    """An If whose branches use an outer value, followed by a Loop with a body graph."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    then_out = helper.make_tensor_value_info("then_y", TensorProto.FLOAT, [2, 3])
    else_out = helper.make_tensor_value_info("else_y", TensorProto.FLOAT, [2, 3])
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["h"], ["t1"], name="then/relu"),
         helper.make_node("Neg", ["t1"], ["then_y"], name="then/neg")],
        "then_body", [], [then_out])
    else_g = helper.make_graph(
        [helper.make_node("Sigmoid", ["h"], ["else_y"], name="else/sigmoid")],
        "else_body", [], [else_out])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body/cond"),
         helper.make_node("Add", ["acc_in", "y"], ["acc_out"], name="body/add")],
        "loop_body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2, 3])])
    nodes = [
        helper.make_node("Abs", ["x"], ["h"], name="pre/abs"),
        helper.make_node("If", ["cond"], ["y"], name="branch/If",
                         then_branch=then_g, else_branch=else_g),
        helper.make_node("Constant", [], ["trip"], name="loop/trip",
                         value=helper.make_tensor("trip_v", TensorProto.INT64, [], [3])),
        helper.make_node("Loop", ["trip", "cond", "x"], ["acc"], name="loop/Loop", body=body),
        helper.make_node("Mul", ["acc", "y"], ["out"], name="post/mul"),
    ]
    graph = helper.make_graph(nodes, "control_flow", [x, cond],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3])])
    return _finish(graph)


def external_data(folder: str, rows: int = 64, cols: int = 32) -> str:
    """A MatMul + Add model whose weight lives in an external data file; returns the path."""
    weight = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) / 100.0
    bias = np.ones(cols, dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "dense.weight"], ["mm"], name="/dense/MatMul"),
         helper.make_node("Add", ["mm", "dense.bias"], ["y"], name="/dense/Add")],
        "external",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, cols])],
        initializer=[numpy_helper.from_array(weight, "dense.weight"),
                     numpy_helper.from_array(bias, "dense.bias")],
    )
    model = _finish(graph)
    path = os.path.join(folder, "external.onnx")
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="external.onnx.data", size_threshold=1024)
    onnx.checker.check_model(path)
    return path


def residual_chain(n_nodes: int, blocks_per_stage: int = 50) -> onnx.ModelProto:
    """A long residual chain of about ``n_nodes`` ops, scoped ``stageS/blockB/op``.

    Each block is MatMul -> Add(bias) -> Relu -> MatMul -> Add(residual) (5 ops), so
    the graph has long skip edges and two levels of name scopes, like a deep ResNet.
    """
    width = 4
    blocks = max(1, n_nodes // 5)
    inits = [numpy_helper.from_array(np.eye(width, dtype=np.float32), "w"),
             numpy_helper.from_array(np.zeros(width, dtype=np.float32), "b")]
    nodes, x = [], "input"
    for i in range(blocks):
        p = f"stage{i // blocks_per_stage}/block{i % blocks_per_stage}"
        nodes += [
            helper.make_node("MatMul", [x, "w"], [f"{p}/mm1"], name=f"{p}/fc1/MatMul"),
            helper.make_node("Add", [f"{p}/mm1", "b"], [f"{p}/a1"], name=f"{p}/fc1/Add"),
            helper.make_node("Relu", [f"{p}/a1"], [f"{p}/r"], name=f"{p}/act/Relu"),
            helper.make_node("MatMul", [f"{p}/r", "w"], [f"{p}/mm2"], name=f"{p}/fc2/MatMul"),
            helper.make_node("Add", [f"{p}/mm2", x], [f"{p}/out"], name=f"{p}/residual/Add"),
        ]
        x = f"{p}/out"
    graph = helper.make_graph(
        nodes, f"chain{n_nodes}",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, width])],
        initializer=inits)
    return _finish(graph, producer="visualdl-bench")


def expected_edges(model: onnx.ModelProto) -> int:
    """Edges of a model without subgraphs, counted straight from the file: one per
    (producer, consumer, tensor) for non-weight inputs, plus one per graph output."""
    g = model.graph
    weights = {t.name for t in g.initializer}
    producers = {v.name: ("input", v.name) for v in g.input if v.name not in weights}
    for i, node in enumerate(g.node):
        for out in node.output:
            producers[out] = ("node", i)
    edges = set()
    for i, node in enumerate(g.node):
        for name in node.input:
            if name and name in producers and producers[name] != ("node", i):
                edges.add((producers[name], i, name))
    return len(edges) + sum(1 for o in g.output if o.name in producers)


def transformer(n_nodes: int, hidden: int = 8, heads: int = 2) -> onnx.ModelProto:
    """A BERT-like encoder exported op by op, about ``n_nodes`` ops, named by scope as
    PyTorch's exporter names them (``/encoder/layer.3/attention/self/query/MatMul``).

    Embeddings (Gather, Add, LayerNormalization), then layers of self-attention (query,
    key and value MatMul + Add, each head split by Reshape with its shape computed by
    Shape/Gather/Unsqueeze/Concat, Transpose, MatMul, Div, Softmax, MatMul, merge), an
    output dense + residual + LayerNormalization, and an MLP with an Erf GELU: 61 ops a
    layer. Each layer has its own weights (``encoder.layer.3.attention.self.query.weight``).
    """
    head = hidden // heads
    per_layer = 61
    layers = max(1, (n_nodes - 6) // per_layer)
    inits = [
        _init("embeddings.word_embeddings.weight", (32, hidden), 1),
        _init("embeddings.position_embeddings.weight", (16, hidden), 2),
        numpy_helper.from_array(np.ones(hidden, np.float32), "ln.weight"),
        numpy_helper.from_array(np.zeros(hidden, np.float32), "ln.bias"),
        numpy_helper.from_array(np.array(0, np.int64), "c0"),
        numpy_helper.from_array(np.array(1, np.int64), "c1"),
        numpy_helper.from_array(np.array([heads], np.int64), "c_heads"),
        numpy_helper.from_array(np.array([head], np.int64), "c_head"),
        numpy_helper.from_array(np.array([hidden], np.int64), "c_hidden"),
        numpy_helper.from_array(np.array([0], np.int64), "c_axes0"),
        numpy_helper.from_array(np.array(float(np.sqrt(head)), np.float32), "c_scale"),
        numpy_helper.from_array(np.array(np.sqrt(2.0), np.float32), "c_sqrt2"),
        numpy_helper.from_array(np.array(1.0, np.float32), "c_one"),
        numpy_helper.from_array(np.array(0.5, np.float32), "c_half"),
    ]
    nodes: list[onnx.NodeProto] = []
    used: dict[str, int] = {}

    def op(op_type: str, scope: str, inputs: list[str], **attrs) -> str:
        name = f"{scope}/{op_type}"
        count = used[name] = used.get(name, -1) + 1
        if count:  # the exporter's numbering of repeated ops in one scope
            name = f"{name}_{count}"
        out = f"{name}_output_0"
        nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        return out

    def dense(x: str, scope: str, weight: str, n_in: int, n_out: int, seed: int) -> str:
        inits.extend([_init(f"{weight}.weight", (n_in, n_out), seed),
                      numpy_helper.from_array(np.zeros(n_out, np.float32), f"{weight}.bias")])
        return op("Add", scope, [op("MatMul", scope, [x, f"{weight}.weight"]), f"{weight}.bias"])

    def shape_of(x: str, scope: str, tail: list[str]) -> str:
        """The exporter's dynamic shape: [batch, seq] of x followed by ``tail``."""
        shape = op("Shape", scope, [x])
        dims = [op("Unsqueeze", scope, [op("Gather", scope, [shape, c], axis=0), "c_axes0"])
                for c in ("c0", "c1")]
        return op("Concat", scope, dims + tail, axis=0)

    def split(x: str, scope: str, perm: list[int]) -> str:
        return op("Transpose", scope, [op("Reshape", scope, [x, shape_of(x, scope, ["c_heads", "c_head"])])],
                  perm=perm)

    e = "/embeddings"
    x = op("Add", e, [op("Gather", f"{e}/word_embeddings", ["embeddings.word_embeddings.weight", "input_ids"]),
                      op("Gather", f"{e}/position_embeddings", ["embeddings.position_embeddings.weight",
                                                                 "position_ids"])])
    x = op("LayerNormalization", f"{e}/LayerNorm", [x, "ln.weight", "ln.bias"], axis=-1)
    for i in range(layers):
        p = f"/encoder/layer.{i}"
        w = f"encoder.layer.{i}"
        a = f"{p}/attention/self"
        q = split(dense(x, f"{a}/query", f"{w}.attention.self.query", hidden, hidden, 3 * i), f"{a}", [0, 2, 1, 3])
        k = split(dense(x, f"{a}/key", f"{w}.attention.self.key", hidden, hidden, 3 * i + 1), f"{a}", [0, 2, 3, 1])
        v = split(dense(x, f"{a}/value", f"{w}.attention.self.value", hidden, hidden, 3 * i + 2), f"{a}",
                  [0, 2, 1, 3])
        scores = op("Softmax", a, [op("Div", a, [op("MatMul", a, [q, k]), "c_scale"])], axis=-1)
        ctx = op("Transpose", a, [op("MatMul", a, [scores, v])], perm=[0, 2, 1, 3])
        ctx = op("Reshape", a, [ctx, shape_of(ctx, a, ["c_hidden"])])
        o = f"{p}/attention/output"
        h = dense(ctx, f"{o}/dense", f"{w}.attention.output.dense", hidden, hidden, 7 * i)
        x = op("LayerNormalization", f"{o}/LayerNorm", [op("Add", o, [h, x]), "ln.weight", "ln.bias"],
               axis=-1)
        m = f"{p}/intermediate"
        h = dense(x, f"{m}/dense", f"{w}.intermediate.dense", hidden, 4 * hidden, 11 * i)
        g = f"{m}/intermediate_act_fn"
        erf = op("Add", g, [op("Erf", g, [op("Div", g, [h, "c_sqrt2"])]), "c_one"])
        h = op("Mul", g, [op("Mul", g, [h, erf]), "c_half"])
        o = f"{p}/output"
        h = dense(h, f"{o}/dense", f"{w}.output.dense", 4 * hidden, hidden, 13 * i)
        x = op("LayerNormalization", f"{o}/LayerNorm", [op("Add", o, [h, x]), "ln.weight", "ln.bias"],
               axis=-1)
    graph = helper.make_graph(
        nodes, f"transformer{n_nodes}",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
         helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", "sequence", hidden])],
        initializer=inits)
    return _finish(graph, producer="pytorch")


def values_model() -> onnx.ModelProto:
    """One node of each FLOPs formula, with shapes small enough to count by hand (see
    tests/kinds/graph/test_node_values.py), a weight two nodes share, a symbolic batch, and
    a custom op whose output shape no inference knows."""
    f = TensorProto.FLOAT
    inits = [_init("w", (4, 3), 1), _init("b", (3,), 2), _init("s", (1,), 3),
             _init("gemm.w", (5, 3), 4), _init("gemm.c", (5,), 5),
             _init("ln.scale", (3,), 6), _init("ln.bias", (3,), 7),
             _init("up.w", (2, 4, 2, 2), 8), _init("up.b", (4,), 9),
             _init("conv.w", (2, 1, 3, 3), 10)]
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["mm"], name="/dense/MatMul"),
        helper.make_node("Add", ["mm", "b"], ["h"], name="/dense/Add"),
        helper.make_node("Softmax", ["h"], ["p"], name="/head/Softmax", axis=-1),
        helper.make_node("Mul", ["p", "s"], ["p2"], name="/head/Mul"),
        helper.make_node("Mul", ["p2", "s"], ["p3"], name="/head/Mul_1"),
        helper.make_node("LayerNormalization", ["p3", "ln.scale", "ln.bias"], ["n"],
                         name="/norm/LayerNormalization", axis=-1),
        helper.make_node("Gemm", ["n", "gemm.w", "gemm.c"], ["g"], name="/gemm/Gemm", transB=1),
        helper.make_node("ConvTranspose", ["img", "up.w", "up.b"], ["up"],
                         name="/up/ConvTranspose", kernel_shape=[2, 2]),
        helper.make_node("MaxPool", ["up"], ["pool"], name="/pool/MaxPool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["pool", "shape"], ["flat"], name="/flat/Reshape"),
        helper.make_node("Conv", ["batch_img", "conv.w"], ["conv"], name="/conv/Conv",
                         kernel_shape=[3, 3]),
        helper.make_node("Mystery", ["g"], ["m"], name="/custom/Mystery", domain="custom.ops"),
        helper.make_node("Relu", ["m"], ["r"], name="/custom/Relu"),
    ]
    inits.append(numpy_helper.from_array(np.array([1, 16], dtype=np.int64), "shape"))
    graph = helper.make_graph(
        nodes, "values",
        [helper.make_tensor_value_info("x", f, [2, 4]),
         helper.make_tensor_value_info("img", f, [1, 2, 3, 3]),
         helper.make_tensor_value_info("batch_img", f, ["N", 1, 5, 5])],
        [helper.make_tensor_value_info("flat", f, [1, 16]),
         helper.make_tensor_value_info("conv", f, ["N", 2, 3, 3]),
         helper.make_tensor_value_info("r", f, ["?"])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=OPSET + [helper.make_opsetid("custom.ops", 1)],
                              producer_name="visualdl-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def served_model_summary(path: str) -> tuple[str, dict]:
    """``visualdl --model PATH`` served on 127.0.0.1: (the name the model is listed under,
    its ``/api/graph/summary``), checked to answer 200."""
    from tests.helpers.http import Client
    from tests.helpers.server import serving

    with serving([], models=[path]) as handle:
        client = Client(handle.url)
        [listed] = client.json("/api/graph/models")["models"]
        summary = client.get("/api/graph/summary", params={"model": "file:0"})
        assert summary.status_code == 200, summary.text
        return listed["name"], summary.json()
