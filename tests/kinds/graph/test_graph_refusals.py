"""Models the graph view refuses for a reason of their own: an ONNX model too large for the
page or of IR version 0 is answered with that reason alone (no Paddle retry, no "neither
... nor"), and a model file larger than an upload may be is refused before it is read."""

from __future__ import annotations

import tracemalloc

import pytest
from onnx import TensorProto, helper

import visualdl.sources.paddle as paddle_source
from tests.helpers import onnx_models
from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl.kinds.graph import parse
from visualdl.kinds.graph.errors import ModelError, ModelRefused
from visualdl.kinds.graph.parse import MAX_FILE_BYTES, MAX_NODES, read_model_file
from visualdl.kinds.graph.store import ModelStore

TOO_LARGE = f"model too large for the graph view: read {MAX_NODES + 1:,}+ nodes"


def _too_large() -> bytes:
    """One Identity more than the view opens."""
    node = helper.make_node("Identity", ["x"], ["y"], name="id")
    graph = helper.make_graph([], "big",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    graph.node.extend([node] * (MAX_NODES + 1))
    model = helper.make_model(graph, opset_imports=onnx_models.OPSET)
    model.ir_version = 8
    return model.SerializeToString()


def _ir0() -> bytes:
    model = onnx_models.residual_cnn(blocks=1)
    model.ir_version = 0
    return model.SerializeToString()


@pytest.fixture(scope="module")
def big() -> bytes:
    return _too_large()


def _never(data: bytes) -> bytes:
    raise AssertionError("an ONNX model was retried as a Paddle program")


@pytest.fixture
def no_paddle(monkeypatch):
    """Fail the test if the Paddle converter is tried."""
    monkeypatch.setattr(paddle_source, "to_onnx", _never)


@pytest.mark.parametrize("name", ["big.onnx", "model.pdmodel"])
def test_too_large_onnx_is_refused_as_such(tmp_path, big, name, monkeypatch):
    """Whatever the name (a Paddle name tries Paddle first), the answer is the ONNX refusal."""
    path = tmp_path / name
    path.write_bytes(big)
    if name == "big.onnx":
        monkeypatch.setattr(paddle_source, "to_onnx", _never)
    store = ModelStore([path])
    with pytest.raises(ModelRefused) as err:
        store.document("file:0")
    assert str(err.value).startswith(f"{name}: {TOO_LARGE} and {MAX_NODES + 1:,}+ node inputs")
    assert "neither" not in str(err.value) and "Paddle" not in str(err.value)


def test_ir_version_0_is_refused_as_onnx(tmp_path, no_paddle):
    path = tmp_path / "ir0.onnx"
    path.write_bytes(_ir0())
    with pytest.raises(ModelRefused) as err:
        ModelStore([path]).document("file:0")
    assert str(err.value) == ("ir0.onnx: an ONNX model of IR version 0, refused: the graph "
                              "view opens IR version 1 and later (its writer left it unset)")


def test_uploads_get_the_onnx_refusal_too(big, no_paddle):
    store = ModelStore()
    for name, raw, needle in (("big.onnx", big, TOO_LARGE), ("ir0.onnx", _ir0(), "IR version 0")):
        with pytest.raises(ModelRefused) as err:
            store.add_upload(name, raw)
        assert str(err.value).startswith(f"{name}: ") and needle in str(err.value)
        assert "neither" not in str(err.value)


def test_a_file_that_is_no_onnx_model_still_falls_through_read_once(tmp_path, monkeypatch):
    path = tmp_path / "notes.onnx"
    path.write_text("these are my notes, not a model\n" * 10)
    reads = []
    real = parse.read_model_file
    monkeypatch.setattr(parse, "read_model_file", lambda p: reads.append(p) or real(p))
    with pytest.raises(ModelError) as err:
        ModelStore([path]).document("file:0")
    assert not isinstance(err.value, ModelRefused)
    assert str(err.value).startswith("notes.onnx: neither an ONNX model nor a Paddle program")
    assert "not a Paddle program" in str(err.value)
    assert reads == [str(path)]  # read once for both formats


# -- the file's size -------------------------------------------------------------------------
def test_the_file_limit_is_protobufs():
    """Files of up to 2 GiB - 1 may be ONNX models (a big one with embedded weights opens);
    protobuf decodes no message of 2 GiB or more."""
    assert MAX_FILE_BYTES == 2**31 - 1


def test_a_file_over_the_limit_is_refused_unread(tmp_path, no_paddle):
    path = tmp_path / "x.onnx"
    with open(path, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk
    store = ModelStore([path])
    tracemalloc.start()
    try:
        with pytest.raises(ModelRefused) as err:
            store.document("file:0")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20  # not read into memory
    assert str(err.value).startswith(
        f"x.onnx: the file is {MAX_FILE_BYTES + 1:,} bytes (2,048 MiB), refused unread: the graph "
        f"view reads model files of at most {MAX_FILE_BYTES:,} bytes (2,048 MiB), protobuf's limit")


def test_read_model_file_reads_up_to_its_limit(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(b"x" * 20)
    assert read_model_file(path, limit=20) == b"x" * 20
    with pytest.raises(ModelRefused, match=r"^m\.onnx: the file is 20 bytes .* at most 19 bytes"):
        read_model_file(path, limit=19)
    with pytest.raises(ModelError, match="model file not found"):
        read_model_file(tmp_path / "gone.onnx")


def test_the_api_answers_each_refusal_with_its_reason(tmp_path, big, monkeypatch):
    """``--model`` files over HTTP: a 422 whose message is the refusal itself."""
    monkeypatch.setattr(parse, "MAX_FILE_BYTES", 8 << 20)  # big.onnx is 4.4 MB
    paths = [tmp_path / "x.onnx", tmp_path / "big.onnx", tmp_path / "ir0.onnx"]
    with open(paths[0], "wb") as f:
        f.truncate(9 << 20)
    paths[1].write_bytes(big)
    paths[2].write_bytes(_ir0())
    expected = [f"x.onnx: the file is {9 << 20:,} bytes (9 MiB), refused unread",
                f"big.onnx: {TOO_LARGE}", "ir0.onnx: an ONNX model of IR version 0, refused"]
    with serving(models=paths) as handle:
        client = Client(handle.url)
        for i, needle in enumerate(expected):
            response = client.get("/api/graph/summary", params={"model": f"file:{i}"})
            assert response.status_code == 422
            assert response.json()["error"].startswith(needle)
        client.close()
