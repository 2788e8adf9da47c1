"""Paddle programs under every name Paddle gives them, told by content, with ``--model``
and in a logdir; a file that is neither ONNX nor a Paddle program is refused with an error
naming the formats accepted.

``data/paddle/`` holds one small network saved by Paddle itself (the commands are in
``make_paddle_programs.py``): ``fluid18/__model__`` (PaddlePaddle 1.8.5's
``fluid.io.save_inference_model``), ``jit26/inference.pdmodel`` (2.6.2's ``paddle.jit.save``)
and ``static26/model.pdmodel`` (2.6.2's ``paddle.static.save_inference_model``). The
reference is Paddle's own loading of each (``ops.json``: the main block's operator types as
``load_inference_model`` returned them) and ``onnx`` (reading the converted graph).
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter

import pytest

from tests.helpers.http import Client
from tests.helpers.onnx_models import served_model_summary
from tests.helpers.server import serving
from visualdl.reader import LogReader

onnx = pytest.importorskip("onnx")

DATA = os.path.join(os.path.dirname(__file__), "data", "paddle")
PROGRAMS = {"fluid18": "__model__", "jit26": "inference.pdmodel", "static26": "model.pdmodel"}


def _ops(folder: str) -> list[str]:
    with open(os.path.join(DATA, folder, "ops.json")) as f:
        return [t for t in json.load(f) if t not in ("feed", "fetch")]


@pytest.mark.parametrize("folder", sorted(PROGRAMS))
def test_with_model_flag(folder):
    name, summary = served_model_summary(os.path.join(DATA, folder, PROGRAMS[folder]))
    assert name == PROGRAMS[folder]
    assert summary["op_types"] == dict(Counter(_ops(folder)))
    assert summary["inputs"][0]["shape"] == ["?", 1, 8, 8]


@pytest.mark.parametrize("folder", sorted(PROGRAMS))
def test_in_a_logdir(tmp_path, folder):
    run = tmp_path / "export"
    run.mkdir()
    shutil.copy(os.path.join(DATA, folder, PROGRAMS[folder]), run)
    reader = LogReader(str(tmp_path))
    assert reader.errors == 0
    assert reader.tags("export") == {"graph": [PROGRAMS[folder]]}
    [ref] = reader.graphs("export", PROGRAMS[folder])
    model = onnx.load_model_from_string(reader.load(ref).onnx)
    assert [n.op_type for n in model.graph.node] == _ops(folder)
    [image] = model.graph.input
    assert image.name == "image" and image.type.tensor_type.elem_type == onnx.TensorProto.FLOAT


def test_a_file_named_like_a_program_is_told_by_content(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "__model__").write_text("not a program\n")
    reader = LogReader(str(tmp_path))
    assert reader.runs() == []
    [state] = reader.files()
    assert state.refused.startswith("not a Paddle program (its first bytes")
    assert reader.errors == 1


def test_neither_onnx_nor_paddle_names_the_formats(tmp_path):
    junk = tmp_path / "weights.bin"
    junk.write_bytes(bytes(range(256)) * 4)
    named = tmp_path / "__model__"
    named.write_bytes(b"\x0a\x03abc")
    with serving([], models=[str(junk), str(named)]) as handle:
        client = Client(handle.url)
        for i, name in enumerate(["weights.bin", "__model__"]):
            r = client.get("/api/graph/summary", params={"model": f"file:{i}"})
            assert r.status_code == 422
            error = r.json()["error"]
            assert error.startswith(f"{name}: neither an ONNX model nor a Paddle program "
                                    "(__model__, *.pdmodel, PIR *.json): ")
            assert "not an ONNX model" in error and "not a Paddle program" in error
        up = client.post("/api/graph/upload", files={"file": ("x.dat", b"\xff" * 9)})
        assert up.status_code == 400
        assert "neither an ONNX model nor a Paddle program" in up.json()["error"]


def test_onnx_and_paddle_each_open_under_any_name(tmp_path):
    from tests.helpers.onnx_models import residual_cnn

    onnx_as_model = tmp_path / "model"
    onnx_as_model.write_bytes(residual_cnn(blocks=1).SerializeToString())
    program_as_bin = tmp_path / "program.bin"
    shutil.copy(os.path.join(DATA, "jit26", "inference.pdmodel"), program_as_bin)
    with serving([], models=[str(onnx_as_model), str(program_as_bin)]) as handle:
        client = Client(handle.url)
        assert client.get("/api/graph/summary", params={"model": "file:0"}).status_code == 200
        r = client.get("/api/graph/summary", params={"model": "file:1"})
        assert r.status_code == 200 and r.json()["op_types"] == dict(Counter(_ops("jit26")))


@pytest.mark.parametrize("folder", sorted(PROGRAMS))
def test_a_program_without_feed_ops_still_has_its_inputs(folder):
    """A program saved without ``feed``/``fetch`` ops (a hand-built or pruned program): its
    inputs are the data variables read before anything writes them, the ones its ``feed``
    ops named, where the graph had 0 inputs."""
    from visualdl.sources.paddle import to_onnx
    from visualdl.sources.paddle.paddle_program_pb2 import ProgramDesc

    with open(os.path.join(DATA, folder, PROGRAMS[folder]), "rb") as f:
        raw = f.read()
    program = ProgramDesc.FromString(raw)
    block = program.blocks[0]
    fed = [a for op in block.ops if op.type == "feed" for o in op.outputs for a in o.arguments]
    kept = [op for op in block.ops if op.type not in ("feed", "fetch")]
    del block.ops[:]
    block.ops.extend(kept)
    with_feed = onnx.load_from_string(to_onnx(raw)).graph
    without = onnx.load_from_string(to_onnx(program.SerializeToString())).graph
    assert fed and [i.name for i in with_feed.input] == fed
    assert [i.name for i in without.input] == fed
    assert [i.type for i in without.input] == [i.type for i in with_feed.input]
    assert {o.name for o in without.output} == {o.name for o in with_feed.output}
