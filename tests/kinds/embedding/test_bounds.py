"""Projections are bounded: one refines at a time on the app's worker, at most four are
pending, no request waits for a refinement, cheap requests stay answered, the same one asked
twice is made once, and one nobody asks about any more stops.

Before (issue 23, item 10): a t-SNE request waited up to 60 s for its answer, holding a
request thread, and two waiting requests turned every further one into a 503."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tests.helpers.http import wait_for
from tests.helpers.server import serving

requests = pytest.importorskip("requests")  # the test extra's


class _Gate:
    """A stand-in for ``frames``: yields ``steps`` frames, each when released, and records
    its calls and whether it was closed before the end."""

    def __init__(self, steps: int = 1) -> None:
        self.steps = steps
        self.release = threading.Semaphore(0)
        self.calls: list[tuple] = []
        self.closed: list[int] = []
        self.lock = threading.Lock()

    def __call__(self, matrix, method, dims):  # noqa: ANN001
        with self.lock:
            self.calls.append((method, dims, matrix.shape[0]))
        try:
            for k in range(1, self.steps + 1):
                assert self.release.acquire(timeout=60)
                yield np.full((matrix.shape[0], dims), float(k)), k / self.steps
        except GeneratorExit:
            self.closed.append(matrix.shape[0])
            raise

    def open(self, frames: int = 100) -> None:
        for _ in range(frames):
            self.release.release()


@pytest.fixture
def gate(monkeypatch):
    from visualdl.kinds.embedding import api as embedding_api

    gate = _Gate()
    monkeypatch.setattr(embedding_api, "frames", gate)
    yield gate
    gate.open()


def _projection(url: str, max_points: int, dims: int = 2) -> requests.Response:
    return requests.get(url + "/api/embeddings/projection", timeout=15, params={
        "run": "run", "tag": "blobs", "step": 0, "method": "tsne", "dims": dims,
        "max_points": max_points})


def _store(server):  # noqa: ANN001, ANN202 - a ServerHandle; the app's Refinements
    from visualdl.api.common import app_cache
    from visualdl.kinds.embedding.refine import Refinements

    return app_cache("embedding projections", Refinements, server.app)


def test_one_refines_at_a_time_four_pend_and_no_request_waits(emb_logdir, gate):
    with serving(emb_logdir) as server:
        sizes = (60, 50, 40, 30, 20, 10)
        first = [_projection(server.url, n) for n in sizes]
        # every request is answered at once, with the first frame (PCA)
        assert [r.status_code for r in first] == [200] * 6
        assert [(b["progress"], b["final"], b["shown"]) for b in (r.json() for r in first)] == \
            [(0.0, False, n) for n in sizes]
        wait_for(lambda: len(gate.calls) == 1, timeout=10)
        assert _store(server).pending == 4  # the last two wait for a poll to be queued
        runs = [requests.get(server.url + "/api/runs", timeout=5) for _ in range(10)]
        assert [r.status_code for r in runs] == [200] * 10
        assert len(gate.calls) == 1  # one at a time
        gate.open()

        def final(n: int) -> bool:
            body = _projection(server.url, n).json()
            return body["final"] and body["coords"][0][0] == 1.0  # the gate's frame

        for n in sizes:  # the polls queue the last two
            wait_for(lambda n=n: final(n), timeout=20)
    assert sorted(c[2] for c in gate.calls) == sorted(sizes)


def test_the_same_projection_asked_at_once_is_made_once(emb_logdir, gate):
    with serving(emb_logdir) as server, ThreadPoolExecutor(2) as pool:
        both = [pool.submit(_projection, server.url, 50, 3) for _ in range(2)]
        bodies = [f.result().json() for f in both]
        assert bodies[0] == bodies[1] and bodies[0]["shown"] == 50
        gate.open()
        wait_for(lambda: _projection(server.url, 50, 3).json()["final"], timeout=20)
        assert _projection(server.url, 50, 3).json()["coords"][2][0] == 1.0
    assert gate.calls == [("tsne", 3, 50)]


def test_a_refinement_nobody_asks_about_stops(emb_logdir, gate, monkeypatch):
    from visualdl.kinds.embedding import refine

    monkeypatch.setattr(refine, "_ABANDON_SECONDS", 0.0)
    gate.steps = 5
    with serving(emb_logdir) as server:
        assert _projection(server.url, 40).json()["progress"] == 0.0
        gate.open(1)
        wait_for(lambda: gate.closed == [40], timeout=10)  # stopped after its first frame
        # asked again, it starts afresh
        again = _projection(server.url, 40).json()
        assert again["progress"] == 0.0 and again["frame"] == "pca"
        wait_for(lambda: len(gate.calls) == 2, timeout=10)
