"""Step windows on /api/scalars and the batch route: what a zoomed chart fetches."""

from __future__ import annotations

import numpy as np

from tests.helpers.sweep import LONG_SPIKE, LONG_STEPS, long_value


def test_few_points_in_window_are_exact(client):
    body = client.json("/api/scalars", run="long", tag="signal", points=1000,
                       start_step=5000, end_step=5400)
    steps = np.arange(5000, 5401)
    assert body["steps"] == steps.tolist()
    assert np.allclose(body["values"], long_value(steps))
    assert body["downsampled"] is False
    assert body["total"] == LONG_STEPS
    assert body["window_total"] == 401
    assert (body["start_step"], body["end_step"]) == (5000, 5400)


def test_many_points_in_window_are_minmax_buckets(client):
    body = client.json("/api/scalars", run="long", tag="signal", points=200,
                       start_step=100_000, end_step=150_000)
    steps = np.array(body["steps"])
    assert body["downsampled"] is True and body["window_total"] == 50_001
    assert len(steps) <= 200 and steps.min() >= 100_000 and steps.max() <= 150_000
    assert steps[0] == 100_000 and steps[-1] == 150_000  # first and last kept
    # the spike inside the window survives the buckets, exactly
    assert LONG_SPIKE in steps.tolist()
    assert body["values"][steps.tolist().index(LONG_SPIKE)] == 50.0
    # every bucket's extremes: the window's true min and max are there
    window = long_value(np.arange(100_000, 150_001))
    assert max(body["values"]) == window.max() and min(body["values"]) == window.min()


def test_zooming_reaches_a_single_step(client):
    full = client.json("/api/scalars", run="long", tag="signal", points=100)
    assert 77_777 not in full["steps"]
    near = client.json("/api/scalars", run="long", tag="signal", points=100,
                       start_step=77_770, end_step=77_790)
    assert 77_777 in near["steps"] and near["downsampled"] is False
    one = client.json("/api/scalars", run="long", tag="signal", points=100,
                      start_step=77_777, end_step=77_777)
    assert one["steps"] == [77_777]
    assert one["values"] == [float(long_value(np.array([77_777]))[0])]


def test_open_ended_window(client):
    body = client.json("/api/scalars", run="long", tag="signal", start_step=LONG_STEPS - 10)
    assert body["steps"] == list(range(LONG_STEPS - 10, LONG_STEPS))
    body = client.json("/api/scalars", run="long", tag="signal", end_step=4)
    assert body["steps"] == [0, 1, 2, 3, 4]


def test_batch_takes_a_window(client):
    r = client.post("/api/scalars/batch", json={
        "series": [{"run": "long", "tag": "signal"}, {"run": "lr0.1_seed0", "tag": "loss"}],
        "points": 1000, "start_step": 10, "end_step": 20})
    assert r.status_code == 200
    long, sweep = r.json()["series"]
    assert long["steps"] == list(range(10, 21))
    assert sweep["steps"] == list(range(10, 21)) and sweep["window_total"] == 11


def test_bad_windows_are_400(client):
    for params in ({"start_step": "x"}, {"start_step": 10, "end_step": 5},
                   {"end_step": str(2**64)}):
        r = client.get("/api/scalars", run="long", tag="signal", **params)
        assert r.status_code == 400, params
        assert "step" in r.json()["error"]
    r = client.post("/api/scalars/batch", json={"series": [{"run": "long", "tag": "signal"}],
                                                "start_step": True})
    assert r.status_code == 400


def test_window_past_the_data_is_empty(client):
    body = client.json("/api/scalars", run="long", tag="signal", start_step=10**9)
    assert body["steps"] == [] and body["window_total"] == 0
