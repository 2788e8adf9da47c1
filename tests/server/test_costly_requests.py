"""Costly requests are bounded, and cheap ones stay answered while they run (issue 13,
item 10).

Before: a batch of 2,000 series at a million points each answered every point (seconds and
a gigabyte), and each t-SNE request computed on one of the server's 8 request threads, so
eight of them left nothing for ``/api/runs``. The times are measured by
``python bench/server_load.py``; here the bounds themselves are checked.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tests.helpers.http import Client, wait_for
from tests.helpers.logs import LOSS_STEPS, write_logs
from tests.helpers.server import serving
from visualdl import LogWriter

requests = pytest.importorskip("requests")  # the test extra's


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = write_logs(tmp_path_factory.mktemp("costly"))
    rng = np.random.default_rng(0)
    with LogWriter(logdir=str(root / "emb")) as w:
        w.add_embeddings("vectors", rng.normal(size=(60, 5)), metadata=[str(i % 3) for i in range(60)])
    return root


@pytest.fixture(scope="module")
def api(logdir):
    with serving(logdir) as server:
        client = Client(server.url, timeout=20)
        yield client
        client.close()


def test_a_big_batch_gets_fewer_points_per_series_and_says_so(api):
    n = 1000
    response = api.post("/api/scalars/batch", json={
        "series": [{"run": "train", "tag": "loss"}] * n, "points": 1_000_000})
    assert response.status_code == 200, response.text[:200]
    body = response.json()
    assert body["points"] == 1000  # MAX_BATCH_POINTS // n
    assert body["points_requested"] == 1_000_000 and body["reduced"] is True
    assert len(body["series"]) == n
    first = body["series"][0]
    assert first["total"] == LOSS_STEPS and first["downsampled"] is True
    assert len(first["values"]) <= 1000
    assert max(first["values"]) == 100.0  # the spike survives the min/max downsampling
    from visualdl.kinds.scalar.api import MAX_BATCH_POINTS

    assert MAX_BATCH_POINTS // n == body["points"]


def test_a_batch_within_the_budget_is_untouched(api):
    body = api.post("/api/scalars/batch", json={
        "series": [{"run": "train", "tag": "loss"}, {"run": "eval", "tag": "loss"}],
        "points": 5000}).json()
    assert body["points"] == 5000 and "reduced" not in body
    assert [len(s["values"]) for s in body["series"]] == [LOSS_STEPS, 30]


class _Gate:
    """A stand-in for ``project`` that blocks until released and counts its calls."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls: list[tuple] = []
        self.lock = threading.Lock()

    def __call__(self, matrix, method, dims):  # noqa: ANN001
        with self.lock:
            self.calls.append((method, dims, matrix.shape[0]))
        self.release.wait(30)
        return np.zeros((matrix.shape[0], dims)), {}


@pytest.fixture
def gate(monkeypatch):
    from visualdl.kinds.embedding import api as embedding_api

    gate = _Gate()
    monkeypatch.setattr(embedding_api, "project", gate)
    yield gate
    gate.release.set()


def _projections(server):  # noqa: ANN001, ANN202 - a ServerHandle; the app's worker
    from visualdl.kinds.embedding.api import _Projections
    from visualdl.api.common import app_cache

    return app_cache("embedding projections", _Projections, server.app)


def _projection(url: str, max_points: int, dims: int = 2) -> requests.Response:
    return requests.get(url + "/api/embeddings/projection", timeout=15, params={
        "run": "emb", "tag": "vectors", "step": 0, "method": "tsne", "dims": dims,
        "max_points": max_points})


def test_projections_run_one_at_a_time_and_never_starve_cheap_requests(logdir, gate):
    with serving(logdir) as server, ThreadPoolExecutor(8) as pool:
        waiting = [pool.submit(_projection, server.url, 50), pool.submit(_projection, server.url, 40)]
        wait_for(lambda: len(gate.calls) == 1, timeout=10)  # the first one is computing
        # both are waiting (before the fix there was no worker: both computed at once)
        wait_for(lambda: getattr(_projections(server), "waiting", 2) == 2, timeout=10)
        extra = [_projection(server.url, n) for n in (30, 20, 10)]
        # requests beyond the waiting limit are told to come back, at once
        assert [r.status_code for r in extra] == [503, 503, 503]
        assert all(r.headers["Retry-After"].isdigit() for r in extra)
        assert "try again" in extra[0].json()["error"]
        # ... and cheap requests are answered while the projections are pending
        runs = [requests.get(server.url + "/api/runs", timeout=5) for _ in range(10)]
        assert [r.status_code for r in runs] == [200] * 10
        assert len(gate.calls) == 1  # one at a time
        gate.release.set()
        assert [f.result().status_code for f in waiting] == [200, 200]
        # the queued one (30 points) was computed meanwhile; the retry gets it
        retried = wait_for(lambda: _projection(server.url, 30).status_code == 200 or None,
                           timeout=20)
        assert retried
    assert sorted(c[2] for c in gate.calls) == [20, 30, 40, 50]  # 4 pending at most: not 10


def test_the_same_projection_asked_at_once_is_computed_once(logdir, gate):
    with serving(logdir) as server, ThreadPoolExecutor(2) as pool:
        both = [pool.submit(_projection, server.url, 50, 3) for _ in range(2)]
        wait_for(lambda: len(gate.calls) == 1, timeout=10)
        gate.release.set()
        bodies = [f.result().json() for f in both]
        assert bodies[0] == bodies[1] and bodies[0]["shown"] == 50
        assert _projection(server.url, 50, 3).status_code == 200  # from the cache
    assert gate.calls == [("tsne", 3, 50)]
