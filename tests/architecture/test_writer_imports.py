"""The writer imports no framework: writing every kind, graphs included (from a ModelProto,
bytes, a path and an object with ``to_onnx()``), leaves ``visualdl.framework`` unimported.
Run in a fresh interpreter, since other tests import the framework."""

from __future__ import annotations

import json
import subprocess
import sys

from visualdl.kinds import registry

SCRIPT = r"""
import json, sys
import numpy as np
import onnx
from onnx import helper, TensorProto
from visualdl import LogWriter, LogReader

def model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    return helper.make_model(graph)

class Net:  # what a framework model looks like to the writer
    def to_onnx(self, input_spec=None):
        assert input_spec == [1, 2]
        return model()

logdir, path = sys.argv[1], sys.argv[2]
onnx.save(model(), path)
with LogWriter(logdir=logdir + "/run") as w:
    w.add_scalar("s", 1.0, 0)
    w.add_scalar("system/host0/cpu/percent", 1.0, 0)
    w.add_scalars("m", {"a": 1.0, "b": 2.0}, 0)
    w.add_image("i", np.zeros((4, 4, 3), np.uint8), 0)
    w.add_audio("a", np.zeros(100, np.float32), 0)
    w.add_text("t", "hi", 0)
    w.add_histogram("h", np.arange(10.0), 0)
    w.add_pr_curve("pr", [0, 1], [0.2, 0.9], 0)
    w.add_roc_curve("roc", [0, 1], [0.2, 0.9], 0)
    w.add_embeddings("e", np.eye(3), step=0)
    w.add_hparams({"lr": 0.1}, ["s"])
    w.add_config({"model": {"depth": 2}})
    w.add_figure("f", {"data": [], "layout": {}}, 0)
    w.add_video("v", np.zeros((2, 4, 4, 3), np.uint8), 0)
    w.add_mesh("mesh", np.zeros((1, 3, 3)), 0, faces=[[[0, 1, 2]]])
    w.add_profile("worker0", {"traceEvents": [{"ph": "X", "name": "op", "ts": 0, "dur": 1}]}, 0)
    w.add_table("tab", {"n": [1, 2], "img": [np.zeros((2, 2), np.uint8)] * 2}, 0)
    w.add_tensor("ten", np.arange(3), 0)
    w.add_checkpoint("ckpt/step0", 0)
    w.add_resize(1, 0, 1)
    w.add_graph(model(), tag="proto")
    w.add_graph(model().SerializeToString(), tag="bytes")
    w.add_graph(path, tag="path")
    w.add_graph(Net(), tag="to_onnx", input_spec=[1, 2])
tags = LogReader(logdir).tags("run")
print(json.dumps({"framework": sorted(m for m in sys.modules if m.startswith("visualdl.framework")),
                  "tags": tags}))
"""


def test_writing_every_kind_imports_no_framework(tmp_path):
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "logs"),
                           str(tmp_path / "m.onnx")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["framework"] == []
    assert sorted(out["tags"]["graph"]) == ["bytes", "path", "proto", "to_onnx"]
    assert set(out["tags"]) == {k.name for k in registry.all_kinds() if not k.plugin_entry}
