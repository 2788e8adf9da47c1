"""VisualDL 2.x model graphs (``vdlgraph.*.log``, written by VisualDL 2.5.3's ``add_graph``
from a Paddle model: see make_graph_fixture.py) in the reader, the graph API, ``convert``
and Chromium; a damaged graph file is a clear 422 and the rest of its run still loads."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import onnx
import pytest

from tests.helpers.http import Client
from tests.helpers.pages import PageWatch
from tests.helpers.server import serving
from tests.sources.vdl2.common import FIXTURES, TRAIN, copy_logs, f32
from visualdl.convert import convert
from visualdl.reader import LogReader

GRAPH = FIXTURES / "graph"
EXPECTED = json.loads((GRAPH / "graph.json").read_text(encoding="utf-8"))
#: feed and fetch become the graph's input and output, not ops
OPS = [op for op in EXPECTED["ops"] if op["type"] not in ("feed", "fetch")]
OLD = 1_600_000_000  # an mtime long past: the file is settled, not being written


def _logdir(tmp_path: Path) -> Path:
    """The VisualDL 2.x fixture runs, the graph run beside them, and two broken graphs."""
    logdir = copy_logs(tmp_path / "logs")
    shutil.copytree(GRAPH / "cnn", logdir / "cnn")
    bad = logdir / "train" / "vdlgraph.1700000001.log"
    bad.write_bytes(b"\x00\x01 garbage, not JSON \xff" * 20)
    cut = logdir / "eval" / "vdlgraph.1700000002.log"
    cut.write_bytes((GRAPH / "cnn" / "vdlgraph.1700000000.log").read_bytes()[:5000])
    for path in (bad, cut):
        os.utime(path, (OLD, OLD))
    return logdir


def test_reader_indexes_the_graph_and_converts_it_to_onnx():
    reader = LogReader(str(GRAPH))
    assert reader.runs() == ["cnn"]
    assert reader.tags("cnn") == {"graph": ["vdlgraph"]}
    (ref,) = reader.graphs("cnn", "vdlgraph")
    assert ref.wall_time == 1_700_000_000 and ref.step == 0
    assert ref.size == (GRAPH / EXPECTED["file"]).stat().st_size
    model = onnx.load_model_from_string(reader.load(ref).onnx)
    assert [n.name for n in model.graph.node] == [op["name"] for op in OPS]
    assert [n.op_type for n in model.graph.node] == [op["type"] for op in OPS]
    assert {n.domain for n in model.graph.node} == {"paddle"}
    (inp,) = model.graph.input
    dims = [d.dim_value if d.HasField("dim_value") else -1
            for d in inp.type.tensor_type.shape.dim]
    assert inp.name == EXPECTED["input"]["name"] and dims == EXPECTED["input"]["shape"]
    weights = sum(int(abs(__import__("math").prod(t.dims))) for t in model.graph.initializer)
    assert weights == EXPECTED["parameters"] == 706
    assert reader.errors == 0


def test_a_run_of_only_a_graph_file_is_a_run(tmp_path):
    (tmp_path / "net").mkdir()
    shutil.copy(GRAPH / EXPECTED["file"], tmp_path / "net")
    reader = LogReader(str(tmp_path))
    assert reader.runs() == ["net"] and reader.tags("net") == {"graph": ["vdlgraph"]}


def test_a_graph_file_being_written_waits(tmp_path):
    """A file that does not parse yet and is fresh is not indexed (VisualDL writes it whole
    in one go); once settled, it is listed with what is wrong with it."""
    (tmp_path / "net").mkdir()
    path = tmp_path / "net" / "vdlgraph.1700000003.log"
    data = (GRAPH / EXPECTED["file"]).read_bytes()
    path.write_bytes(data[:3000])
    reader = LogReader(str(tmp_path))
    assert reader.runs() == [] and reader.errors == 0
    path.write_bytes(data)
    assert reader.reload() == 1
    assert reader.tags("net") == {"graph": ["vdlgraph"]}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    logdir = _logdir(tmp_path_factory.mktemp("vdl2graph"))
    with serving([str(logdir)]) as handle:
        client = Client(handle.url)
        try:
            yield client
        finally:
            client.close()


def _models(client: Client) -> dict[str, dict]:
    body = client.get("/api/graph/models").json()
    return {m["run"]: m for m in body["models"] if m["source"] == "log"}


def test_graph_api_shows_ops_layers_edges_and_shapes(served):
    models = _models(served)
    assert sorted(models) == ["cnn", "eval", "train"]
    cnn = models["cnn"]
    assert cnn["tag"] == "vdlgraph" and cnn["step"] == 0
    q = {"model": cnn["id"]}
    summary = served.get("/api/graph/summary", params=q).json()
    assert summary["op_types"] == dict(Counter(op["type"] for op in OPS))
    assert summary["counts"]["nodes"] == len(OPS)
    assert summary["counts"]["parameters"] == EXPECTED["parameters"]
    assert summary["inputs"] == [{"name": "image", "dtype": "float32", "shape": ["?", 1, 8, 8]}]
    assert summary["outputs"][0]["shape"] == ["?", 10]
    # weights without values (the file holds shapes only) are no checker warning
    assert not [w for w in summary["warnings"] if "onnx.checker" in w], summary["warnings"]
    # layers are groups: every group is one of the model's layers, and layers with more
    # than one op are groups (one-op layers are drawn as their op, as for any model)
    groups = {g["path"] for g in served.get("/api/graph/hierarchy", params=q).json()["groups"]}
    multi = {scope for scope, n in Counter(op["scope"] for op in OPS).items() if n > 1}
    assert multi <= groups <= set(EXPECTED["layers"])
    assert {"Net[model]", "Net[model]/Sequential[features]/Conv2D[0]",
            "Net[model]/Linear[head]"} <= groups
    view = served.get("/api/graph/view", params={**q, "expand": "all"}).json()
    ops = [n for n in view["nodes"] if n["type"] == "op"]
    assert sorted(n["name"] for n in ops) == sorted(op["name"] for op in OPS)
    ids = {n["name"].rsplit("/", 1)[-1]: n["id"] for n in view["nodes"]}
    edges = {(e["from"], e["to"]): e for e in view["edges"]}
    conv = (ids["image"], ids["conv2d_1"])
    assert conv in edges and edges[conv]["shape"] == ["?", 1, 8, 8]
    flat = edges[(ids["flatten_contiguous_range_0"], ids["matmul_v2_0"])]
    assert flat["shape"] == ["?", 64] and flat["tensor"] == "flatten_0.tmp_0"
    node = served.get("/api/graph/node", params={**q, "id": ids["conv2d_1"]}).json()
    assert node["op_type"] == "conv2d"
    assert node["group"] == "Net[model]/Sequential[features]/Conv2D[0]"
    attrs = {a["name"]: a["value"] for a in node["attributes"]}
    assert attrs["strides"] == "[1, 1]" and attrs["data_format"] == "NCHW"
    weight = next(i for i in node["inputs"] if i["name"] == "conv2d_0.w_0")
    assert weight["shape"] == [4, 1, 3, 3]
    found = served.get("/api/graph/search", params={**q, "q": "batch_norm"}).json()
    assert found  # searchable by op type


@pytest.mark.parametrize("run, why", [
    ("train", "not a VisualDL graph file: not UTF-8 text"),
    ("eval", "not a VisualDL graph file: bad JSON at line"),
])
def test_a_damaged_graph_is_a_clear_422_and_the_run_still_loads(served, run, why):
    model = _models(served)[run]
    for route in ("summary", "hierarchy", "view"):
        answer = served.get(f"/api/graph/{route}", params={"model": model["id"]})
        assert answer.status_code == 422, answer.text
        assert why in answer.json()["error"]
    body = served.get("/api/scalars", params={"run": "train", "tag": "loss"}).json()
    assert body["values"] == f32(TRAIN["scalars"]["loss"])
    assert served.get("/api/scalars", params={"run": "eval", "tag": "loss"}).status_code == 200


def test_convert_copies_the_graph_as_our_graph_kind(tmp_path):
    src = _logdir(tmp_path)
    summary = convert(src, tmp_path / "dst")
    text = str(summary)
    assert "cnn/vdlgraph.1700000000.log (VisualDL 2.x graph file, run cnn): graph 1" in text
    assert "train/vdlgraph.1700000001.log: skipped, not a VisualDL graph file" in text
    assert "eval/vdlgraph.1700000002.log: skipped, not a VisualDL graph file: bad JSON" in text
    dst = LogReader(str(tmp_path / "dst"))
    assert dst.errors == 0
    assert not list((tmp_path / "dst").rglob("vdlgraph*"))  # our record files, not theirs
    (ref,) = dst.graphs("cnn", "vdlgraph")
    model = onnx.load_model_from_string(dst.load(ref).onnx)
    assert [n.name for n in model.graph.node] == [op["name"] for op in OPS]
    assert dst.scalars("train", "loss").values.tolist() == f32(TRAIN["scalars"]["loss"])


@pytest.mark.browser
def test_graph_view_draws_it_in_chromium(browser, served, tmp_path):
    model = _models(served)["cnn"]
    view = served.get("/api/graph/view", params={"model": model["id"]}).json()
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors = PageWatch(page).errors
    try:
        page.goto(f"{served.url}/?tab=graph&graph_model={model['id']}")
        page.wait_for_function(
            "() => { const s = document.querySelector('svg.graph-svg');"
            " return s && s.dataset.state === 'ready'; }", timeout=20000)
        assert int(page.get_attribute("svg.graph-svg", "data-nodes")) == len(view["nodes"])
        page.click("#graph-fit")
        page.wait_for_function(
            f"() => document.querySelectorAll('svg.graph-svg .nodes g.node').length"
            f" === {len(view['nodes'])}")
        frames = page.locator("svg.graph-svg .frames g.frame").all_text_contents()
        assert any("Conv2D[0]" in f for f in frames) and any("Linear[head]" in f for f in frames)
        texts = page.locator("svg.graph-svg .nodes g.node").all_text_contents()
        assert any("conv2d" in t for t in texts) and any("matmul_v2" in t for t in texts)
        labels = page.locator("svg.graph-svg .edge-labels text").all_text_contents()
        assert "?×4×8×8" in labels
        page.screenshot(path=str(tmp_path / "vdlgraph.png"))
        assert errors == []
    finally:
        context.close()


# -- Paddle programs (.pdmodel), which VisualDL 2.x shows too -------------------------------
PDMODEL = FIXTURES / "pdmodel" / "net.pdmodel"
PD_EXPECTED = json.loads((FIXTURES / "pdmodel.json").read_text(encoding="utf-8"))
PD_OPS = [t for t in PD_EXPECTED["ops"] if t not in ("feed", "fetch")]


def test_pdmodel_schema_is_current(tmp_path):
    pytest.importorskip("grpc_tools")
    from tests.helpers.protos import assert_pb2_current
    from visualdl.sources.paddle import paddle_program_pb2

    proto = Path(paddle_program_pb2.__file__).with_name("paddle_program.proto")
    assert_pb2_current(proto, paddle_program_pb2, tmp_path)


def test_a_pdmodel_in_a_logdir_is_a_graph_of_its_run(tmp_path):
    (tmp_path / "export").mkdir()
    shutil.copy(PDMODEL, tmp_path / "export")
    reader = LogReader(str(tmp_path))
    assert reader.tags("export") == {"graph": ["net.pdmodel"]}
    (ref,) = reader.graphs("export", "net.pdmodel")
    model = onnx.load_model_from_string(reader.load(ref).onnx)
    assert [n.op_type for n in model.graph.node] == PD_OPS
    assert [n.name for n in model.graph.node][:2] == ["conv2d_0", "reshape2_0"]
    (inp,) = model.graph.input
    assert inp.name == "image" and inp.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert {t.name: list(t.dims) for t in model.graph.initializer}["linear_1.w_0"] == [64, 10]


def test_pdmodel_with_model_flag_and_upload(tmp_path):
    bad = tmp_path / "broken.pdmodel"
    bad.write_bytes(PDMODEL.read_bytes()[:777])
    with serving([], models=[str(PDMODEL), str(bad)]) as handle:
        client = Client(handle.url)
        try:
            listed = client.get("/api/graph/models").json()["models"]
            assert [m["name"] for m in listed] == ["net.pdmodel", "broken.pdmodel"]
            summary = client.get("/api/graph/summary", params={"model": "file:0"}).json()
            assert summary["op_types"] == dict(Counter(PD_OPS))
            assert summary["inputs"][0]["shape"] == ["?", 1, 8, 8]
            assert summary["counts"]["parameters"] == EXPECTED["parameters"]
            answer = client.get("/api/graph/summary", params={"model": "file:1"})
            assert answer.status_code == 422
            assert "not a Paddle program (.pdmodel)" in answer.json()["error"]
            up = client.post("/api/graph/upload", files={"file": ("net.pdmodel",
                                                                  PDMODEL.read_bytes())})
            assert up.status_code == 201, up.text
            assert up.json()["summary"]["counts"]["nodes"] == len(PD_OPS)
            junk = client.post("/api/graph/upload", files={"file": ("x.pdmodel", b"\xff" * 9)})
            assert junk.status_code == 400 and "not a Paddle program" in junk.json()["error"]
        finally:
            client.close()
