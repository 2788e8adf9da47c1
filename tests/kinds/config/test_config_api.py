"""/api/config, /api/runs/config and /api/compare, checked against what the runs logged."""

from __future__ import annotations

import pytest

from tests.kinds.config.logs import LOSSES


def test_config_of_a_run_nested_and_flat(cfg_client):
    body = cfg_client.json("/api/config", run="a")
    assert body["config"] == {"model": {"depth": 12, "layers": [64, 32]},
                              "optim": {"name": "adam", "lr": 0.001},
                              "seed": 1, "note": "first"}  # the Namespace merged over
    assert body["hparams"] == {}
    assert body["flat"] == {"model.depth": 12, "model.layers.0": 64, "model.layers.1": 32,
                            "note": "first", "optim.lr": 0.001, "optim.name": "adam",
                            "seed": 1}
    assert list(body["flat"]) == sorted(body["flat"])


def test_config_merged_with_hparams(cfg_client):
    body = cfg_client.json("/api/config", run="c")
    assert body["hparams"] == {"seed": 7, "batch": 32}
    assert body["flat"]["seed"] == 1  # the config wins over the hparams
    assert body["flat"]["batch"] == 32
    assert body["flat"]["model.layers.2"] == 16
    only_hparams = cfg_client.json("/api/config", run="hp")
    assert only_hparams["config"] == {}
    assert only_hparams["flat"] == {"layers": 3, "opt": "adam", "optim.lr": 0.1}


def test_config_unknown_run_and_missing_parameter(cfg_client):
    assert cfg_client.get("/api/config", run="nope").status_code == 404
    r = cfg_client.get("/api/config")
    assert r.status_code == 400 and "run" in r.json()["error"]


def test_runs_config_columns_only_differing_keys(cfg_client):
    body = cfg_client.json("/api/runs/config")
    assert body["runs"] == ["a", "b", "c", "hp"]
    assert body["same"] == {}  # hp lacks every config key
    assert body["columns"]["model.depth"] == [12, 24, 12, None]
    assert body["columns"]["optim.lr"] == [0.001, 0.001, 0.01, 0.1]
    assert body["columns"]["batch"] == [None, None, 32, None]


def test_compare_diff_only_by_default(cfg_client):
    body = cfg_client.json("/api/compare", params={"run": ["a", "b"]})
    diff = body["config"]
    assert diff["keys"] == ["model.depth", "note", "optim.name"]
    assert diff["values"] == {"model.depth": [12, 24], "note": ["first", None],
                              "optim.name": ["adam", "sgd"]}
    assert diff["missing"] == {"note": [1]}
    assert diff["same"] == 4 and diff["total"] == 7  # layers.0/1, optim.lr, seed
    every = cfg_client.json("/api/compare", params={"run": ["a", "b"], "all": "1"})["config"]
    assert every["keys"] == ["model.depth", "model.layers.0", "model.layers.1", "note",
                             "optim.lr", "optim.name", "seed"]
    assert every["values"]["optim.lr"] == [0.001, 0.001]


def test_compare_three_runs_number_equality(cfg_client):
    diff = cfg_client.json("/api/compare", params={"run": ["a", "b", "c"]})["config"]
    assert diff["keys"] == ["batch", "model.depth", "model.layers.2", "note", "optim.lr",
                            "optim.name"]
    assert diff["values"]["model.layers.2"] == [None, None, 16]


def test_compare_summaries_with_inferred_directions(cfg_client):
    body = cfg_client.json("/api/compare", params={"run": ["a", "b", "c"]})
    assert body["tags"] == ["eval/acc", "loss"]
    assert body["directions"] == {"eval/acc": "max", "loss": "min"}
    a, b, c = body["summaries"]["loss"]
    assert a == {"points": 4, "direction": "min", "last": 1.5, "last_step": 30, "min": 1.0,
                 "max": 4.0, "best": 1.0, "best_step": 20}
    assert b["best"] == 0.5 and b["best_step"] == 20 and b["last"] == 0.75
    assert c["min"] == 3.25 and c["best_step"] == 30 and c["max"] == 5.0
    acc = body["summaries"]["eval/acc"]
    assert [s["best"] for s in acc] == [0.5, 0.9, 0.6]
    assert [s["best_step"] for s in acc] == [15, 25, 5]
    assert "diff;dur=" in cfg_client.get(
        "/api/compare", params={"run": ["a", "b"]}).headers["Server-Timing"]


def test_compare_direction_set_and_post(cfg_client):
    body = cfg_client.json("/api/compare", params={"run": ["a", "c"], "tag": "loss",
                                                   "dir": "loss:max"})
    assert body["directions"] == {"loss": "max"}
    assert [s["best_step"] for s in body["summaries"]["loss"]] == [0, 0]
    assert [s["best"] for s in body["summaries"]["loss"]] == [max(LOSSES["a"]), 5.0]
    r = cfg_client.post("/api/compare", json={"runs": ["a", "hp"], "tags": ["loss", "lr"],
                                              "directions": {"lr": "min"}, "all": False})
    assert r.status_code == 200
    posted = r.json()
    assert posted["summaries"]["loss"][1] == {
        "points": 1, "direction": "min", "last": 1.0, "last_step": 0, "min": 1.0,
        "max": 1.0, "best": 1.0, "best_step": 0}
    assert posted["summaries"]["lr"] == [None, None]  # no run has the tag
    assert "optim.lr" in posted["config"]["keys"] and "opt" in posted["config"]["keys"]


@pytest.mark.parametrize("params, status, words", [
    ({"run": ["a"]}, 400, "2 to 100"),
    ({"run": ["a", "nope"]}, 404, "unknown run"),
    ({"run": ["a", "b"], "dir": "loss:up"}, 400, "min"),
    ({"run": ["a", "b"], "dir": "loss"}, 400, "tag:min"),
    ({"run": [f"r{i}" for i in range(101)]}, 400, "2 to 100"),
])
def test_compare_bad_requests(cfg_client, params, status, words):
    r = cfg_client.get("/api/compare", params=params)
    assert r.status_code == status and words in r.json()["error"]


@pytest.mark.parametrize("body, words", [
    ([1, 2], "JSON object"),
    ({"runs": "ab"}, "runs must be a list"),
    ({"runs": ["a", "b"], "all": "yes"}, "all must be"),
    ({"runs": ["a", "b"], "directions": []}, "directions must be"),
    ({"runs": ["a", "b"], "tags": [1]}, "tags must be"),
])
def test_compare_bad_bodies(cfg_client, body, words):
    r = cfg_client.post("/api/compare", json=body)
    assert r.status_code == 400 and words in r.json()["error"]


def test_group_runs_by_a_config_key(cfg_client):
    r = cfg_client.post("/api/scalars/groups", json={
        "tag": "loss", "runs": ["a", "b", "c", "hp"], "hparams": ["model.depth"],
        "stat": "mean", "band": "minmax", "smoothing": 0})
    assert r.status_code == 200, r.text
    groups = {g["name"]: g for g in r.json()["groups"]}
    assert groups["model.depth=12"]["members"] == ["a", "c"]
    assert groups["model.depth=24"]["members"] == ["b"]
    assert groups["model.depth=12"]["center"] == [4.5, 3.0, 2.25, 2.375]


def test_runs_config_etag_follows_the_configs(cfg_client):
    first = cfg_client.get("/api/runs/config")
    again = cfg_client.get("/api/runs/config", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
