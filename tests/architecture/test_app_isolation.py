"""Two apps in one process share nothing: each serves its own logdir's blobs and caches.

Reproduces a bug of the old server, whose blob step maps lived in a module global keyed by
(kind, run, tag): two servers with the same run and tag names served each other's images.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogWriter
from visualdl.api.common import provider


def _write(root, red: int) -> None:
    with LogWriter(logdir=str(root / "run")) as w:
        for step in range(3):
            w.add_image("sample", np.full((4, 5, 3), (red, step, 0), np.uint8), step)
        w.add_embeddings("emb", np.eye(4) * red, step=0)


def _pixel(client: Client, step: int) -> tuple[int, ...]:
    r = client.get("/api/images/data", run="run", tag="sample", step=step)
    assert r.status_code == 200, r.text
    return Image.open(io.BytesIO(r.content)).getpixel((0, 0))


def test_two_apps_serve_their_own_images_and_projections(tmp_path):
    _write(tmp_path / "a", red=10)
    _write(tmp_path / "b", red=200)
    with serving(tmp_path / "a") as first, serving(tmp_path / "b") as second:
        clients = [Client(first.url), Client(second.url)]
        # interleaved, so that whichever app answers first fills any shared cache
        for step in (2, 0, 1):
            assert _pixel(clients[0], step) == (10, step, 0)
            assert _pixel(clients[1], step) == (200, step, 0)
        spans = []
        for client in clients:
            body = client.json("/api/embeddings/projection", run="run", tag="emb", step=0)
            coords = np.array(body["coords"])
            spans.append(float(coords.max() - coords.min()))
        assert spans[1] > 10 * spans[0]  # each projected its own matrix


def test_providers_are_per_app(tmp_path):
    _write(tmp_path / "a", red=1)
    with serving(tmp_path / "a") as first, serving(tmp_path / "a") as second:
        assert provider(first.app) is not provider(second.app)
        assert provider(first.app).runs() == provider(second.app).runs() == ["run"]
