"""Seeded fuzzing of the grouping, windowed scalar, batch, run table and layouts routes
(issue 29): a few hundred requests built from the hostile classes (regexes assembled from
nesting, repeats with huge counts, alternations, backreferences and lookarounds; huge,
negative and non-finite numbers; bodies nested deep; run names that climb out of the
logdir). Every answer must be a 200 or a 4xx whose error names a parameter or the body,
within the client's deadline, and the server must still answer ``/api/runs`` at the end.
``tests/server/test_hostile_patterns.py`` holds the hand-picked cases."""

from __future__ import annotations

import json
import random

import pytest

from tests.helpers.http import Client, client_of
from tests.helpers.patterns import random_regex
from visualdl import LogWriter

SEED = 29
RUNS = ["a" * 40 + "_b", "lr0.1_seed" + "1" * 30, "x" * 30]
NUMBERS = ["9" * 400, "-" + "9" * 40, str(2 ** 63), str(-(2 ** 63) - 1), "1e400", "-1e400",
           "nan", "inf", "NaN", "Infinity", "-0", "0x10", "1_000", " 7", "", "3.5", "1e-400", "٣"]
def nested(rng: random.Random) -> str:
    n = rng.choice([10, 1000, 100_000])
    open_, close = rng.choice([("[", "]"), ('{"a":', "}")])
    return open_ * n + "1" + close * n


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz-routes")
    for i, run in enumerate(RUNS):
        with LogWriter(logdir=str(root / run)) as w:
            for step in range(20):
                w.add_scalar("loss", float(i * step), step, walltime=1e9 + step)
            w.add_hparams({"lr": 0.1 * (i + 1)}, ["loss"])
    with client_of(root, timeout=60.0, reload_interval=0.5) as c:
        yield c


def _check(response, what: str) -> None:
    assert response.status_code < 500, f"{what}: {response.status_code} {response.text[:300]}"
    if response.status_code >= 400:
        error = response.json()["error"]
        assert "parameter" in error or "body" in error or "JSON" in error or "run" in error, \
            f"{what}: {error}"


def test_fuzzed_group_regexes(client):
    rng = random.Random(SEED)
    for _ in range(150):
        regex = random_regex(rng)
        response = client.post("/api/scalars/groups", json={"tag": "loss", "regex": regex})
        _check(response, f"regex {regex[:80]!r}")
        if response.status_code == 200:
            members = sorted(m for g in response.json()["groups"] for m in g["members"])
            assert members == sorted(RUNS)
        else:
            assert "regex" in response.json()["error"]
    assert client.get("/api/runs").status_code == 200


def test_fuzzed_windows_and_numbers(client):
    rng = random.Random(SEED + 1)
    names = ["start_step", "end_step", "wall_min", "wall_max", "smoothing", "points"]
    for _ in range(120):
        params = {name: rng.choice(NUMBERS) for name in rng.sample(names, rng.randint(1, 3))}
        run = rng.choice(RUNS + ["../" * 5 + "etc", "/etc/passwd", "%00", "a/../" + RUNS[0]])
        response = client.get("/api/scalars", run=run, tag="loss", **params)
        _check(response, f"/api/scalars {params}")
        fields = ", ".join(f'"{k}": {_raw(v)}' for k, v in params.items())
        body = '{"series": [{"run": "%s", "tag": "loss", %s}]}' % (rng.choice(RUNS), fields)
        _check(_post_raw(client, "/api/scalars/batch", body), f"batch {body}")
        group = '{"tag": "loss", "regex": "seed", %s}' % fields
        _check(_post_raw(client, "/api/scalars/groups", group), f"groups {group}")
    assert client.get("/api/runs").status_code == 200


def _raw(text: str) -> str:
    """A JSON number token as it is (1e400 and 9...9 included), anything else a JSON string."""
    try:
        json.loads(text)
    except ValueError:
        return json.dumps(text)
    return text.strip()


def _post_raw(client: Client, path: str, body: str):
    return client.post(path, data=body, headers={"Content-Type": "application/json"})


def test_fuzzed_nested_bodies(client):
    rng = random.Random(SEED + 2)
    for _ in range(30):
        deep = nested(rng)
        for path, body in (("/api/scalars/batch", '{"series": ' + deep + "}"),
                           ("/api/scalars/batch", '{"series": [], "points": ' + deep + "}"),
                           ("/api/scalars/groups", '{"tag": "loss", "regex": ' + deep + "}"),
                           ("/api/scalars/groups", '{"tag": "loss", "hparams": ' + deep + "}")):
            _check(_post_raw(client, path, body), f"{path} nested")
    assert client.get("/api/runs").status_code == 200


def test_fuzzed_run_table_and_layouts(client):
    rng = random.Random(SEED + 3)
    for _ in range(40):
        tags = [random_regex(rng) for _ in range(rng.randint(1, 5))] + ["loss"]
        response = client.get("/api/runs/table", params={"tag": tags})
        _check(response, f"run table {tags}")
        assert response.status_code == 200
        metrics = response.json()["metrics"]
        assert set(metrics) == {t for t in tags if t}
    layouts = client.get("/api/scalars/layouts")
    assert layouts.status_code == 200
    assert client.get("/api/runs").status_code == 200
