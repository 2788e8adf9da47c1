"""Write the VisualDL 2.x graph fixture under ``tests/sources/vdl2/fixtures/graph/`` with VisualDL
2.5.3's own ``add_graph`` and PaddlePaddle.

Run it in the VisualDL 2.5.3 venv with PaddlePaddle CPU added (2.6.2 was used; VisualDL
2.5.3's ``add_graph`` needs Paddle to trace the model)::

    /work/main/.bench/venvs/visualdl-2.5.3/bin/pip install paddlepaddle==2.6.2
    /work/main/.bench/venvs/visualdl-2.5.3/bin/python tests/sources/vdl2/make_graph_fixture.py

``graph/cnn`` holds what one ``LogWriter`` session with an ``add_graph`` call leaves: the
graph file (renamed to a fixed time, ``vdlgraph.1700000000.log``: VisualDL names it by the
clock) and the writer's (empty) ``vdlrecords`` file. ``graph.json`` beside it holds what
the tests expect, taken from Paddle and from VisualDL's file: the model's layers by
VisualDL's scope names (``Net[model]/Sequential[features]/Conv2D[0]``), every operator's
name, type and scope, and the shapes of the input and output.

``pdmodel/net.pdmodel`` is the same model saved by ``paddle.jit.save`` (a static program, as
VisualDL 2.x also shows it); ``pdmodel.json`` lists its operators' types as Paddle loads them.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys

import numpy as np

np.float = float  # type: ignore[attr-defined]  # VisualDL 2.5.3 still uses it

import paddle  # noqa: E402
import paddle.nn as nn  # noqa: E402
import paddle.nn.functional as F  # noqa: E402
import visualdl  # noqa: E402
from visualdl import LogWriter  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "graph")
GRAPH_FILE = "vdlgraph.1700000000.log"


class Net(nn.Layer):
    """A small CNN: a Sequential of layers, a flatten and a Linear head (a hierarchy)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2D(1, 4, 3, padding=1), nn.BatchNorm2D(4),
                                      nn.ReLU(), nn.MaxPool2D(2))
        self.head = nn.Linear(4 * 4 * 4, 10)

    def forward(self, x):  # noqa: ANN001, ANN201
        x = self.features(x)
        x = paddle.flatten(x, 1)
        return F.softmax(self.head(x))


def main() -> int:
    assert visualdl.__version__ == "2.5.3", f"needs VisualDL 2.5.3, not {visualdl.__version__}"
    shutil.rmtree(OUT, ignore_errors=True)
    run = os.path.join(OUT, "cnn")
    paddle.seed(1)
    net = Net()
    net.eval()
    # VisualDL's scope names: the model is "Net[model]", each sublayer "Class[attribute]"
    layers = ["Net[model]"] + [
        "Net[model]/" + "/".join(f"{type(layer).__name__}[{part}]"
                                 for part, layer in zip(name.split("."), _chain(net, name)))
        for name, _ in net.named_sublayers()]
    with LogWriter(logdir=run, file_name="vdlrecords.1700000000.log") as w:
        w.add_graph(net, [paddle.static.InputSpec([-1, 1, 8, 8], "float32", name="image")])
    (written,) = glob.glob(os.path.join(run, "vdlgraph.*.log"))
    os.replace(written, os.path.join(run, GRAPH_FILE))
    with open(os.path.join(run, GRAPH_FILE), encoding="utf-8") as f:
        doc = json.load(f)
    ops = [{"name": n["name"].lstrip("/"), "type": n["type"],
            "scope": os.path.dirname(n["name"]).lstrip("/")}
           for n in doc["nodes"] if n["is_leaf_node"]]
    shapes = {v["name"]: v["shape"] for v in doc["vars"]}
    expected = {
        "writer": f"visualdl {visualdl.__version__}, paddlepaddle {paddle.__version__}",
        "file": f"cnn/{GRAPH_FILE}",
        "layers": layers,
        "ops": ops,
        "input": {"name": "image", "shape": shapes["image"], "dtype": "float32"},
        "output_shape": [-1, 10],
        "parameters": int(sum(int(np.prod(p.shape)) for p in net.parameters())),
    }
    with open(os.path.join(OUT, "graph.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1)
    _pdmodel()
    print(f"wrote {OUT}: {len(ops)} ops, {len(layers)} layers")
    return 0


def _pdmodel() -> None:
    """A fresh model (no VisualDL hooks, so no name scopes) saved as a static program."""
    out = os.path.join(HERE, "fixtures", "pdmodel")
    shutil.rmtree(out, ignore_errors=True)
    paddle.seed(1)
    net = Net()
    net.eval()
    spec = [paddle.static.InputSpec([-1, 1, 8, 8], "float32", name="image")]
    paddle.jit.save(paddle.jit.to_static(net, spec), os.path.join(out, "net"))
    for name in os.listdir(out):
        if not name.endswith(".pdmodel"):
            os.remove(os.path.join(out, name))  # the weights (.pdiparams) are not read
    paddle.enable_static()
    try:
        with open(os.path.join(out, "net.pdmodel"), "rb") as f:
            program = paddle.static.Program.parse_from_string(f.read())
    finally:
        paddle.disable_static()
    block = program.global_block()
    expected = {
        "writer": f"paddlepaddle {paddle.__version__} paddle.jit.save",
        "ops": [op.type for op in block.ops],
        "input": {"name": "image", "shape": list(block.var("image").shape)},
    }
    with open(os.path.join(HERE, "fixtures", "pdmodel.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1)


def _chain(net: nn.Layer, dotted: str) -> list:
    """The layers along a dotted sublayer name (``features.0`` -> [features, features[0]])."""
    out, layer = [], net
    for part in dotted.split("."):
        layer = getattr(layer, part) if hasattr(layer, part) else layer[int(part)]
        out.append(layer)
    return out


if __name__ == "__main__":
    sys.exit(main())
