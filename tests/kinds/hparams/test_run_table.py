"""/api/runs/table: hparams, last values of chosen tags, first and last wall time."""

from __future__ import annotations

from tests.helpers.sweep import LRS, SEEDS, SWEEP_STEPS, sweep_runs, sweep_value


def test_table_columns(client):
    body = client.json("/api/runs/table", params={"tag": ["loss", "acc", "missing"]})
    runs = body["runs"]
    assert runs == sorted(sweep_runs() + ["long"])
    assert set(body["hparams"]) == {"lr", "seed", "opt"}
    for lr in LRS:
        for seed in SEEDS:
            i = runs.index(f"lr{lr}_seed{seed}")
            assert body["hparams"]["lr"][i] == lr
            assert body["hparams"]["seed"][i] == seed
            assert body["hparams"]["opt"][i] == ("adam" if seed else "sgd")
            last_step = SWEEP_STEPS - 1 if seed != 2 else (SWEEP_STEPS - 1) // 3 * 3
            assert body["metrics"]["loss"][i] == sweep_value(lr, seed, last_step)
            assert body["metrics"]["acc"][i] == 0.5 + lr + seed
            assert body["metrics"]["missing"][i] is None
            assert body["start_time"][i] == 1000.0 + seed
            assert body["last_update"][i] == 1000.0 + last_step + seed
    i = runs.index("long")
    assert body["hparams"]["lr"][i] is None and body["metrics"]["loss"][i] is None
    assert body["start_time"][i] == 2000.0


def test_table_without_tags_and_etag(client):
    r = client.get("/api/runs/table")
    assert r.status_code == 200 and r.json()["metrics"] == {}
    again = client.get("/api/runs/table", headers={"If-None-Match": r.headers["ETag"]})
    assert again.status_code == 304
