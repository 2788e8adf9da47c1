"""Wall-time windows and window smoothing on /api/scalars and the batch route: what a chart
zoomed on its Relative or Wall axis fetches. Values are always the records' own."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogWriter
from visualdl.reader import scalar_cache
from visualdl.reader.log_reader import LogReader
from visualdl.series import downsample
from visualdl.server.reader_provider import LogReaderProvider

N = 40_000
SPIKE = 23_456
BACK_AT = 5_000  # "clock": the wall clock is set back 30 s at this step


def value(step: int) -> float:
    return 50.0 if step == SPIKE else math.sin(step / 300.0) + 0.001 * (step % 7)


def mono_wall(step: int) -> float:
    return 1000.0 + step * 0.01


def clock_wall(step: int) -> float:
    return 1000.0 + step * 0.01 - (30.0 if step >= BACK_AT else 0.0)


def late_wall(step: int) -> float:  # another run, started 5,000 s later, 0.1 s a step
    return 6000.0 + step * 0.1


NAN_STEPS = {100, 101, 7000}


def noisy(step: int) -> float:
    return float("nan") if step in NAN_STEPS else value(step)


def reference_smooth(values: list[float], w: float) -> list[float]:
    """The chart's smoothing written out plainly: debiased EMA, non-finite passes through."""
    out, last, n = [], 0.0, 0
    for v in values:
        if not math.isfinite(v):
            out.append(v)
            continue
        last = last * w + (1 - w) * v
        n += 1
        out.append(last / (1 - w ** n))
    return out


def write(root, run, wall, val, steps=range(N)):
    with LogWriter(logdir=str(root / run)) as w:
        for s in steps:
            w.add_scalar("x", val(s), step=s, walltime=wall(s))


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    root = tmp_path_factory.mktemp("walls")
    write(root, "mono", mono_wall, value)
    write(root, "clock", clock_wall, value, range(10_000))
    write(root, "late", late_wall, value, range(10_000))
    write(root, "noisy", mono_wall, noisy, range(10_000))
    with serving(root) as handle:
        yield Client(handle.url)


def test_wall_window_holds_exactly_the_points_logged_in_it(client):
    body = client.json("/api/scalars", run="mono", tag="x", points=1000,
                       wall_min=1100.0, wall_max=1101.0)
    assert body["steps"] == list(range(10_000, 10_101))
    assert body["values"] == [value(s) for s in range(10_000, 10_101)]
    assert body["wall_times"] == [mono_wall(s) for s in range(10_000, 10_101)]
    assert body["downsampled"] is False and body["window_total"] == 101
    assert body["total"] == N
    assert (body["wall_min"], body["wall_max"]) == (1100.0, 1101.0)


def test_zooming_in_wall_time_reaches_a_single_step(client):
    full = client.json("/api/scalars", run="mono", tag="x", points=200)
    assert 12_345 not in full["steps"]
    t = mono_wall(12_345)
    one = client.json("/api/scalars", run="mono", tag="x", points=200,
                      wall_min=t - 0.004, wall_max=t + 0.004)
    assert one["steps"] == [12_345] and one["values"] == [value(12_345)]


def test_wide_wall_window_is_minmax_buckets_that_keep_the_spike(client):
    lo, hi = mono_wall(20_000), mono_wall(30_000)
    body = client.json("/api/scalars", run="mono", tag="x", points=200, wall_min=lo,
                       wall_max=hi)
    steps = body["steps"]
    assert body["downsampled"] is True and body["window_total"] == 10_001
    assert len(steps) <= 200 and steps[0] == 20_000 and steps[-1] == 30_000
    assert body["values"][steps.index(SPIKE)] == 50.0
    window = [value(s) for s in range(20_000, 30_001)]
    assert min(body["values"]) == min(window)


def test_wall_time_going_backwards_gives_every_point_in_the_window(client):
    # the clock was set back 30 s at step 5,000: wall times 1025..1027 were lived twice
    body = client.json("/api/scalars", run="clock", tag="x", points=1000,
                       wall_min=1025.0, wall_max=1027.0)
    want = [s for s in range(10_000) if 1025.0 <= clock_wall(s) <= 1027.0]
    assert 2500 <= want[0] <= 2501 and 5699 <= want[-1] <= 5700 and len(want) > 390
    assert any(b - a > 1 for a, b in zip(want, want[1:]))  # two stretches of steps
    assert body["steps"] == want  # both stretches, in the order they were logged
    assert body["values"] == [value(s) for s in want]
    assert body["window_total"] == len(want)
    # with a step range as well: the points in both
    both = client.json("/api/scalars", run="clock", tag="x", points=1000,
                       wall_min=1025.0, wall_max=1027.0, start_step=3000)
    assert both["steps"] == [s for s in want if s >= 3000] and both["steps"][0] >= 5500


def test_batch_items_carry_their_own_wall_windows(client):
    # a Relative axis: seconds 100..101 after each run's own start
    r = client.post("/api/scalars/batch", json={
        "series": [{"run": "mono", "tag": "x", "wall_min": 1100.0, "wall_max": 1101.0},
                   {"run": "late", "tag": "x", "wall_min": 6100.0, "wall_max": 6101.0},
                   {"run": "clock", "tag": "x"}],
        "points": 1000, "start_step": 0, "end_step": 5})
    assert r.status_code == 200
    mono, late, clock = r.json()["series"]
    assert mono["steps"] == list(range(10_000, 10_101))
    assert late["steps"] == list(range(1000, 1011))
    assert late["values"] == [value(s) for s in range(1000, 1011)]
    assert clock["steps"] == [0, 1, 2, 3, 4, 5]  # the batch's window where it has none
    # an item's step window replaces the batch's
    r = client.post("/api/scalars/batch", json={
        "series": [{"run": "late", "tag": "x", "start_step": 9998}], "points": 100,
        "wall_min": 0.0})
    assert r.json()["series"][0]["steps"] == [9998, 9999]


@pytest.mark.parametrize("weight", [0.6, 0.95])
def test_window_smoothing_is_the_whole_series_smoothing(client, weight):
    full = reference_smooth([noisy(s) for s in range(10_000)], weight)
    for params in ({"start_step": 6990, "end_step": 7100},
                   {"wall_min": mono_wall(95), "wall_max": mono_wall(110)},
                   {"start_step": 8000}):
        body = client.json("/api/scalars", run="noisy", tag="x", points=1000,
                           smoothing=weight, **params)
        assert body["smoothing"] == weight
        got, want = body["smoothed"], [full[s] for s in body["steps"]]
        assert len(got) == len(body["steps"]) > 10
        for g, w in zip(got, want):
            assert (g == "NaN" and math.isnan(w)) or g == pytest.approx(w, rel=1e-12)
        # the left edge is not the window's own fresh start
        if body["steps"][0] > 200:
            fresh = reference_smooth([noisy(s) for s in body["steps"]], weight)
            assert abs(fresh[1] - got[1]) > 1e-6
    # a downsampled window: the smoothed values at the points kept, from every point
    body = client.json("/api/scalars", run="mono", tag="x", points=100, start_step=20_000,
                       end_step=30_000, smoothing=0.9)
    mono = reference_smooth([value(s) for s in range(30_001)], 0.9)
    assert body["downsampled"] is True
    assert body["smoothed"] == pytest.approx([mono[s] for s in body["steps"]], rel=1e-12)
    # and without smoothing, no smoothed values
    assert "smoothed" not in client.json("/api/scalars", run="mono", tag="x", end_step=5)


def test_bad_wall_windows_are_400_naming_the_parameter(client):
    for params, name in (({"wall_min": "soon"}, "wall_min"), ({"wall_max": "nan"}, "wall_max"),
                         ({"wall_min": 5, "wall_max": 4}, "wall_min"),
                         ({"wall_max": "inf"}, "wall_max"), ({"smoothing": 1.5}, "smoothing"),
                         ({"smoothing": "x"}, "smoothing")):
        r = client.get("/api/scalars", run="mono", tag="x", **params)
        assert r.status_code == 400, params
        assert name in r.json()["error"]
    r = client.post("/api/scalars/batch", json={"series": [{"run": "mono", "tag": "x"}],
                                                "wall_min": True})
    assert r.status_code == 400 and "wall_min" in r.json()["error"]
    # one bad item is an error in its slot; the others are answered
    r = client.post("/api/scalars/batch", json={"series": [
        {"run": "mono", "tag": "x", "wall_min": [1]}, {"run": "late", "tag": "x"}],
        "end_step": 1})
    first, second = r.json()["series"]
    assert "wall_min" in first["error"] and second["steps"] == [0, 1]


def test_wall_window_past_the_data_is_empty(client):
    body = client.json("/api/scalars", run="mono", tag="x", wall_min=10**9)
    assert body["steps"] == [] and body["window_total"] == 0 and body["total"] == N


# -- long series kept on disk (memory-mapped, min/max pyramid) ---------------------------------
SPILL_N = 120_000


@pytest.fixture
def spilled(tmp_path, monkeypatch):
    monkeypatch.setattr(scalar_cache, "SPILL_POINTS", 20_000)
    monkeypatch.setenv("VISUALDL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(scalar_cache, "_session", None)
    monkeypatch.setattr(scalar_cache, "_broken", [])
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        for s in range(SPILL_N):
            w.add_scalar("mono", value(s), step=s, walltime=mono_wall(s))
            w.add_scalar("back", value(s), step=s, walltime=clock_wall(s))
    provider = LogReaderProvider([str(tmp_path / "run")])
    provider._reader = LogReader(tmp_path / "run")
    return provider


def test_spilled_series_answer_wall_windows_exactly(spilled):
    data = spilled.scalars("run", "mono")
    assert isinstance(data, scalar_cache.SpilledScalars)
    assert data.ordered("wall_times") is True
    view = spilled.scalar_view("run", "mono", 1000, wall_min=1100.0, wall_max=1101.0)
    assert view.steps.tolist() == list(range(10_000, 10_101))
    assert view.values.tolist() == [value(s) for s in range(10_000, 10_101)]
    # a wide window from the pyramid: first, last, and the spike
    wide = spilled.scalar_view("run", "mono", 300, wall_min=mono_wall(1000),
                               wall_max=mono_wall(110_000))
    assert wide.downsampled and wide.window_total == 109_001 and len(wide.steps) <= 320
    assert wide.steps[0] == 1000 and wide.steps[-1] == 110_000 and SPIKE in wide.steps
    # a window a few blocks wide is still drawn at the chart's resolution, not per block
    mid = spilled.scalar_view("run", "mono", 1000, 30_000, 39_999)
    assert mid.downsampled and 900 <= len(mid.steps) <= 1000
    assert mid.values.tolist() == [value(s) for s in mid.steps.tolist()]
    wmid = spilled.scalar_view("run", "mono", 1000, wall_min=mono_wall(30_000),
                               wall_max=mono_wall(39_999))
    assert 900 <= len(wmid.steps) <= 1000 and wmid.window_total == mid.window_total
    # wall time going backwards on disk: both stretches
    back = spilled.scalars("run", "back")
    assert back.ordered("wall_times") is False
    view = spilled.scalar_view("run", "back", 1000, wall_min=1025.0, wall_max=1027.0)
    want = [s for s in range(SPILL_N) if 1025.0 <= clock_wall(s) <= 1027.0]
    assert view.steps.tolist() == want and want[0] < 3000 and want[-1] > 5000


def test_spilled_wall_order_unknown_after_restore_is_found_by_a_scan(spilled):
    data = spilled.scalars("run", "mono")
    data.series._walls_sorted = None  # as restored from a cache folder
    assert data.ordered("wall_times") is True
    back = spilled.scalars("run", "back")
    back.series._walls_sorted = None
    assert back.ordered("wall_times") is False


def test_smoothing_far_into_a_long_series_reads_only_what_counts(spilled):
    data = spilled.scalars("run", "mono")
    full = reference_smooth([value(s) for s in range(SPILL_N)], 0.99)
    # a window: one pass from a few thousand points before it
    idx = np.arange(100_000, 100_050)
    got = downsample.smoothed_at(data.values, idx, 0.99)
    assert got.tolist() == pytest.approx([full[i] for i in idx], rel=1e-12)
    # a few points of a wide window (a downsampled one): summed point by point
    idx = np.array([3, 5000, 60_000, 110_000, SPILL_N - 1])
    got = downsample.smoothed_at(data.values, idx, 0.99)
    assert got.tolist() == pytest.approx([full[i] for i in idx], rel=1e-12)
    assert downsample._ema_at_points(data.values, idx, 0.99, 3913) is not None


def test_point_by_point_smoothing_leaves_non_finite_values_to_the_pass():
    values = np.array([value(s) for s in range(50_000)])
    values[30_000] = np.nan
    full = reference_smooth(values.tolist(), 0.9)
    idx = np.array([10, 20_000, 30_001, 49_999])
    assert downsample._ema_at_points(values, idx, 0.9, 372) is None
    got = downsample.smoothed_at(values, idx, 0.9)
    assert got.tolist() == pytest.approx([full[i] for i in idx], rel=1e-12)
