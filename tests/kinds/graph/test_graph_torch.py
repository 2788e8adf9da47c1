"""Graphs exported by PyTorch (optional: skipped when torch is not installed).

The models are defined here: a ResNet-style CNN with residual blocks and a small
transformer encoder, exported with the TorchScript exporter (``dynamo=False``), whose
``/module/submodule/Op`` node names give the name-scope hierarchy.
"""

from __future__ import annotations

import warnings

import onnx
import pytest

from visualdl.kinds.graph import GraphDocument, Options, parse_path

from .geometry import edges_through_boxes, overlapping_boxes


def _models(torch):
    """The two models, built from the ``torch`` fixture's module."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, c: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(x + self.bn2(self.conv2(y)))

    class ResNetish(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
            self.layer1 = nn.Sequential(Block(8), Block(8))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(8, 10)

        def forward(self, x):
            return self.fc(torch.flatten(self.pool(self.layer1(self.stem(x))), 1))

    class Encoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Linear(16, 32)
            layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(32, 3)

        def forward(self, x):
            return self.head(self.encoder(self.embed(x)).mean(dim=1))

    return ResNetish, Encoder


def _export(torch, module, example, path) -> onnx.ModelProto:
    module.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (example,), str(path), dynamo=False, opset_version=17,
                          input_names=["x"], output_names=["y"])
    onnx.checker.check_model(str(path))
    return onnx.load(str(path))


@pytest.fixture(scope="module")
def exported(tmp_path_factory, torch):
    root = tmp_path_factory.mktemp("torch")
    torch.manual_seed(0)
    ResNetish, Encoder = _models(torch)
    cnn = _export(torch, ResNetish(), torch.randn(1, 3, 16, 16), root / "resnet.onnx")
    enc = _export(torch, Encoder(), torch.randn(2, 5, 16), root / "encoder.onnx")
    return {"resnet": (root / "resnet.onnx", cnn), "encoder": (root / "encoder.onnx", enc)}


@pytest.mark.parametrize("name", ["resnet", "encoder"])
def test_torch_export_counts_and_layout(exported, name):
    path, proto = exported[name]
    doc = GraphDocument(parse_path(path))
    assert doc.model.op_count == len(proto.graph.node)
    consumed = sum(len({i for i in n.input if i and i not in {t.name for t in proto.graph.initializer}})
                   for n in proto.graph.node)
    assert len(doc.model.edges) == consumed + len(proto.graph.output)
    view = doc.view(doc.expanded_set("all"), Options())
    assert len([n for n in view["nodes"] if n["type"] == "op"]) == len(proto.graph.node)
    assert overlapping_boxes(view) == []
    assert edges_through_boxes(view) == []
    assert doc.model.outputs[0]["dtype"] == "float32"


def test_resnet_hierarchy_follows_modules(exported):
    path, _ = exported["resnet"]
    doc = GraphDocument(parse_path(path))
    groups = doc.hierarchy.groups
    assert {"stem", "layer1", "layer1/layer1.0", "layer1/layer1.1"} <= set(groups)
    assert groups["layer1/layer1.0"].ops == groups["layer1/layer1.1"].ops >= 5
    conv = doc.search("conv1")["matches"][0]
    assert conv["op_type"] == "Conv"
    fc = next(n for n in doc.model.nodes if n.op_type == "Gemm")
    assert doc.model.tensor(fc.scope, fc.outputs[0]).shape == [1, 10]
    collapsed = doc.view(frozenset(), Options())
    assert {"g:stem", "g:layer1"} <= {n["id"] for n in collapsed["nodes"]}


def test_encoder_hierarchy_has_layers(exported):
    path, _ = exported["encoder"]
    doc = GraphDocument(parse_path(path))
    paths = set(doc.hierarchy.groups)
    assert any(p.endswith("layers.0") for p in paths) and any(p.endswith("layers.1") for p in paths)
    assert doc.search("MatMul")["total"] >= 4
