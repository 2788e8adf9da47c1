"""Shape inference and the checker in a worker process give the same model as run inline,
and a worker that cannot run changes nothing either (the work is then done in-process)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.helpers import onnx_models
from visualdl.kinds.graph import inference, parse
from visualdl.kinds.graph.errors import ModelError
from visualdl.kinds.graph.parse import load_model, open_model, parse_model
from visualdl.kinds.graph.tensor_values import attribute_value


def _custom_op_model() -> onnx.ModelProto:
    """Inference fails (no opset for the custom domain), the checker too; a name listed
    twice in value_info, the second time untyped; a weight also listed as an input."""
    w = numpy_helper.from_array(np.ones((3, 3), np.float32), "w")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["z"], name="/a/b/MatMul"),
        helper.make_node("Custom", ["z"], ["u"], name="/c/op", domain="my.domain", f=1.5,
                         ints=list(range(40))),
        helper.make_node("Relu", ["u"], ["y"], name="/c/Relu", doc_string="d" * 3000),
    ]
    graph = helper.make_graph(
        nodes, "custom",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[w],
        value_info=[helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n", 3]),
                    onnx.ValueInfoProto(name="z")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 3
    return model


def _snapshot(model: onnx.ModelProto, base_dir: str | None = None,
              job: inference.Inference | None = None) -> dict:
    m = parse_model(model, base_dir, job)
    return {
        "nodes": [(n.id, n.role, n.name, n.op_type, n.domain, n.scope, n.group, n.label,
                   n.category, n.inputs, n.outputs, n.attributes, n.subgraphs, n.doc)
                  for n in m.nodes],
        "edges": [tuple(e) for e in m.edges],
        "tensors": {k: (v.dtype, v.shape) for k, v in m.tensors.items()},
        "initializers": {k: v.summary for k, v in m.initializers.items()},
        "inputs": m.inputs, "outputs": m.outputs, "warnings": m.warnings,
        "metadata": m.metadata,
    }


MODELS = {
    "cnn": lambda tmp: (onnx_models.residual_cnn(), None),
    "control_flow": lambda tmp: (onnx_models.control_flow(), None),
    "transformer": lambda tmp: (onnx_models.transformer(300), None),
    "custom_op": lambda tmp: (_custom_op_model(), None),
    "external": lambda tmp: load_model(onnx_models.external_data(str(tmp))),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_worker_and_inline_give_the_same_model(name, tmp_path, monkeypatch):
    model, base_dir = MODELS[name](tmp_path)
    monkeypatch.setattr(inference, "WORKER_FROM", 10**9)
    inline = _snapshot(model, base_dir)
    monkeypatch.setattr(inference, "WORKER_FROM", 0)
    assert inference.Inference(model).in_worker  # the worker really runs here
    assert _snapshot(model, base_dir) == inline
    assert inline["tensors"], "shape inference typed nothing"


def test_inline_answers_match_what_onnx_says():
    """The warnings are onnx's own, and every attribute reads as before."""
    model = _custom_op_model()
    snap = _snapshot(model)
    assert snap["warnings"][0].startswith("shape inference failed: [TypeInferenceError]")
    assert snap["warnings"][1].startswith("onnx.checker: ")
    assert snap["tensors"][(0, "z")] == ("float32", ["n", 3])  # the typed listing wins
    assert [i["name"] for i in snap["inputs"]] == ["x"]  # the weight is no input
    custom = next(n for n in snap["nodes"] if n[3] == "Custom")
    assert custom[11] == [(a.name, *attribute_value(a)) for a in model.graph.node[1].attribute]
    assert snap["nodes"][-2][13] == "d" * 2000


def test_a_worker_that_cannot_run_changes_nothing(monkeypatch, tmp_path):
    model = onnx_models.transformer(300)
    monkeypatch.setattr(inference, "WORKER_FROM", 10**9)
    inline = _snapshot(model)
    monkeypatch.setattr(inference, "WORKER_FROM", 0)
    monkeypatch.setattr(inference, "_WORKER", str(tmp_path / "missing_worker.py"))
    job = inference.Inference(model)
    assert job.in_worker  # started, but it exits at once without an answer
    assert job.warnings() == [] and len(job.typed().graph.value_info) > 0
    assert _snapshot(model) == inline


def test_open_model_feeds_the_worker_the_bytes_read(tmp_path, monkeypatch):
    """Inference started by open_model (on the file's bytes, before the parse) gives the
    model that inference on the decoded model gives."""
    model = onnx_models.transformer(300)
    path = tmp_path / "t.onnx"
    onnx.save(model, path)
    monkeypatch.setattr(inference, "WORKER_FROM", 10**9)
    inline = _snapshot(model)
    monkeypatch.setattr(inference, "WORKER_FROM", 0)
    decoded, base_dir, job = open_model(path)
    assert job.in_worker and base_dir == str(tmp_path)
    early = _snapshot(decoded, base_dir, job)
    assert early == inline
    assert len(early["tensors"]) == len(inline["tensors"]) > 0


def test_a_model_refused_after_inference_started_ends_its_worker(monkeypatch):
    started = []
    real_init = inference.Inference.__init__

    def spy(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        started.append(self)

    def refuse(model):
        raise ModelError("too large")

    monkeypatch.setattr(inference, "WORKER_FROM", 0)
    monkeypatch.setattr(inference.Inference, "__init__", spy)
    monkeypatch.setattr(parse, "check_size", refuse)
    with pytest.raises(ModelError, match="too large"):
        open_model(onnx_models.transformer(300).SerializeToString())
    assert len(started) == 1 and started[0].in_worker
    assert started[0].process.wait(timeout=30) != 0  # killed, not run to its end
