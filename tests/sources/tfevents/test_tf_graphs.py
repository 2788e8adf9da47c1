"""TensorFlow and Keras graphs in full (issue 23, item 7), from files their own writers made.

The event files under ``data/graphs/`` were written by ``data/graphs/make_graphs.py`` with
tensorflow-cpu 2.21.0, keras 3.15.1 and tf_keras 2.21.0 (``python make_graphs.py keras3``,
``tfkeras``, ``lstm``, ``trace``):

* ``lstm``: tf_keras' TensorBoard callback (``write_graph=True``) on an LSTM model trained
  with ``steps_per_execution=2``: the GraphDef keeps most of its work in the function library
  (a ``While`` loop's body, the LSTM's ``tf.function``s and their gradients);
* ``keras3``, ``tfkeras``: the same two-input model (a shared layer, an encoder model used
  twice, a Sequential head) by Keras 3 and by tf_keras: the Keras model config TensorBoard
  draws as the "conceptual graph", in each dialect;
* ``trace``: ``tf.summary.trace_export`` of nested ``tf.function``s and a ``tf.cond``.

The reference readers are TensorBoard's own: its event loader and ``GraphDef`` /
``RunMetadata`` protos, and ``keras_util.keras_model_to_graph_def`` for the conceptual graph.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.http import client_of

DATA = Path(__file__).parent / "data" / "graphs"
LIBRARY = "__function_library__"

loader = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")
graph_pb2 = pytest.importorskip("tensorboard.compat.proto.graph_pb2")
config_pb2 = pytest.importorskip("tensorboard.compat.proto.config_pb2")


def _events(run: str) -> list:
    (path,) = (DATA / run).glob("events.out.tfevents.*")
    return list(loader.EventFileLoader(str(path)).Load())


def _summary(run: str, plugin: str) -> object:
    for event in _events(run):
        for value in event.summary.value:
            if value.metadata.plugin_data.plugin_name == plugin:
                return value
    raise AssertionError(f"no {plugin} summary in {run}")


def _graph_def(run: str) -> object:
    (event,) = [e for e in _events(run) if e.WhichOneof("what") == "graph_def"]
    return graph_pb2.GraphDef.FromString(event.graph_def)


def _library_names(graphs: list) -> set[str]:
    """What TensorBoard's graph dashboard draws: every node, and each library function's
    arguments, body and returns under ``__function_library__/<function>/``."""
    names = {n.name for g in graphs for n in g.node}
    for fn in {f.signature.name: f for g in graphs for f in g.library.function}.values():
        scope = f"{LIBRARY}/{fn.signature.name}/"
        names |= {scope + a.name for a in fn.signature.input_arg}
        names |= {scope + n.name for n in fn.node_def}
        names |= {scope + key for key in fn.ret}
    return names


@pytest.fixture(scope="module")
def server():
    with client_of(DATA) as client:
        yield client


def _model(server, run: str, tag: str) -> str:
    models = server.json("/api/graph/models")["models"]
    (found,) = [m["id"] for m in models if m.get("run") == run and m.get("tag") == tag]
    return found


def _names(server, model: str) -> set[str]:
    """Every op node the server has for ``model``: every name here holds a ``/``."""
    found = server.json("/api/graph/search", model=model, q="/", limit=5000)
    assert found["total"] <= 5000
    return {m["name"] for m in found["matches"] if m["role"] == "op"}


def _node(server, model: str, name: str) -> dict:
    hit = server.json("/api/graph/search", model=model, q=name, limit=5000)
    (node_id,) = [m["id"] for m in hit["matches"] if m["name"] == name and m["role"] == "op"]
    return server.json("/api/graph/node", model=model, id=node_id)


def test_function_library_bodies_are_shown_as_groups(server):
    graph = _graph_def("lstm")
    assert len(graph.library.function) > 5  # the case: most of the work is in functions
    in_library = sum(len(f.node_def) for f in graph.library.function)
    assert in_library > len(graph.node)
    model = _model(server, "lstm", "graph_def")
    summary = server.json("/api/graph/summary", model=model)
    expected = _library_names([graph])
    assert summary["counts"]["nodes"] == len(expected)
    groups = {g["path"]: g for g in server.json("/api/graph/hierarchy", model=model)["groups"]}
    for fn in graph.library.function:
        group = groups[f"{LIBRARY}/{fn.signature.name}"]
        body = len(fn.node_def) + len(fn.signature.input_arg) + len(fn.ret)
        assert group["ops"] == body, fn.signature.name
    # a call names its function: the loop's body is one click away
    (loop,) = [n for n in graph.node if n.op == "While"]
    node = _node(server, model, loop.name)
    attrs = {a["name"]: a["value"] for a in node["attributes"]}
    assert attrs["body"] == loop.attr["body"].func.name
    assert f"{LIBRARY}/{attrs['body']}" in groups


def test_function_body_edges_follow_output_args(server):
    """Inside a function an input reads ``node:output_arg:index``: the edge comes from that
    node, and a return reads the node its value comes from."""
    graph = _graph_def("lstm")
    fn = max(graph.library.function, key=lambda f: len(f.node_def))
    scope = f"{LIBRARY}/{fn.signature.name}/"
    model = _model(server, "lstm", "graph_def")
    ret_key = sorted(fn.ret)[0]
    producer = fn.ret[ret_key].split(":")[0]
    node = _node(server, model, scope + ret_key)
    (source,) = node["inputs"]
    assert source["name"].split(":")[0] == scope + producer


def _tb_conceptual(run: str) -> object:
    keras_util = pytest.importorskip("tensorboard.plugins.graph.keras_util")
    config = json.loads(_summary(run, "graph_keras_model").tensor.string_val[0])
    return keras_util.keras_model_to_graph_def(config)


@pytest.mark.parametrize("run", ["keras3", "tfkeras"])
def test_keras_conceptual_graph_has_tensorboards_layers(server, run):
    reference = _tb_conceptual(run)
    model = _model(server, run, "keras")
    assert _names(server, model) == {n.name for n in reference.node}
    groups = {g["path"] for g in server.json("/api/graph/hierarchy", model=model)["groups"]}
    assert {"siamese", "siamese/encoder", "siamese/head"} <= groups  # nested models as groups
    # the outputs' unknown shapes are the conversion's (a config holds none): no checker
    # warning about them on every Keras graph
    warnings = server.json("/api/graph/summary", model=model)["warnings"]
    assert not any("shape" in w for w in warnings), warnings


def _edges(server, model: str) -> set[tuple[str, str]]:
    out = set()
    for name in _names(server, model):
        node = _node(server, model, name)
        out |= {(i["name"], name) for i in node["inputs"]}
    return out


def test_keras3_conceptual_edges_equal_tensorboards(server):
    reference = _tb_conceptual("keras3")
    expected = {(i, n.name) for n in reference.node for i in n.input}
    assert _edges(server, _model(server, "keras3", "keras")) == expected


def test_both_keras_dialects_give_the_same_layer_graph(server):
    """tf_keras lists ``[layer, call, output, kwargs]``; TensorBoard reads no edge of this
    model from it, we read the same ones as from Keras 3's config."""
    rename = {"siamese/head/h1_input": "siamese/head/input_layer"}
    old = {(rename.get(a, a), rename.get(b, b))
           for a, b in _edges(server, _model(server, "tfkeras", "keras"))}
    assert old == _edges(server, _model(server, "keras3", "keras"))
    assert ("siamese/encoder/enc_dense", "siamese/concat") in old
    assert {("siamese/left", "siamese/shared"), ("siamese/right", "siamese/shared")} <= old


def test_trace_export_graph_is_shown(server):
    value = _summary("trace", "graph_run_metadata_graph")
    meta = config_pb2.RunMetadata.FromString(value.tensor.string_val[0])
    graphs = [fg.pre_optimization_graph for fg in meta.function_graphs]
    assert len(graphs) > 1
    model = _model(server, "trace", value.tag)
    many = {f"graph_{k}/{n.name}" for k, g in enumerate(graphs) for n in g.node}
    expected = many | (_library_names(graphs) - {n.name for g in graphs for n in g.node})
    assert _names(server, model) == expected


BAD_CONFIGS = {
    "not json": b"{'layers':",
    "no config": b'{"class_name": "Functional"}',
    "nested lists": b"[" * 5000 + b"]" * 5000,
    "layers not a list": b'{"class_name": "Functional", "config": {"layers": 3}}',
    "models nested 200 deep": ('{"class_name": "Functional", "config": {"layers": ['
                               * 200 + "]}}" * 200).encode(),
    "odd inbound nodes": b'{"class_name": "Functional", "config": {"layers": [{"name": "a",'
                         b' "class_name": "Dense", "inbound_nodes": [[["x", "y"]], 7, {"args":'
                         b' [{"class_name": "__keras_tensor__", "config": {"keras_history":'
                         b' ["a", null, 0]}}]}]}], "output_layers": [["zz", 0, 0]]}}',
}


def test_a_bad_keras_config_is_a_422_and_the_rest_is_served(tmp_path):
    """Hostile or broken model configs: each graph answers 422 with the reason (or draws
    what it can), the server stays up, and the good graph beside them is served."""
    from tests.sources.tfevents.tbwrite import EventWriter, pb

    for k, (name, config) in enumerate(BAD_CONFIGS.items()):
        with EventWriter(str(tmp_path / f"bad{k}")) as w:
            w.value(0, 1.0, tag="keras", tensor=pb.TensorProto(dtype=7, string_val=[config]),
                    metadata=pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(
                        plugin_name="graph_keras_model", content=b"1")))
    good = tmp_path / "good"
    good.mkdir()
    for path in (DATA / "keras3").iterdir():
        (good / path.name).write_bytes(path.read_bytes())
    with client_of(tmp_path) as client:
        models = {m["run"]: m["id"] for m in client.json("/api/graph/models")["models"]}
        for k, name in enumerate(BAD_CONFIGS):
            answer = client.get("/api/graph/summary", model=models[f"bad{k}"])
            assert answer.status_code in (200, 422), (name, answer.status_code, answer.text)
            if answer.status_code == 422:
                assert "Keras" in answer.json()["error"], name
        assert client.get("/api/graph/summary", model=models["bad0"]).status_code == 422
        assert client.json("/api/graph/summary", model=models["good"])["counts"]["nodes"] == 10


@pytest.mark.parametrize("run", ["keras3", "tfkeras"])
def test_keras_outputs_have_an_unknown_shape_not_a_scalar_one(run):
    """A Keras config holds no output shapes: the model's outputs say "unknown", where an
    empty shape ([]) read as a scalar on the output node."""
    import onnx

    from visualdl.sources.tfevents.keras_model import to_onnx

    config = _summary(run, "graph_keras_model").tensor.string_val[0]
    outputs = onnx.load_from_string(to_onnx(config)).graph.output
    assert outputs and all(not o.type.tensor_type.HasField("shape") for o in outputs)


def test_type_attributes_read_as_tensorflow_names(server):
    """A type attribute and a list of types (the loop's ``T``) read as TensorBoard shows
    them (``DT_FLOAT``; TensorFlow's own enum names, from its types.proto), not as numbers."""
    types_pb2 = pytest.importorskip("tensorboard.compat.proto.types_pb2")
    graph = _graph_def("lstm")
    model = _model(server, "lstm", "graph_def")
    (loop,) = [n for n in graph.node if n.op == "While"]
    attrs = {a["name"]: a["value"] for a in _node(server, model, loop.name)["attributes"]}
    expected = [types_pb2.DataType.Name(t) for t in loop.attr["T"].list.type]
    # a long list is shown shortened: its first items as names
    assert len(expected) > 6 and attrs["T"].startswith("[" + ", ".join(expected[:6]) + ", ")
    typed = next(n for n in graph.node if n.attr["dtype"].WhichOneof("value") == "type")
    attrs = {a["name"]: a["value"] for a in _node(server, model, typed.name)["attributes"]}
    assert attrs["dtype"] == types_pb2.DataType.Name(typed.attr["dtype"].type)
