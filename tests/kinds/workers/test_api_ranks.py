"""The rank-aware API against a real server on 127.0.0.1: ``/api/ranks``,
``/api/runs/workers``, ``/api/checkpoints``, ``rank=`` on the scalar routes and the
per-rank overlay ``/api/scalars/ranks``."""

import csv
import io
import socket

import pytest

from tests.helpers.http import client_of
from tests.helpers.ranks import CHECKPOINTS, RESIZES, STEPS, T0, WORLD, rank_value, write_ranked


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with client_of(write_ranked(tmp_path_factory.mktemp("ranks"))) as client:
        yield client


def test_ranks_of_a_data_parallel_run(api):
    body = api.json("/api/ranks", run="dp")
    assert [r["rank"] for r in body["ranks"]] == list(range(WORLD))
    assert all(r["world_size"] == WORLD and r["host"] == socket.gethostname()
               for r in body["ranks"])
    assert [(x["restart"], x["step"], x["world_size"]) for x in body["resizes"]] == RESIZES
    assert body["resizes"][0]["rank"] == 0  # recorded by ranks 0 and 1: listed once
    assert body["restarts"] == 2 and body["world_size"] == RESIZES[-1][2]


def test_ranks_of_a_single_process_run(api):
    body = api.json("/api/ranks", run="one")
    assert body == {"run": "one", "ranks": [], "resizes": [], "world_size": None,
                    "restarts": 0}
    assert api.get("/api/ranks", run="nope").status_code == 404
    assert api.get("/api/ranks").status_code == 400


def test_run_table_columns(api):
    assert api.json("/api/runs/workers")["runs"] == {
        "dp": {"world_size": RESIZES[-1][2], "restarts": 2}}
    assert api.json("/api/runs/workers", run="one")["runs"] == {}


def test_checkpoints(api):
    body = api.json("/api/checkpoints", run="dp")
    assert [(c["step"], c["path"], c["rank"]) for c in body["checkpoints"]] == [
        (step, path, 0) for step, path in CHECKPOINTS]
    assert body["checkpoints"][0]["wall_time"] == T0 + CHECKPOINTS[0][0] + 0.5
    assert api.json("/api/checkpoints", run="one")["checkpoints"] == []
    assert api.get("/api/checkpoints", run="nope").status_code == 404


def test_scalars_default_to_rank0_and_take_a_rank(api):
    default = api.json("/api/scalars", run="dp", tag="loss")
    assert default["values"] == [rank_value(0, s) for s in range(STEPS)]
    assert "rank" not in default and default["default_rank"] == 0  # the chart's note
    assert "default_rank" not in api.json("/api/scalars", run="one", tag="loss")  # one process
    for rank in range(WORLD):
        got = api.json("/api/scalars", run="dp", tag="loss", rank=rank)
        assert got["rank"] == rank and got["steps"] == list(range(STEPS))
        assert got["values"] == [rank_value(rank, s) for s in range(STEPS)]
    zoomed = api.json("/api/scalars", run="dp", tag="loss", rank=2, start_step=5, end_step=7,
                      smoothing=0.5)
    assert zoomed["values"] == [rank_value(2, s) for s in (5, 6, 7)]
    assert zoomed["smoothed"][0] > rank_value(2, 0)  # the rank's own EMA, not rank 0's
    assert api.json("/api/scalars", run="one", tag="loss", rank=0)["values"] == [
        float(s) for s in range(STEPS)]


@pytest.mark.parametrize("run, rank, status, words", [
    ("dp", 7, 404, "unknown rank 7 for this run (its ranks: 0, 1, 2)"),
    ("one", 1, 404, "unknown rank 1 for this run (its ranks: none: one process)"),
    ("dp", -1, 400, "parameter rank must be between 0 and"),
    ("dp", "x", 400, "parameter rank must be an integer"),
])
def test_bad_rank(api, run, rank, status, words):
    response = api.get("/api/scalars", run=run, tag="loss", rank=rank)
    assert response.status_code == status and words in response.text


def test_batch_items_take_a_rank(api):
    body = api.post("/api/scalars/batch", json={"series": [
        {"run": "dp", "tag": "loss", "rank": 1}, {"run": "dp", "tag": "loss"},
        {"run": "dp", "tag": "loss", "rank": 9}], "points": 100}).json()
    first, second, bad = body["series"]
    assert first["values"] == [rank_value(1, s) for s in range(STEPS)]
    assert second["values"] == [rank_value(0, s) for s in range(STEPS)]
    assert "unknown rank 9" in bad["error"]


def test_overlay_has_every_rank_downsampled(api):
    body = api.json("/api/scalars/ranks", run="dp", tag="loss", points=10)
    assert body["ranks"] == list(range(WORLD))
    for rank, series in zip(body["ranks"], body["series"]):
        assert series["rank"] == rank and series["total"] == STEPS
        assert series["downsampled"] and len(series["values"]) <= 10
        assert max(series["values"]) == rank_value(rank, STEPS - 1)  # min/max buckets
        assert min(series["values"]) == rank_value(rank, 0)
    one = api.json("/api/scalars/ranks", run="one", tag="loss")
    assert one["ranks"] == [0] and one["series"][0]["values"] == [float(s) for s in range(STEPS)]
    assert api.get("/api/scalars/ranks", run="dp", tag="nope").status_code == 404
    assert api.get("/api/scalars/ranks", run="nope", tag="loss").status_code == 404


def test_download_takes_the_rank_the_chart_shows(api):
    # runs that have the rank give its series; a run of one process its own, marked rank 0
    response = api.get("/api/scalars/download", params={"run": ["dp", "one"], "tag": "loss",
                                                        "rank": 2})
    assert response.status_code == 200 and "_rank2.csv" in response.headers["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.text)))
    assert rows[0] == ["run", "rank", "step", "wall_time", "value"]
    assert [float(r[4]) for r in rows[1:] if r[0] == "dp"] == [rank_value(2, s) for s in range(STEPS)]
    assert {r[1] for r in rows[1:] if r[0] == "dp"} == {"2"}
    assert [(r[1], float(r[4])) for r in rows[1:] if r[0] == "one"] == [
        ("0", float(s)) for s in range(STEPS)]
    body = api.get("/api/scalars/download", params={"run": "dp", "tag": "loss", "rank": 1,
                                                    "format": "json"}).json()
    assert body["series"][0]["rank"] == 1
    assert body["series"][0]["values"] == [rank_value(1, s) for s in range(STEPS)]
    # without a rank: rank 0's series, the columns as before
    rows = list(csv.reader(io.StringIO(api.get("/api/scalars/download",
                                               params={"run": "dp", "tag": "loss"}).text)))
    assert rows[0] == ["run", "step", "wall_time", "value"]
    assert [float(r[3]) for r in rows[1:]] == [rank_value(0, s) for s in range(STEPS)]
    # a combined chart's columns name the rank shown
    rows = list(csv.reader(io.StringIO(api.get("/api/scalars/download", params={
        "run": ["dp", "one"], "tag": ["loss", "no such tag"], "rank": 2}).text)))
    assert rows[0] == ["step", "dp (rank 2)/loss", "one/loss"]
    assert [float(r[1]) for r in rows[1:]] == [rank_value(2, s) for s in range(STEPS)]
    body = api.get("/api/scalars/download", params={
        "run": ["dp", "one"], "tag": ["loss", "no such tag"], "rank": 2, "format": "json"}).json()
    assert [(s["run"], s["rank"]) for s in body["series"]] == [("dp", 2), ("one", 0)]
