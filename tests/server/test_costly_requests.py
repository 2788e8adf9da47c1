"""Costly requests are bounded, and cheap ones stay answered while they run (issue 13,
item 10).

Before: a batch of 2,000 series at a million points each answered every point (seconds and
a gigabyte). The times are measured by ``python bench/server_load.py``; here the bounds
themselves are checked. The embeddings' projections have theirs in
tests/kinds/embedding/test_bounds.py.
"""

from __future__ import annotations

import pytest

from tests.helpers.http import Client
from tests.helpers.logs import LOSS_STEPS, write_logs
from tests.helpers.server import serving

requests = pytest.importorskip("requests")  # the test extra's


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = write_logs(tmp_path_factory.mktemp("costly"))
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
