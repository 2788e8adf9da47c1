"""Fixtures for the graph tests: real ONNX files (checked with onnx.checker), a logdir with a
graph recorded by LogWriter.add_graph, and a real server on a free loopback port that the
fixture starts and stops by its handle."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import onnx
import pytest
import requests

from visualdl import LogWriter
from visualdl.server.api_common import provider
from visualdl.server.app import create_app

from . import onnx_models


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


@dataclass
class Server:
    url: str
    app: object
    _server: object
    _thread: threading.Thread

    def get(self, path: str, **kw) -> requests.Response:
        return requests.get(self.url + path, timeout=30, **kw)

    def post(self, path: str, **kw) -> requests.Response:
        return requests.post(self.url + path, timeout=60, **kw)

    def stop(self) -> None:
        self._server.close()
        self._thread.join(5)
        provider(self.app).stop(5)


def start(logdirs, model_paths) -> Server:
    """create_app + waitress on 127.0.0.1, port 0 (a free one), on a daemon thread."""
    from waitress.server import create_server

    app = create_app(logdirs, reload_interval=0.5, models=[str(p) for p in model_paths])
    server = create_server(app, host="127.0.0.1", port=0, threads=4, ident="visualdl-test")
    thread = threading.Thread(target=server.run, name="graph-test-server", daemon=True)
    thread.start()
    provider(app).wait_loaded(10)
    return Server(f"http://127.0.0.1:{server.effective_port}", app, server, thread)


@pytest.fixture(scope="module")
def server(models, graph_logdir):
    handle = start([str(graph_logdir)],
                   [models.cnn, models.control, models.external, models.chain])
    yield handle
    handle.stop()
