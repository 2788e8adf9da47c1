"""Smoothing modes on /api/scalars, the batch route and downloads: exact values against a
plain loop over the whole series (uneven step gaps, a NaN, zoomed windows, downsampling)."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogWriter

# uneven gaps: dense, then a pause of 500 steps, then every 7 steps; one NaN
STEPS = [0, 1, 2, 3, 4, 5, 10, 20, 40, 540, 547, 554, 561, 568, 575, 582, 589, 596]
VALUES = [5.0, 3.0, 4.0, 8.0, 1.0, 2.0, 9.0, 7.0, float("nan"), 0.5, 6.0, 3.5, 2.5, 4.5,
          7.5, 1.5, 8.5, 3.0]
LONG = 5000  # points of the long series (downsampled answers)


def long_values() -> np.ndarray:
    k = np.arange(LONG)
    return np.sin(k / 37.0) * 10 + (k % 11) - 0.001 * k


def long_steps() -> np.ndarray:
    # gaps of 1, 2 and 5 steps in turn: unevenly logged
    return np.cumsum(np.tile([1, 2, 5], LONG // 3 + 1)[:LONG]) - 1


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("smoothing")
    with LogWriter(logdir=str(logdir / "run")) as w:
        for s, v in zip(STEPS, VALUES):
            w.add_scalar("uneven", v, step=s, walltime=1000.0 + s)
        for s, v in zip(long_steps().tolist(), long_values().tolist()):
            w.add_scalar("long", v, step=s, walltime=2000.0 + s)
        for s, v in enumerate(long_values()[:300].tolist()):
            w.add_scalar("even", v, step=10 * s, walltime=3000.0 + s)
    with serving(logdir) as handle:
        c = Client(handle.url)
        yield c
        c.close()


# -- reference implementations: a loop over every point -------------------------------------
def ref_ema(values, w):
    last, n, out = 0.0, 0, []
    for v in values:
        if not math.isfinite(v):
            out.append(v)
            continue
        last = last * w + (1 - w) * v
        n += 1
        out.append(last / (1 - w ** n))
    return out


def ref_time_ema(steps, values, w):
    unit = (steps[-1] - steps[0]) / (len(steps) - 1)
    num = den = 0.0
    prev = None
    out = []
    for s, v in zip(steps, values):
        if not math.isfinite(v):
            out.append(v)
            continue
        d = 1.0 if prev is None else w ** (max(s - prev, 0) / unit)
        num, den, prev = num * d + v, den * d + 1, s
        out.append(num / den)
    return out


def ref_running(values, n):
    out = []
    for i, v in enumerate(values):
        if not math.isfinite(v):
            out.append(v)
            continue
        window = [x for x in values[max(0, i - n + 1):i + 1] if math.isfinite(x)]
        out.append(sum(window) / len(window))
    return out


def ref_envelope(values, idx):
    lo, hi = [], []
    for i, at in enumerate(idx):
        a = idx[0] if i == 0 else (idx[i - 1] + at) // 2 + 1
        b = idx[-1] if i == len(idx) - 1 else (at + idx[i + 1]) // 2
        raw = [x for x in values[a:b + 1] if math.isfinite(x)]
        lo.append(min(raw) if raw else float("nan"))
        hi.append(max(raw) if raw else float("nan"))
    return lo, hi


def numbers(column):
    return [float(x) if isinstance(x, str) else x for x in column]


def close(got, want):
    assert len(got) == len(want)
    assert np.allclose(numbers(got), want, rtol=1e-9, atol=1e-12, equal_nan=True), (got, want)


# -- each mode, exact -----------------------------------------------------------------------
def test_time_weighted_ema_follows_step_gaps(client):
    body = client.json("/api/scalars", run="run", tag="uneven", smoothing=0.6,
                       smoothing_mode="time_ema")
    assert body["smoothing_mode"] == "time_ema" and body["smoothing"] == 0.6
    want = ref_time_ema(STEPS, VALUES, 0.6)
    close(body["smoothed"], want)
    # uneven gaps: not the point-count EMA (the pause forgets what came before it)
    ema = client.json("/api/scalars", run="run", tag="uneven", smoothing=0.6)["smoothed"]
    close(ema, ref_ema(VALUES, 0.6))
    assert abs(numbers(ema)[9] - want[9]) > 0.5
    assert abs(want[9] - 0.5) < 0.05  # 500 steps on (14 mean gaps): the past weighs little


def test_time_weighted_ema_of_even_steps_is_the_ema(client):
    body = client.json("/api/scalars", run="run", tag="even", smoothing=0.9,
                       smoothing_mode="time_ema")
    assert body["smoothing_mode"] == "time_ema"
    close(body["smoothed"], ref_ema(long_values()[:300].tolist(), 0.9))


def test_running_average_over_n_points(client):
    body = client.json("/api/scalars", run="run", tag="uneven", smoothing_mode="running",
                       smoothing_points=3)
    assert body["smoothing_points"] == 3 and body["smoothing_mode"] == "running"
    close(body["smoothed"], ref_running(VALUES, 3))
    assert numbers(body["smoothed"])[2] == pytest.approx((5 + 3 + 4) / 3)


def test_envelope_of_every_point_is_the_point(client):
    body = client.json("/api/scalars", run="run", tag="uneven", envelope=1, smoothing=0.5)
    close(body["lower"], VALUES)
    close(body["upper"], VALUES)
    close(body["smoothed"], ref_ema(VALUES, 0.5))


def test_envelope_of_downsampled_series_spans_its_buckets(client):
    body = client.json("/api/scalars", run="run", tag="long", points=100, envelope="true")
    assert body["downsampled"] is True
    steps = long_steps().tolist()
    idx = [steps.index(s) for s in body["steps"]]
    lo, hi = ref_envelope(long_values().tolist(), idx)
    close(body["lower"], lo)
    close(body["upper"], hi)
    assert min(numbers(body["lower"])) == long_values().min()
    assert max(numbers(body["upper"])) == long_values().max()
    # no smoothing asked: nothing smoothed sent
    assert "smoothed" not in body


@pytest.mark.parametrize("mode,extra,ref", [
    ("ema", {"smoothing": 0.95}, lambda s, v: ref_ema(v, 0.95)),
    ("time_ema", {"smoothing": 0.95}, lambda s, v: ref_time_ema(s, v, 0.95)),
    ("running", {"smoothing_points": 25}, lambda s, v: ref_running(v, 25)),
])
def test_zoomed_window_and_downsampled_view_agree_with_the_whole_series(client, mode, extra,
                                                                        ref):
    steps, values = long_steps().tolist(), long_values().tolist()
    want = ref(steps, values)
    for window in ({}, {"start_step": 9000, "end_step": 9400}, {"start_step": 4000}):
        body = client.json("/api/scalars", run="run", tag="long", points=200,
                           smoothing_mode=mode, **extra, **window)
        idx = [steps.index(s) for s in body["steps"]]
        close(body["smoothed"], [want[i] for i in idx])


def test_batch_items_take_the_modes(client):
    r = client.post("/api/scalars/batch", json={
        "series": [{"run": "run", "tag": "uneven"},
                   {"run": "run", "tag": "uneven", "smoothing_mode": "running",
                    "smoothing_points": 2, "start_step": 540}],
        "smoothing": 0.6, "smoothing_mode": "time_ema", "envelope": True})
    assert r.status_code == 200
    first, second = r.json()["series"]
    close(first["smoothed"], ref_time_ema(STEPS, VALUES, 0.6))
    close(first["upper"], VALUES)
    close(second["smoothed"], ref_running(VALUES, 2)[9:])
    close(second["lower"], VALUES[9:])


def test_download_carries_the_smoothed_column(client):
    r = client.get("/api/scalars/download", run="run", tag="uneven", smoothing=0.6,
                   smoothing_mode="time_ema")
    assert r.status_code == 200
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0] == ["run", "step", "wall_time", "value", "smoothed"]
    close([float(row[4]) for row in rows[1:]], ref_time_ema(STEPS, VALUES, 0.6))
    body = client.json("/api/scalars/download", run="run", tag="uneven", format="json",
                       smoothing_mode="running", smoothing_points=4)
    close(body["series"][0]["smoothed"], ref_running(VALUES, 4))
    plain = client.get("/api/scalars/download", run="run", tag="uneven")
    assert plain.text.splitlines()[0] == "run,step,wall_time,value"


@pytest.mark.parametrize("query,message", [
    ({"smoothing_mode": "gaussian"}, "smoothing_mode must be one of: ema, time_ema, running"),
    ({"smoothing_mode": "running"}, "smoothing_points"),
    ({"smoothing_mode": "running", "smoothing_points": 0}, "smoothing_points must be between"),
    ({"smoothing_points": "x"}, "smoothing_points must be an integer"),
    ({"envelope": "maybe"}, "envelope must be true or false"),
])
def test_bad_smoothing_parameters_are_400(client, query, message):
    r = client.get("/api/scalars", run="run", tag="uneven", **query)
    assert r.status_code == 400 and message in r.json()["error"], r.text
    r = client.post("/api/scalars/batch", json={"series": [{"run": "run", "tag": "uneven"}],
                                                **query})
    assert r.status_code == 400 and message in r.json()["error"], r.text
