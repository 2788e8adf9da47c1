"""A model's fixed layout parts (local edges, members, ports, boxes, tensor types) built
between requests once it is opened, so that an expand finds them ready; and layouts made
of half pixels, composed without rounding."""

from __future__ import annotations

import onnx
import pytest

from tests.helpers import onnx_models
from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl.kinds.graph import GraphDocument, Options, layout, parse_model
from visualdl.kinds.graph import view as view_module
from visualdl.kinds.graph.api import store
from visualdl.kinds.graph.late_parts import TensorTable
from visualdl.kinds.graph import store as store_module
from visualdl.kinds.graph.store import ModelStore

WAIT = 60  # seconds: far more than preparing these models takes


def _picture(view: dict) -> dict:
    return {k: view[k] for k in ("width", "height", "expanded", "nodes", "frames", "edges")}


@pytest.fixture(scope="module")
def chain_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("prepare") / "chain.onnx"
    onnx.save(onnx_models.residual_chain(3000, blocks_per_stage=20), path)
    return path


def test_a_prepared_model_expands_without_building_its_fixed_parts(monkeypatch):
    model = onnx_models.residual_chain(3000, blocks_per_stage=20)
    prepared, fresh = GraphDocument(parse_model(model)), GraphDocument(parse_model(model))
    steps = sum(1 for _ in prepared.prepare())
    assert prepared.prepared.is_set() and steps > 1  # it hands the interpreter back
    built = {"structures": 0, "node boxes": 0, "tensor types": 0}

    def counting(name, real):
        def count(*args, **kwargs):
            built[name] += 1
            return real(*args, **kwargs)
        return count

    monkeypatch.setattr(layout, "_structure", counting("structures", layout._structure))
    monkeypatch.setattr(layout, "node_box", counting("node boxes", layout.node_box))
    monkeypatch.setattr(TensorTable, "_decode", counting("tensor types", TensorTable._decode))
    monkeypatch.setattr(view_module, "item_id", counting("ids", view_module.item_id))
    monkeypatch.setattr(view_module, "format_shape", counting("labels", view_module.format_shape))
    built.update(ids=0, labels=0)
    assert prepared.layouter.pending(prepared.everything, Options()) == 0  # "all" laid out
    assert fresh.layouter.pending(fresh.everything, Options()) == len(fresh.hierarchy.groups)
    everything = prepared.view(prepared.expanded_set("all"), Options())
    assert built == {"structures": 0, "node boxes": 0, "tensor types": 0, "ids": 0, "labels": 0}
    assert everything["stats"]["groups_laid_out"] == 0  # it only composed
    assert len(everything["nodes"]) > 3000
    # the same picture as a model that built them on the way
    assert _picture(everything) == _picture(fresh.view(fresh.expanded_set("all"), Options()))
    assert built["structures"] == len(fresh.hierarchy.groups)
    assert built["node boxes"] == len(fresh.model.nodes)
    assert built["ids"] == len(everything["nodes"])  # every box's, each made once
    # one label a distinct type, not one an edge
    assert built["labels"] == len({(e["dtype"], str(e["shape"])) for e in everything["edges"]})


@pytest.mark.parametrize("make", [onnx_models.control_flow, onnx_models.residual_cnn,
                                  lambda: onnx_models.transformer(300)])
def test_preparing_changes_no_view(make):
    """Subgraph bodies (their own scopes), weights shown as boxes, a transformer: every
    state draws the same whether its parts were prepared or built on the way."""
    model = make()
    prepared, fresh = GraphDocument(parse_model(model)), GraphDocument(parse_model(model))
    for _ in prepared.prepare():
        pass
    for spec in ("initial", "all", "none"):
        for options in (Options(), Options("LR", attrs=True, inits=True)):
            assert _picture(prepared.view(prepared.expanded_set(spec), options)) == \
                _picture(fresh.view(fresh.expanded_set(spec), options))


def test_a_model_is_prepared_only_while_no_graph_request_is_answered(chain_file):
    store = ModelStore([chain_file])
    store.request_started()
    doc = store.document("file:0")
    assert not doc.prepared.wait(1.0), "prepared while a request was being answered"
    store.request_started()
    store.request_ended()
    assert not doc.prepared.wait(0.5)  # one request still open
    store.request_ended()
    assert doc.prepared.wait(WAIT)


def test_preparation_leaves_the_page_time_to_draw_an_answer(chain_file, monkeypatch):
    """After a graph request is answered the page parses and draws it; preparing waits that
    long too, so it does not take the CPU from the drawing on a small machine."""
    monkeypatch.setattr(store_module, "QUIET_AFTER_ANSWER", 1.5)
    models = ModelStore([chain_file])
    models.request_started()
    doc = models.document("file:0")
    models.request_ended()
    assert not doc.prepared.wait(1.0), "prepared while the page was drawing the answer"
    assert doc.prepared.wait(WAIT)


def test_every_graph_request_ends_its_count_even_when_refused(chain_file):
    """Served for real: answered, refused and failed requests all end what they began (a
    count left open would keep the model from ever being prepared)."""
    with serving(models=[chain_file, chain_file]) as server:  # file:1 opened by its request
        client = Client(server.url)
        first = client.get("/api/graph/view", params={"model": "file:1"})
        assert first.status_code == 200 and first.json()["nodes"]
        assert client.get("/api/graph/view", params={"model": "file:9"}).status_code == 404
        assert client.get("/api/graph/view", params={"model": "file:1",
                                                     "direction": "up"}).status_code == 400
        assert client.post("/api/graph/view", data=b"{", headers={
            "Content-Type": "application/json"}).status_code == 400
        with server.app.app_context():
            doc = store().document("file:1")
        assert doc.prepared.wait(WAIT), "a request's count was left open"


def test_layouts_are_made_of_half_pixels():
    """Boxes, frames and every route point sit on a 0.5 px grid, whatever the nesting and
    direction: composing them adds exact binary fractions (no rounding per point)."""
    doc = GraphDocument(parse_model(onnx_models.transformer(600)))
    for direction in ("TB", "LR"):
        view = doc.view(doc.expanded_set("all"), Options(direction=direction))
        values = [view["width"], view["height"]]
        for item in view["nodes"] + view["frames"]:
            values += [item["x"], item["y"], item["w"], item["h"]]
        for edge in view["edges"]:
            assert len(edge["points"]) >= 4 and len(edge["points"]) % 2 == 0
            values += edge["points"]
        assert len(values) > 5000
        assert [v for v in values if v * 2 != int(v * 2)] == []


def test_values_of_one_type_decode_once_into_their_own_infos():
    """A type met before is taken from its bytes: equal values, each its own shape list."""
    from onnx import TensorProto, helper

    values = [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, "N"]),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, "N"]),
              helper.make_tensor_value_info("c", TensorProto.INT64, [3]),
              helper.make_tensor_value_info("d", TensorProto.FLOAT, None),
              helper.make_tensor_sequence_value_info("e", TensorProto.FLOAT, None)]
    graph = helper.make_graph([], "g", [], [], value_info=values)
    table = TensorTable({0: graph})
    a, b, c, d, e = (table.get((0, name)) for name in "abcde")
    assert (a.dtype, a.shape) == (b.dtype, b.shape) == ("float32", [1, "N"])
    assert a is not b and a.shape is not b.shape
    a.shape.append(7)  # a caller's change to one value's shape reaches no other value
    assert b.shape == [1, "N"] and table.get((0, "b")).shape == [1, "N"]
    assert (c.dtype, c.shape) == ("int64", [3])
    assert (d.dtype, d.shape) == ("float32", None)
    assert (e.dtype, e.shape) == ("sequence<float32>", None)
