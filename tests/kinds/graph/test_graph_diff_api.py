"""GET /api/graph/diff against a real server on 127.0.0.1: two --model files, two steps of a
logged graph (our framework's exports), a file that is no model, unknown names."""

from __future__ import annotations

import onnx
import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogWriter

from .diff_models import cnn, framework_pair, mlp, mlp3, unrelated


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    root = tmp_path_factory.mktemp("diffmodels")
    before, after, bad = root / "before.onnx", root / "after.onnx", root / "bad.onnx"
    onnx.save(unrelated(), root / "unrelated.onnx")
    onnx.save(mlp(), before)
    onnx.save(mlp(names=("a", "b", "c"), alpha=0.2), after)
    bad.write_bytes(b"this is not a model")
    onnx.save(mlp3(), root / "mlp3.onnx")
    onnx.save(cnn(), root / "cnn.onnx")
    logdir = root / "logs"
    first, second = framework_pair()
    with LogWriter(logdir=str(logdir / "train")) as writer:
        writer.add_graph(first, step=0, tag="net")
        writer.add_graph(second, step=1, tag="net")
    models = [before, after, bad, root / "unrelated.onnx", root / "mlp3.onnx", root / "cnn.onnx"]
    with serving(logdir, models=models) as handle:
        yield Client(handle.url)


def test_two_files(client):
    response = client.get("/api/graph/diff", model="file:0", other="file:1")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["before"] == {"model": "file:0", "name": "before.onnx"}
    assert body["after"] == {"model": "file:1", "name": "after.onnx"}
    assert body["summary"]["counts"] == {"added": 0, "removed": 0, "changed": 1, "unchanged": 3,
                                         "matched_by_name": 1, "matched_by_structure": 3}
    assert body["summary"]["op_types"] == [
        {"op_type": "MatMul", "before": 2, "after": 2},
        {"op_type": "Identity", "before": 1, "after": 1},
        {"op_type": "LeakyRelu", "before": 0, "after": 1},
        {"op_type": "Relu", "before": 1, "after": 0}]
    assert body["changed"] == [{
        "before": {"id": "n2", "name": "act", "op_type": "Relu", "group": ""},
        "after": {"id": "n2", "name": "b", "op_type": "LeakyRelu", "group": ""},
        "matched_by": "structure",
        "changes": {"op_type": {"before": "Relu", "after": "LeakyRelu"},
                    "attributes": [{"name": "alpha", "before": None, "after": "0.2"}]}}]
    assert (body["added"], body["removed"], body["related"]) == ([], [], True)


def test_two_steps_of_a_logged_graph(client):
    response = client.get("/api/graph/diff", run="train", tag="net", step="0",
                          other_run="train", other_tag="net", other_step="1")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["before"]["name"] == "train / net @ 0"
    assert body["after"]["name"] == "train / net @ 1"
    assert [(c["before"]["name"], sorted(c["changes"])) for c in body["changed"]] == [
        ("2", ["initializers", "inputs", "outputs"])]
    assert body["summary"]["parameters"] == {"before": 67, "after": 85}


def test_latest_step_when_none_is_given(client):
    body = client.get("/api/graph/diff", run="train", tag="net", step="0",
                      other_run="train", other_tag="net").json()
    assert body["after"]["name"] == "train / net @ 1"


def test_download_is_an_attachment(client):
    response = client.get("/api/graph/diff", model="file:0", other="file:1", download="1")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == 'attachment; filename="graph-diff.json"'
    assert response.json()["summary"]["counts"]["changed"] == 1


def test_unrelated_models_are_said_so(client):
    response = client.get("/api/graph/diff", model="file:0", other="file:3")
    body = response.json()
    assert response.status_code == 200
    assert body["related"] is False
    assert body["message"] == ("no op of one model matched an op of the other: "
                               "these look like unrelated models")
    assert body["summary"]["counts"]["removed"] == 4 and body["summary"]["counts"]["added"] == 1
    assert body["summary"]["parameters"] == {"before": 20, "after": 0}


def test_models_sharing_only_input_and_output_names_are_unrelated(client):
    """An MLP and a CNN reading x and writing y: one Gemm pair, said to be unrelated, with
    what was matched of what."""
    body = client.get("/api/graph/diff", model="file:4", other="file:5").json()
    assert body["related"] is False
    assert body["message"].startswith("only 1 of 3 ops before and 7 after matched")
    assert [(c["before"]["name"], c["after"]["name"]) for c in body["changed"]] == [
        ("/fc2/Gemm", "/fc/Gemm")]


@pytest.mark.parametrize("params, status, needle", [
    ({"model": "file:0", "other": "file:2"}, 422, "other: "),
    ({"model": "file:2", "other": "file:0"}, 422, "model: "),
    ({"model": "file:0", "other": "file:9"}, 404, "other=file:9"),
    ({"model": "log:x", "other": "file:0"}, 404, "unknown model (model=log:x)"),
    ({"model": "file:0"}, 400, "missing parameter: other (a model id, or other_run and"),
    ({"other": "file:0"}, 400, "missing parameter: model (a model id, or run and tag"),
    ({"model": "file:0", "other_run": "train"}, 400, "missing parameter: other_tag"),
    ({"run": "train", "tag": "nope", "other": "file:0"}, 404,
     "no logged graph for run=train, tag=nope"),
    ({"run": "train", "tag": "net", "step": "7", "other": "file:0"}, 404,
     "no logged graph for run=train, tag=net, step=7"),
    ({"run": "train", "tag": "net", "step": "x", "other": "file:0"}, 400,
     "parameter step must be an integer"),
    ({"model": "file:0", "other": "file:1", "download": "maybe"}, 400, "download"),
])
def test_bad_requests_are_clear_4xx(client, params, status, needle):
    response = client.get("/api/graph/diff", params=params)
    assert response.status_code == status, response.text
    assert needle in response.json()["error"]


def test_revalidates_with_304(client):
    first = client.get("/api/graph/diff", model="file:0", other="file:1")
    again = client.get("/api/graph/diff", model="file:0", other="file:1",
                       headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
