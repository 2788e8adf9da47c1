"""Paddle 3.x programs saved as PIR JSON (``inference.json``, ``model.json``, ``<stem>.json``)
open with ``--model`` and in a logdir, told by their first bytes; other JSON in a logdir is
left alone (no run, no refusal), and a JSON file given to ``--model`` that is no program
gets the error naming the formats accepted.

The programs are those of ``tests/sources/paddle/data`` (saved by PaddlePaddle 3.3.1, see
``make_pir_programs.py`` there); the reference is Paddle's own loading of each (``ref.json``:
the main block's operators as ``load_inference_model`` returned them).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections import Counter

import pytest

from tests.helpers.http import Client
from tests.helpers.onnx_models import served_model_summary
from tests.helpers.server import serving
from visualdl.reader import LogReader

onnx = pytest.importorskip("onnx")

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "sources", "paddle", "data")
PROGRAMS = {"mlp": "inference.json", "cnn": "net.json", "cf": "inference.json",
            "static": "model.json"}
_NOT_NODES = {"builtin.parameter", "pd_op.data", "pd_op.fetch", "builtin.combine",
              "builtin.split"}


def _path(folder: str) -> str:
    return os.path.join(DATA, folder, PROGRAMS[folder])


def _ref(folder: str) -> dict:
    with open(os.path.join(DATA, folder, "ref.json")) as f:
        return json.load(f)


def _ops(folder: str) -> list[str]:
    return [op["op"].split(".", 1)[1] for op in _ref(folder)["ops"]
            if op["op"] not in _NOT_NODES]


def _input_shape(folder: str) -> list:
    [data] = [op for op in _ref(folder)["ops"] if op["op"] == "pd_op.data"]
    return ["?" if d < 0 else d for d in data["outputs"][0][1]]


@pytest.mark.parametrize("folder", sorted(PROGRAMS))
def test_with_model_flag(folder):
    name, summary = served_model_summary(_path(folder))
    assert name == PROGRAMS[folder]
    assert summary["op_types"] == dict(Counter(_ops(folder)))
    [data] = summary["inputs"]
    assert data["name"] == _ref(folder)["feeds"][0]
    assert data["shape"] == _input_shape(folder)
    params = [op["outputs"][0][1] for op in _ref(folder)["ops"]
              if op["op"] == "builtin.parameter"]
    assert summary["counts"]["initializers"] == len(params)
    assert summary["counts"]["parameters"] == sum(math.prod(shape) for shape in params)


@pytest.mark.parametrize("folder", sorted(PROGRAMS))
def test_in_a_logdir_beside_other_json(tmp_path, folder):
    """The program is the run's graph; a profiler trace beside it is the run's profile, and
    settings, Paddle's reference and a non-program ``model.json`` elsewhere are no logs."""
    run = tmp_path / "export"
    run.mkdir()
    shutil.copy(_path(folder), run)
    shutil.copy(os.path.join(DATA, folder, "ref.json"), run)
    (run / "config.json").write_text('{"lr": 0.1, "layers": [4, 8]}')
    (run / "trace.json").write_text(json.dumps({"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "name": "aten::mm", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}))
    other = tmp_path / "hf"
    other.mkdir()
    (other / "model.json").write_text('{"architectures": ["BertModel"]}')
    reader = LogReader(str(tmp_path))
    assert reader.errors == 0
    assert reader.runs() == ["export"]
    assert reader.tags("export") == {"graph": [PROGRAMS[folder]], "profile": ["trace"]}
    assert all(not state.refused for state in reader.files())
    [ref] = reader.graphs("export", PROGRAMS[folder])
    model = onnx.load_model_from_string(reader.load(ref).onnx)
    assert [n.op_type for n in model.graph.node] == _ops(folder)
    assert model.producer_name == "PaddlePaddle PIR program (.json)"
    [image] = model.graph.input
    assert image.name == _ref(folder)["feeds"][0]
    assert image.type.tensor_type.elem_type == onnx.TensorProto.FLOAT


def test_a_broken_program_in_a_logdir_says_why(tmp_path):
    """A file that opens as PIR but is cut short is an error of its run once it has settled
    (a file being written is waited for), and loading it names the file and the fault."""
    run = tmp_path / "run"
    run.mkdir()
    with open(_path("mlp"), "rb") as f:
        raw = f.read()
    broken = run / "inference.json"
    broken.write_bytes(raw[: len(raw) // 2])
    old = time.time() - 60
    os.utime(broken, (old, old))
    reader = LogReader(str(tmp_path))
    assert reader.errors == 1
    [ref] = reader.graphs("run", "inference.json")
    with pytest.raises(ValueError) as err:
        reader.load(ref)
    assert str(err.value).startswith("inference.json: not a Paddle PIR program (.json): bad "
                                     "JSON at line 1 column ")


def test_json_that_is_no_program_names_the_formats(tmp_path):
    config = tmp_path / "model.json"
    config.write_text('{"architectures": ["BertModel"], "hidden_size": 768}')
    broken = tmp_path / "inference.json"
    doc = json.loads(open(_path("cnn"), "rb").read())
    doc["program"]["regions"][0]["blocks"][0]["ops"][9]["O"][0]["TT"]["#"] = "0.t_mystery"
    broken.write_text(json.dumps(doc))
    with serving([], models=[str(config), str(broken)]) as handle:
        client = Client(handle.url)
        r = client.get("/api/graph/summary", params={"model": "file:0"})
        assert r.status_code == 422
        error = r.json()["error"]
        assert error.startswith("model.json: neither an ONNX model nor a Paddle program "
                                "(__model__, *.pdmodel, PIR *.json): ")
        assert 'not a Paddle PIR program (.json): no "base_code" with "magic": "pir"' in error
        assert "not an ONNX model" in error
        r = client.get("/api/graph/summary", params={"model": "file:1"})
        assert r.status_code == 422
        error = r.json()["error"]
        assert error.startswith("inference.json: neither an ONNX model nor a Paddle program")
        assert ("not a Paddle PIR program (.json): operator 9 of the main block (1.conv2d) "
                "has a value of unknown type '0.t_mystery'") in error


def test_a_pir_program_opens_under_any_name(tmp_path):
    """``--model`` takes a program by its content, whatever its name."""
    renamed = tmp_path / "exported.bin"
    shutil.copy(_path("cf"), renamed)
    with serving([], models=[str(renamed)]) as handle:
        r = Client(handle.url).get("/api/graph/summary", params={"model": "file:0"})
        assert r.status_code == 200, r.text
        assert r.json()["op_types"] == dict(Counter(_ops("cf")))
