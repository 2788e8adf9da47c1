"""The graph API against a real server on 127.0.0.1: --model files, a graph logged with
add_graph, uploads (good and bad), and every query."""

from __future__ import annotations

import onnx
import pytest

from tests.helpers import onnx_models

from .geometry import edges_through_boxes, overlapping_boxes


def _ids(client) -> dict[str, str]:
    body = client.get("/api/graph/models").json()
    return {m["name"]: m["id"] for m in body["models"]}


def test_models_lists_files_and_logged_graphs(client):
    body = client.get("/api/graph/models").json()
    assert body["has_files"] is True
    files = [m for m in body["models"] if m["source"] == "file"]
    assert [m["name"] for m in files] == ["cnn.onnx", "control.onnx", "external.onnx",
                                          "chain.onnx"]
    logged = [m for m in body["models"] if m["source"] == "log"]
    assert len(logged) == 1
    assert (logged[0]["run"], logged[0]["tag"], logged[0]["step"]) == ("train", "model", 0)


def test_summary_counts_match_the_file(client, models):
    proto = onnx.load(str(models.cnn))
    body = client.get("/api/graph/summary", params={"model": "file:0"}).json()
    assert body["counts"]["nodes"] == len(proto.graph.node)
    assert body["counts"]["edges"] == onnx_models.expected_edges(proto)
    assert body["counts"]["initializers"] == len(proto.graph.initializer)
    assert body["inputs"] == [{"name": "input", "dtype": "float32", "shape": ["batch", 3, 16, 16]}]
    assert body["outputs"] == [{"name": "logits", "dtype": "float32", "shape": ["batch", 10]}]
    assert body["op_types"] == {"Conv": 5, "Relu": 5, "Add": 2, "GlobalAveragePool": 1,
                                "Flatten": 1, "Gemm": 1}
    assert body["metadata"]["producer"] == "visualdl-tests"


def test_logged_graph_is_served(client):
    logged = next(m for m in client.get("/api/graph/models").json()["models"]
                  if m["source"] == "log")
    body = client.get("/api/graph/summary", params={"model": logged["id"]}).json()
    proto = onnx_models.residual_cnn(blocks=3)
    assert body["counts"]["nodes"] == len(proto.graph.node) == 20
    assert body["counts"]["edges"] == onnx_models.expected_edges(proto)
    tags = client.get("/api/tags", params={"kind": "graph"}).json()
    assert tags["runs"] == {"train": ["model"]}


def test_view_all_expanded_has_every_node_and_edge(client, models):
    proto = onnx.load(str(models.cnn))
    view = client.post("/api/graph/view", json={"model": "file:0", "expanded": "all"}).json()
    ops = [n for n in view["nodes"] if n["type"] == "op"]
    assert len(ops) == len(proto.graph.node)
    assert len(view["edges"]) == onnx_models.expected_edges(proto)
    assert {f["path"] for f in view["frames"]} == {"stem", "layer1", "layer1/block0",
                                                  "layer1/block1", "head"}
    edge = next(e for e in view["edges"] if e["tensor"] == "stem_conv")
    assert edge["shape"] == ["batch", 8, 16, 16] and edge["label"] == "batch×8×16×16"
    assert overlapping_boxes(view) == [] and edges_through_boxes(view) == []
    for box in view["nodes"]:
        assert 0 <= box["x"] and box["x"] + box["w"] <= view["width"] + 0.5
        assert 0 <= box["y"] and box["y"] + box["h"] <= view["height"] + 0.5


def test_collapse_and_expand_round_trip(client):
    collapsed = client.get("/api/graph/view", params={"model": "file:0", "expand": "none"}).json()
    assert {n["id"] for n in collapsed["nodes"]} == {"n0", "n16", "g:stem", "g:layer1", "g:head"}
    assert len(collapsed["edges"]) == 4
    one = client.post("/api/graph/view",
                      json={"model": "file:0", "expanded": ["layer1"]}).json()
    ids = {n["id"] for n in one["nodes"]}
    assert {"g:layer1/block0", "g:layer1/block1"} <= ids and "g:layer1" not in ids
    assert [f["path"] for f in one["frames"]] == ["layer1"]
    # expanding a group whose parent is collapsed changes nothing
    hidden = client.post("/api/graph/view",
                         json={"model": "file:0", "expanded": ["layer1/block0"]}).json()
    assert hidden["expanded"] == []
    back = client.post("/api/graph/view", json={"model": "file:0", "expanded": []}).json()
    assert back["nodes"] == collapsed["nodes"] and back["edges"] == collapsed["edges"]


def test_horizontal_layout_swaps_axes(client):
    tb = client.post("/api/graph/view", json={"model": "file:0", "expanded": "all"}).json()
    lr = client.post("/api/graph/view",
                     json={"model": "file:0", "expanded": "all", "direction": "LR"}).json()
    assert tb["height"] > tb["width"] and lr["width"] > lr["height"]
    assert overlapping_boxes(lr) == [] and edges_through_boxes(lr) == []


def test_attributes_and_weights_grow_the_boxes(client):
    plain = client.post("/api/graph/view", json={"model": "file:0", "expanded": "all"}).json()
    rich = client.post("/api/graph/view", json={"model": "file:0", "expanded": "all",
                                                "attrs": True, "inits": True}).json()
    conv_plain = next(n for n in plain["nodes"] if n["name"] == "/stem/conv/Conv")
    conv_rich = next(n for n in rich["nodes"] if n["name"] == "/stem/conv/Conv")
    assert conv_plain["lines"] == []
    assert conv_rich["lines"] == [["stem.conv.weight", "⟨8×3×3×3⟩"], ["pads", "[1, 1, 1, 1]"]]
    assert conv_rich["h"] > conv_plain["h"]


def test_node_details_and_tensor_values(client):
    view = client.post("/api/graph/view", json={"model": "file:0", "expanded": "all"}).json()
    gemm = next(n for n in view["nodes"] if n["title"] == "Gemm")
    node = client.get("/api/graph/node", params={"model": "file:0", "id": gemm["id"]}).json()
    assert node["op_type"] == "Gemm" and node["ancestors"] == ["head"]
    assert [a["name"] for a in node["attributes"]] == ["transB"]
    assert [i["name"] for i in node["inputs"]] == ["flat", "fc.weight", "fc.bias"]
    assert node["inputs"][1]["initializer"]["shape"] == [10, 8]
    assert node["outputs"][0]["consumers"] == ["n16"]  # the graph output
    values = client.get("/api/graph/tensor", params={"model": "file:0", "name": "fc.bias"}).json()
    assert len(values["values"]) == 10 and values["shape"] == [10]
    group = client.get("/api/graph/node", params={"model": "file:0", "id": "g:layer1"}).json()
    assert group["ops"] == 10 and group["op_types"] == {"Conv": 4, "Relu": 4, "Add": 2}


def test_external_data_values_come_from_the_model_folder(client):
    ext = _ids(client)["external.onnx"]
    values = client.get("/api/graph/tensor",
                        params={"model": ext, "name": "dense.weight", "limit": 3}).json()
    assert values["external"] is True and values["shape"] == [64, 32]
    assert values["values"] == pytest.approx([0.0, 0.01, 0.02])


def test_subgraph_model_over_http(client):
    cf = _ids(client)["control.onnx"]
    summary = client.get("/api/graph/summary", params={"model": cf}).json()
    assert summary["counts"]["nodes"] == 10 and summary["counts"]["subgraphs"] == 3
    view = client.post("/api/graph/view", json={"model": cf, "expanded": "all"}).json()
    assert len([n for n in view["nodes"] if n["type"] == "op"]) == 10
    frames = {f["path"]: f for f in view["frames"]}
    # the then-branch holds one scope only, so the two levels show as one frame
    assert frames["branch/If/then_branch/then"]["label"] == "then_branch/then"
    assert frames["loop/Loop/body"]["ops"] == 2


def test_search(client):
    body = client.get("/api/graph/search", params={"model": "file:0", "q": "gemm"}).json()
    assert body["total"] == 1 and body["matches"][0]["ancestors"] == ["head"]
    body = client.get("/api/graph/search", params={"model": "file:0", "q": "b1_out"}).json()
    assert {m["op_type"] for m in body["matches"]} == {"Relu", "GlobalAveragePool"}


def test_large_model_opens_collapsed(client):
    chain = _ids(client)["chain.onnx"]
    summary = client.get("/api/graph/summary", params={"model": chain}).json()
    assert summary["counts"]["nodes"] == 1000
    view = client.get("/api/graph/view", params={"model": chain}).json()
    assert len(view["nodes"]) <= 600
    assert sorted(view["expanded"]) == summary["initial_expanded"]


def test_upload_good_model(client, models):
    raw = models.control.read_bytes()
    response = client.post("/api/graph/upload", files={"file": ("mine.onnx", raw)})
    assert response.status_code == 201
    body = response.json()
    assert body["model"]["source"] == "upload" and body["model"]["name"] == "mine.onnx"
    assert body["summary"]["counts"]["nodes"] == 10
    assert body["model"]["id"] in {m["id"] for m in client.get("/api/graph/models").json()["models"]}
    raw_body = client.post("/api/graph/upload", data=models.cnn.read_bytes(),
                           params={"name": "../../etc/x.onnx"},
                           headers={"Content-Type": "application/octet-stream"})
    assert raw_body.status_code == 201 and raw_body.json()["model"]["name"] == "x.onnx"
    # curl --data-binary @model.onnx: the raw body, labelled a url-encoded form
    curl_like = client.post("/api/graph/upload", data=models.cnn.read_bytes(),
                            params={"name": "curl.onnx"},
                            headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert curl_like.status_code == 201, curl_like.text
    assert curl_like.json()["model"]["name"] == "curl.onnx"
    assert curl_like.json()["summary"]["counts"] == raw_body.json()["summary"]["counts"]


@pytest.mark.parametrize("payload, needle", [
    (b"", "empty"),
    (b"GIF89a not a model at all", "not an ONNX model"),
    (b"\x08\x07", "no graph"),
    (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "not an ONNX model"),
])
def test_upload_bad_file_is_a_clear_400(client, payload, needle):
    response = client.post("/api/graph/upload", files={"file": ("bad.onnx", payload)})
    assert response.status_code == 400
    assert needle in response.json()["error"]


def test_upload_truncated_model_is_a_400(client, models):
    raw = models.cnn.read_bytes()[:-500]
    response = client.post("/api/graph/upload", files={"file": ("cut.onnx", raw)})
    assert response.status_code == 400 and "ONNX" in response.json()["error"]


def test_upload_without_file_field(client):
    response = client.post("/api/graph/upload", files={"other": ("x", b"abc")})
    assert response.status_code == 400 and "'file'" in response.json()["error"]


@pytest.mark.parametrize("path, params, status", [
    ("/api/graph/summary", {"model": "file:99"}, 404),
    ("/api/graph/summary", {"model": "../../etc/passwd"}, 404),
    ("/api/graph/summary", {}, 400),
    ("/api/graph/view", {"model": "file:0", "direction": "diagonal"}, 400),
    ("/api/graph/view", {"model": "file:0", "attrs": "maybe"}, 400),
    ("/api/graph/view", {"model": "file:0", "expand": "some"}, 400),
    ("/api/graph/node", {"model": "file:0", "id": "n99999"}, 404),
    ("/api/graph/node", {"model": "file:0", "id": "g:nope"}, 404),
    ("/api/graph/node", {"model": "file:0", "id": "<script>"}, 404),
    ("/api/graph/tensor", {"model": "file:0", "name": "missing"}, 404),
    ("/api/graph/search", {"model": "file:0", "q": "x", "limit": "0"}, 400),
])
def test_bad_requests_are_json_errors(client, path, params, status):
    response = client.get(path, params=params)
    assert response.status_code == status
    assert isinstance(response.json()["error"], str)


def test_bad_view_bodies(client):
    for body in ([1, 2], {"model": "file:0", "expanded": [1, 2]},
                 {"model": "file:0", "expanded": "x"}, {"model": 5}):
        response = client.post("/api/graph/view", json=body)
        assert response.status_code == 400, body
        assert "error" in response.json()


@pytest.mark.parametrize("path, params", [
    ("/api/graph/summary", {"model": "file:0"}),
    ("/api/graph/hierarchy", {"model": "file:0"}),
    ("/api/graph/view", {"model": "file:0"}),
    ("/api/graph/node", {"model": "file:0", "id": "n0"}),
    ("/api/graph/node", {"model": "file:0", "id": "g:stem"}),
    ("/api/graph/search", {"model": "file:0", "q": "conv"}),
    ("/api/graph/tensor", {"model": "file:0", "name": "stem.conv.weight"}),
])
def test_graph_answers_revalidate_with_304(client, path, params):
    first = client.get(path, params=params)
    assert first.status_code == 200, first.text
    etag = first.headers["ETag"]
    again = client.get(path, params=params, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["ETag"] == etag
    other = client.get(path, params=params, headers={"If-None-Match": 'W/"something-else"'})
    assert other.status_code == 200
    fresh, old = other.json(), first.json()
    fresh.pop("stats", None), old.pop("stats", None)  # the view's timings differ per request
    assert fresh == old
