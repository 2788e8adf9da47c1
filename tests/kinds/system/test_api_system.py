"""The system metrics routes against a real server on real log files whose system series
were written with known values and wall times through the writer's scalar path."""

from __future__ import annotations

import pytest

from tests.helpers.http import client_of
from visualdl import LogWriter

ALPHA_CPU = [(1000.0, 10.0), (1010.0, 20.0), (1020.0, 30.0)]
ALPHA_GPU0 = [(1000.0, 1e9), (1010.0, 3e9), (1020.0, 2e9)]
ALPHA_GPU1 = [(1000.0, 5e8)]
BETA_CPU = [(1005.0, 50.0)]


def _write(w: LogWriter, tag: str, points: list[tuple[float, float]]) -> None:
    for step, (wall, value) in enumerate(points):
        w.add_scalar(tag, value, step, walltime=wall)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    root = tmp_path_factory.mktemp("system")
    with LogWriter(logdir=str(root / "r"), system_metrics=False) as w:
        _write(w, "system/alpha/cpu/percent", ALPHA_CPU)
        _write(w, "system/alpha/gpu0/memory_used_bytes", ALPHA_GPU0)
        _write(w, "system/alpha/gpu1/memory_used_bytes", ALPHA_GPU1)
        _write(w, "system/beta/cpu/percent", BETA_CPU)
        w.add_scalar("loss", 0.5, 1, walltime=1003.0)
    with LogWriter(logdir=str(root / "plain"), system_metrics=False) as w:
        w.add_scalar("loss", 0.25, 1, walltime=1003.0)
    with client_of(root) as client:
        yield client


def test_system_tags_are_listed_apart_from_scalars(api):
    kinds = api.json("/api/tags")["kinds"]
    assert kinds["scalar"] == {"r": ["loss"], "plain": ["loss"]}
    assert kinds["system"] == {"r": ["system/alpha/cpu/percent",
                                     "system/alpha/gpu0/memory_used_bytes",
                                     "system/alpha/gpu1/memory_used_bytes",
                                     "system/beta/cpu/percent"]}
    assert api.json("/api/tags", kind="scalar")["runs"] == {"r": ["loss"], "plain": ["loss"]}


def test_overview_lists_hosts_metrics_and_the_gpu_peak(api):
    body = api.json("/api/system", run="r")
    assert body == {"run": "r", "gpu_memory_peak": 3e9, "hosts": [
        {"host": "alpha", "metrics": [
            {"metric": "cpu/percent", "tag": "system/alpha/cpu/percent", "points": 3,
             "first": 1000.0, "last": 1020.0, "last_value": 30.0},
            {"metric": "gpu0/memory_used_bytes", "tag": "system/alpha/gpu0/memory_used_bytes",
             "points": 3, "first": 1000.0, "last": 1020.0, "last_value": 2e9},
            {"metric": "gpu1/memory_used_bytes", "tag": "system/alpha/gpu1/memory_used_bytes",
             "points": 1, "first": 1000.0, "last": 1000.0, "last_value": 5e8}]},
        {"host": "beta", "metrics": [
            {"metric": "cpu/percent", "tag": "system/beta/cpu/percent", "points": 1,
             "first": 1005.0, "last": 1005.0, "last_value": 50.0}]}]}


def test_a_run_without_system_metrics_has_no_hosts(api):
    assert api.json("/api/system", run="plain") == {"run": "plain", "hosts": [],
                                                     "gpu_memory_peak": None}


@pytest.mark.parametrize("wall, alpha_cpu", [
    (990.0, (1000.0, 10.0)),   # before the first sample: the first
    (1005.0, (1000.0, 10.0)),  # a tie: the earlier sample
    (1006.0, (1010.0, 20.0)),
    (1020.0, (1020.0, 30.0)),
    (5000.0, (1020.0, 30.0)),  # after the last: the last
])
def test_state_at_a_wall_time_is_each_metrics_nearest_sample(api, wall, alpha_cpu):
    body = api.json("/api/system/at", run="r", wall_time=wall)
    assert body["run"] == "r" and body["wall_time"] == wall
    alpha, beta = body["hosts"]
    assert alpha["host"] == "alpha" and beta["host"] == "beta"
    assert alpha["metrics"]["cpu/percent"] == {"wall_time": alpha_cpu[0], "value": alpha_cpu[1]}
    gpu0 = dict(ALPHA_GPU0)[alpha_cpu[0]]
    assert alpha["metrics"]["gpu0/memory_used_bytes"] == {"wall_time": alpha_cpu[0],
                                                          "value": gpu0}
    assert alpha["metrics"]["gpu1/memory_used_bytes"] == {"wall_time": 1000.0, "value": 5e8}
    assert beta["metrics"] == {"cpu/percent": {"wall_time": 1005.0, "value": 50.0}}


def test_series_of_a_host_on_the_wall_time_axis(api):
    body = api.json("/api/system/series", run="r", host="alpha")
    assert body["run"] == "r" and body["host"] == "alpha"
    got = {s["metric"]: (s["total"], s["wall_times"], s["values"]) for s in body["series"]}
    assert got == {
        "cpu/percent": (3, [1000.0, 1010.0, 1020.0], [10.0, 20.0, 30.0]),
        "gpu0/memory_used_bytes": (3, [1000.0, 1010.0, 1020.0], [1e9, 3e9, 2e9]),
        "gpu1/memory_used_bytes": (1, [1000.0], [5e8]),
    }
    window = api.json("/api/system/series", run="r", host="alpha", wall_min=1005,
                      wall_max=1020)
    assert window["series"][0]["wall_times"] == [1010.0, 1020.0]
    assert window["series"][0]["values"] == [20.0, 30.0]


def test_peaks_of_every_run_and_of_named_runs(api):
    assert api.json("/api/system/peaks") == {"runs": {"r": 3e9}}
    assert api.json("/api/system/peaks", params={"run": ["plain", "nope"]}) == {"runs": {}}


@pytest.mark.parametrize("path, params, status, message", [
    ("/api/system", {"run": "nope"}, 404, "unknown run"),
    ("/api/system", {}, 400, "run"),
    ("/api/system/at", {"run": "r"}, 400, "wall_time"),
    ("/api/system/at", {"run": "r", "wall_time": "soon"}, 400, "wall_time"),
    ("/api/system/at", {"run": "r", "wall_time": "inf"}, 400, "wall_time"),
    ("/api/system/at", {"run": "nope", "wall_time": 1}, 404, "unknown run"),
    ("/api/system/series", {"run": "r", "host": "gamma"}, 404, "unknown host"),
    ("/api/system/series", {"run": "r"}, 400, "host"),
    ("/api/system/series", {"run": "r", "host": "alpha", "points": 0}, 400, "points"),
    ("/api/system/series", {"run": "r", "host": "alpha", "wall_min": 9, "wall_max": 1},
     400, "wall_min"),
])
def test_bad_requests_are_named_json_errors(api, path, params, status, message):
    response = api.get(path, params)
    assert response.status_code == status, response.text
    assert message in response.json()["error"]
