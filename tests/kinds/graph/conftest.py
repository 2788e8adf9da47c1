"""Fixtures for the graph tests: real ONNX files (checked with onnx.checker), a logdir with a
graph recorded by LogWriter.add_graph, and a real server on both."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import onnx
import pytest

from tests.helpers import onnx_models
from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogWriter


@dataclass
class Models:
    cnn: Path
    control: Path
    external: Path
    chain: Path


@pytest.fixture(scope="session")
def models(tmp_path_factory) -> Models:
    root = tmp_path_factory.mktemp("models")
    cnn, control, chain = root / "cnn.onnx", root / "control.onnx", root / "chain.onnx"
    onnx.save(onnx_models.residual_cnn(), cnn)
    onnx.save(onnx_models.control_flow(), control)
    onnx.save(onnx_models.residual_chain(1000), chain)
    ext_dir = root / "ext"
    ext_dir.mkdir()
    external = Path(onnx_models.external_data(str(ext_dir)))
    for path in (cnn, control, chain, external):
        onnx.checker.check_model(str(path))
    return Models(cnn, control, external, chain)


@pytest.fixture(scope="session")
def graph_logdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("graphlogs")
    with LogWriter(logdir=str(root / "train")) as writer:
        writer.add_graph(onnx_models.residual_cnn(blocks=3), step=0, tag="model")
        writer.add_scalar("loss", 1.0, step=0)
    return root


@pytest.fixture(scope="module")
def server(models, graph_logdir):
    """The logdir and the four model files (file:0 .. file:3, in that order)."""
    with serving(graph_logdir, models=[models.cnn, models.control, models.external,
                                       models.chain]) as handle:
        yield handle


@pytest.fixture(scope="module")
def client(server) -> Client:
    return Client(server.url)


@pytest.fixture(scope="module")
def mlp_diff_server(tmp_path_factory):
    """A server of two small MLPs (``--model``): ``file:0`` before, ``file:1`` after an edit
    (a Tanh added, a Relu dropped, a weight scaled by 1.5): a diff with every kind of change."""
    from .diff_models import mlp

    root = tmp_path_factory.mktemp("mlpdiff")
    paths = [root / "before.onnx", root / "after.onnx"]
    onnx.save(mlp(), paths[0])
    onnx.save(mlp(extra_tanh=True, drop_relu=True, w2_scale=1.5), paths[1])
    with serving(models=paths) as handle:
        yield handle
