"""Grouping: the math against numpy computed here, and /api/scalars/groups end to end."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.sweep import LRS, SEEDS, SWEEP_STEPS, sweep_value
from visualdl.series.groups import GroupSpec, group_runs, group_stats, smooth


def ema(values, weight):
    """The product's EMA, one point at a time: non-finite points pass through and do not
    count towards the debiasing (PRODUCT.md)."""
    out, last, n = [], 0.0, 0
    for v in values:
        if not np.isfinite(v):
            out.append(v)
            continue
        last = last * weight + (1 - weight) * v
        n += 1
        out.append(last / (1 - weight**n) if weight else v)
    return out


def test_smooth_matches_the_reference_ema():
    rng = np.random.default_rng(0)
    values = rng.normal(size=3000)
    values[[5, 700, 2999]] = [np.nan, np.inf, -np.inf]
    for weight in (0.0, 0.3, 0.6, 0.99, 0.999):
        got = smooth(values, weight)
        want = np.array(ema(values.tolist(), weight))
        assert np.allclose(got, want, equal_nan=True, rtol=1e-9, atol=1e-12), weight


def test_same_grid_mean_median_and_bands():
    rng = np.random.default_rng(1)
    steps = np.arange(0, 500, 5)
    runs = rng.normal(size=(7, steps.shape[0])).cumsum(axis=1)
    members = [(steps, r) for r in runs]
    for stat, center in (("mean", runs.mean(0)), ("median", np.median(runs, 0))):
        out = group_stats(members, stat=stat, band="minmax", points=1000)
        assert out.steps.tolist() == steps.tolist() and not out.interpolated
        assert np.allclose(out.center, center)
        assert np.allclose(out.lower, runs.min(0)) and np.allclose(out.upper, runs.max(0))
        assert out.count.tolist() == [7] * steps.shape[0]
    std = group_stats(members, band="std")
    assert np.allclose(std.lower, runs.mean(0) - runs.std(0))
    assert np.allclose(std.upper, runs.mean(0) + runs.std(0))
    sem = group_stats(members, band="sem")
    assert np.allclose(sem.upper, runs.mean(0) + runs.std(0) / np.sqrt(7))


def test_smoothing_comes_before_the_statistics():
    rng = np.random.default_rng(2)
    steps = np.arange(300)
    runs = rng.normal(size=(4, 300))
    out = group_stats([(steps, r) for r in runs], smoothing=0.9, stat="mean", band="minmax")
    smoothed = np.array([ema(r.tolist(), 0.9) for r in runs])
    assert np.allclose(out.center, smoothed.mean(0))
    assert np.allclose(out.upper, smoothed.max(0))


def test_different_grids_are_interpolated_onto_the_union():
    a_steps, a = np.arange(0, 31, 1), np.arange(0, 31, 1) * 2.0
    b_steps, b = np.arange(0, 31, 3), np.arange(0, 31, 3) * 4.0 + 1.0
    c_steps, c = np.arange(10, 21, 5), np.array([7.0, 9.0, 11.0])
    out = group_stats([(a_steps, a), (b_steps, b), (c_steps, c)], stat="mean",
                      band="minmax", points=1000)
    assert out.interpolated
    assert out.steps.tolist() == list(range(31))  # the union of the grids
    grid = out.steps.astype(float)
    ia = np.interp(grid, a_steps, a)
    ib = np.interp(grid, b_steps, b)
    ic = np.where((grid >= 10) & (grid <= 20), np.interp(grid, c_steps, c), np.nan)
    matrix = np.vstack([ia, ib, ic])
    assert np.allclose(out.center, np.nanmean(matrix, 0))
    assert np.allclose(out.lower, np.nanmin(matrix, 0))
    assert np.allclose(out.upper, np.nanmax(matrix, 0))
    assert out.count.tolist() == [2 + (10 <= s <= 20) for s in range(31)]  # never extrapolated


def test_long_grids_become_evenly_spaced_points():
    a = (np.arange(0, 100_000, 7), np.ones(len(range(0, 100_000, 7))))
    b = (np.arange(0, 100_000, 11), np.full(len(range(0, 100_000, 11)), 3.0))
    out = group_stats([a, b], points=500)
    assert len(out.steps) <= 500 and out.steps[0] == 0
    assert out.steps[-1] == 99_999 - 99_999 % 7 or out.steps[-1] >= 99_990
    assert np.allclose(out.center[:-1], 2.0)  # interior: both members


def test_group_runs_by_regex_and_hparams():
    runs = ["lr0.1_seed0", "lr0.1_seed1", "lr0.01_seed0", "baseline"]
    by_re = group_runs(runs, GroupSpec(regex=r"^(lr[\d.]+)_seed\d+$"), lambda r: None)
    assert by_re == {"lr0.1": runs[:2], "lr0.01": [runs[2]], "baseline": ["baseline"]}
    hp = {"lr0.1_seed0": {"lr": 0.1}, "lr0.1_seed1": {"lr": 0.1}, "lr0.01_seed0": {"lr": 0.01}}
    by_hp = group_runs(runs, GroupSpec(hparams=("lr",)), hp.get)
    assert by_hp == {"lr=0.1": runs[:2], "lr=0.01": [runs[2]], "baseline": ["baseline"]}


def test_bad_stat_or_band():
    with pytest.raises(ValueError, match="stat"):
        group_stats([(np.arange(3), np.ones(3))], stat="mode")
    with pytest.raises(ValueError, match="band"):
        group_stats([(np.arange(3), np.ones(3))], band="iqr")


# -- the route ------------------------------------------------------------------------------------
def _member_matrix(lr):
    steps = np.arange(SWEEP_STEPS, dtype=float)
    rows = []
    for seed in SEEDS:
        own = np.arange(0, SWEEP_STEPS, 3 if seed == 2 else 1)
        vals = np.array([sweep_value(lr, seed, s) for s in own])
        rows.append(np.where(steps <= own[-1], np.interp(steps, own, vals), np.nan))
    return steps, np.vstack(rows)


def test_route_groups_by_regex(client):
    r = client.post("/api/scalars/groups", json={
        "tag": "loss", "regex": r"^lr([\d.]+)_seed", "stat": "mean", "band": "std"})
    assert r.status_code == 200, r.text
    body = r.json()
    groups = {g["name"]: g for g in body["groups"]}
    assert set(groups) == {str(lr) for lr in LRS}
    for lr in LRS:
        g = groups[str(lr)]
        assert g["members"] == [f"lr{lr}_seed{s}" for s in SEEDS]
        steps, matrix = _member_matrix(lr)
        assert g["steps"] == steps.astype(int).tolist() and g["interpolated"]
        mean = np.nanmean(matrix, 0)
        std = np.nanstd(matrix, 0)
        assert np.allclose(g["center"], mean)
        assert np.allclose(g["lower"], mean - std) and np.allclose(g["upper"], mean + std)
        assert g["count"] == np.isfinite(matrix).sum(0).tolist()


def test_route_groups_by_hparam_with_smoothing_and_median(client):
    runs = [f"lr0.1_seed{s}" for s in (0, 1)] + [f"lr0.01_seed{s}" for s in (0, 1)]
    r = client.post("/api/scalars/groups", json={
        "tag": "loss", "runs": runs, "hparams": ["opt"], "stat": "median",
        "band": "minmax", "smoothing": 0.6, "points": 1000})
    assert r.status_code == 200, r.text
    groups = {g["name"]: g for g in r.json()["groups"]}
    assert groups["opt=sgd"]["members"] == ["lr0.1_seed0", "lr0.01_seed0"]
    assert groups["opt=adam"]["members"] == ["lr0.1_seed1", "lr0.01_seed1"]
    rows = np.array([ema([sweep_value(lr, 1, s) for s in range(SWEEP_STEPS)], 0.6)
                     for lr in (0.1, 0.01)])
    adam = groups["opt=adam"]
    assert np.allclose(adam["center"], np.median(rows, 0))
    assert np.allclose(adam["lower"], rows.min(0)) and np.allclose(adam["upper"], rows.max(0))


def test_route_as_a_get_query(client):
    body = client.json("/api/scalars/groups", params={
        "tag": "loss", "hparam": ["opt"], "run": ["lr0.1_seed0", "lr0.01_seed0", "lr0.1_seed1"],
        "band": "sem", "smoothing": "0"})
    groups = {g["name"]: g for g in body["groups"]}
    assert groups["opt=sgd"]["members"] == ["lr0.1_seed0", "lr0.01_seed0"]
    rows = np.array([[sweep_value(lr, 0, s) for s in range(SWEEP_STEPS)] for lr in (0.1, 0.01)])
    sem = rows.std(0) / np.sqrt(2)
    assert np.allclose(groups["opt=sgd"]["upper"], rows.mean(0) + sem)
    assert groups["opt=adam"]["members"] == ["lr0.1_seed1"]
    assert client.get("/api/scalars/groups", tag="loss", regex="x", smoothing="y").status_code == 400


def test_route_window(client):
    r = client.post("/api/scalars/groups", json={
        "tag": "loss", "regex": r"^lr0\.1_", "start_step": 10, "end_step": 19})
    (group,) = [g for g in r.json()["groups"] if g["name"] == "lr0.1_"]
    assert group["steps"] == list(range(10, 20))


@pytest.mark.parametrize("body, word", [
    ({"regex": "x"}, "tag"),
    ({"tag": "loss"}, "regex"),
    ({"tag": "loss", "regex": "("}, "regex"),
    ({"tag": "loss", "regex": "x", "hparams": ["lr"]}, "either"),
    ({"tag": "loss", "regex": "x", "stat": "mode"}, "stat"),
    ({"tag": "loss", "regex": "x", "band": "iqr"}, "band"),
    ({"tag": "loss", "regex": "x", "smoothing": 1.5}, "smoothing"),
    ({"tag": "loss", "regex": "x", "runs": "a"}, "runs"),
    ({"tag": "loss", "hparams": [3]}, "hparams"),
])
def test_route_bad_input_is_400(client, body, word):
    r = client.post("/api/scalars/groups", json=body)
    assert r.status_code == 400
    assert word in r.json()["error"]
