"""The HTTP API against a real server on 127.0.0.1 over real log files."""

from __future__ import annotations

import csv
import gzip
import io
import json
import math

import numpy as np
import pytest

from tests.helpers.logs import (
    EVAL_STEPS,
    EVAL_STRIDE,
    HOSTILE_RUN,
    HOSTILE_TAGS,
    LOSS_STEPS,
    SPIKE_STEP,
    eval_loss,
    loss_value,
)
from visualdl.series.downsample import minmax_indices


def strict_json(text: str):
    """Parse JSON the way a browser does: NaN/Infinity tokens are invalid."""

    def reject(token):
        raise ValueError(f"invalid JSON constant {token}")

    return json.loads(text, parse_constant=reject)


def assert_error(response, status: int) -> str:
    assert response.status_code == status
    assert response.headers["Content-Type"].startswith("application/json")
    body = strict_json(response.text)
    assert set(body) == {"error"} and isinstance(body["error"], str) and body["error"]
    return body["error"]


# -- runs, tags, info ----------------------------------------------------------------------------
def test_info(client, logdir):
    body = strict_json(client.get("/api/info").text)
    assert body["loaded"] is True
    assert body["logdirs"] == [str(logdir)]
    assert body["data_version"] >= 1
    assert body["errors"] == 0


def test_runs_sorted(client):
    assert client.get("/api/runs").json()["runs"] == sorted(["train", "eval", HOSTILE_RUN])


def test_tags_all_kinds_and_one_kind(client):
    every = client.get("/api/tags").json()["kinds"]
    assert set(every) == {"scalar"}
    one = client.get("/api/tags", params={"kind": "scalar"}).json()
    assert one["kind"] == "scalar"
    assert one["runs"]["train"] == ["loss", "metrics/acc", "special"]
    assert one["runs"]["eval"] == ["loss"]
    assert one["runs"][HOSTILE_RUN] == sorted(HOSTILE_TAGS)
    assert client.get("/api/tags", params={"kind": "image"}).json() == {"kind": "image", "runs": {}}
    assert_error(client.get("/api/tags", params={"kind": "nope"}), 400)


# -- scalars ---------------------------------------------------------------------------------------
def test_full_resolution_when_under_limit(client):
    body = strict_json(
        client.get("/api/scalars", params={"run": "train", "tag": "loss", "points": 5000}).text
    )
    assert body["total"] == LOSS_STEPS and body["downsampled"] is False
    assert body["steps"] == list(range(LOSS_STEPS))
    assert body["values"] == [loss_value(s) for s in range(LOSS_STEPS)]
    assert body["wall_times"] == [1000.0 + s for s in range(LOSS_STEPS)]


def test_downsampled_keeps_bucket_min_max(client):
    points = 100
    body = strict_json(
        client.get("/api/scalars", params={"run": "train", "tag": "loss", "points": points}).text
    )
    assert body["total"] == LOSS_STEPS and body["downsampled"] is True
    steps, values = body["steps"], body["values"]
    assert len(steps) <= points and len(steps) == len(values) == len(body["wall_times"])
    assert steps[0] == 0 and steps[-1] == LOSS_STEPS - 1
    assert steps == sorted(steps)
    assert SPIKE_STEP in steps and values[steps.index(SPIKE_STEP)] == 100.0
    for step, value in zip(steps, values):  # served points are real points, not averages
        assert value == loss_value(step)
    width = -(-LOSS_STEPS // ((points - 2) // 2))
    for start in range(0, LOSS_STEPS, width):
        bucket = range(start, min(start + width, LOSS_STEPS))
        vals = [loss_value(s) for s in bucket]
        assert bucket[vals.index(min(vals))] in steps
        assert bucket[vals.index(max(vals))] in steps


def test_default_points(client):
    body = client.get("/api/scalars", params={"run": "train", "tag": "loss"}).json()
    assert body["downsampled"] is True and len(body["steps"]) <= 1000


def test_nan_and_inf_are_valid_json(client):
    response = client.get("/api/scalars", params={"run": "train", "tag": "special"})
    body = strict_json(response.text)
    assert body["values"] == [1.0, "NaN", "Infinity", "-Infinity", 2.0]
    assert body["steps"] == [0, 1, 2, 3, 4]


def test_batch(client):
    response = client.post(
        "/api/scalars/batch",
        json={
            "points": 10,
            "series": [
                {"run": "train", "tag": "loss"},
                {"run": "eval", "tag": "loss"},
                {"run": "nope", "tag": "loss"},
                {"run": "eval", "tag": "nope"},
                {"run": 3},
            ],
        },
    )
    body = strict_json(response.text)
    first, second, unknown_run, unknown_tag, bad = body["series"]
    assert first["run"] == "train" and first["total"] == LOSS_STEPS and len(first["steps"]) <= 10
    assert second["run"] == "eval" and second["total"] == EVAL_STEPS
    eval_steps = [i * EVAL_STRIDE for i in range(EVAL_STEPS)]
    kept = minmax_indices(np.array([eval_loss(s) for s in eval_steps]), 10)
    assert second["steps"] == [eval_steps[i] for i in kept]  # eval's own points, min/max kept
    assert second["values"] == [eval_loss(s) for s in second["steps"]]
    assert unknown_run == {"run": "nope", "tag": "loss", "error": "unknown run"}
    assert unknown_tag["error"] and "error" in bad


def test_batch_bad_bodies(client):
    assert_error(client.post("/api/scalars/batch", data="nope"), 400)
    assert_error(client.post("/api/scalars/batch", json={"series": "x"}), 400)
    assert_error(client.post("/api/scalars/batch", json={"series": [], "points": "x"}), 400)
    too_many = [{"run": "train", "tag": "loss"}] * 2001
    assert_error(client.post("/api/scalars/batch", json={"series": too_many}), 400)
    assert_error(client.get("/api/scalars/batch"), 405)


def test_bad_parameters(client):
    assert_error(client.get("/api/scalars", params={"tag": "loss"}), 400)
    assert_error(client.get("/api/scalars", params={"run": "train"}), 400)
    for points in ("abc", "1", "-5", "10000001"):
        params = {"run": "train", "tag": "loss", "points": points}
        assert_error(client.get("/api/scalars", params=params), 400)


def test_unknown_run_tag_route_404(client):
    assert_error(client.get("/api/scalars", params={"run": "nope", "tag": "loss"}), 404)
    assert_error(client.get("/api/scalars", params={"run": "train", "tag": "nope"}), 404)
    assert_error(client.get("/api/nothing"), 404)
    assert_error(client.get("/nothing"), 404)
    assert_error(client.post("/api/runs"), 405)


# -- downloads -------------------------------------------------------------------------------------
def test_csv_download_full_resolution(client):
    response = client.get("/api/scalars/download", params={"run": "train", "tag": "loss"})
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/csv")
    assert "attachment" in response.headers["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.text)))
    assert rows[0] == ["run", "step", "wall_time", "value"]
    assert len(rows) == LOSS_STEPS + 1
    for step, row in enumerate(rows[1:]):
        assert row[0] == "train" and int(row[1]) == step
        assert float(row[2]) == 1000.0 + step and float(row[3]) == loss_value(step)


def test_csv_download_several_runs_and_nonfinite(client):
    response = client.get(
        "/api/scalars/download", params={"run": ["train", "eval"], "tag": "loss", "format": "csv"}
    )
    rows = list(csv.reader(io.StringIO(response.text)))[1:]
    assert [r[0] for r in rows].count("train") == LOSS_STEPS
    assert [r[0] for r in rows].count("eval") == EVAL_STEPS
    special = client.get("/api/scalars/download", params={"run": "train", "tag": "special"})
    values = [r[3] for r in list(csv.reader(io.StringIO(special.text)))[1:]]
    assert values == ["1.0", "nan", "inf", "-inf", "2.0"]
    assert [float(v) for v in values][4] == 2.0 and math.isnan(float(values[1]))


def test_json_download(client):
    response = client.get(
        "/api/scalars/download", params={"run": "train", "tag": "special", "format": "json"}
    )
    body = strict_json(response.text)
    assert body["tag"] == "special"
    (series,) = body["series"]
    assert series["run"] == "train"
    assert series["values"] == [1.0, "NaN", "Infinity", "-Infinity", 2.0]
    assert series["wall_times"] == [2000.0, 2001.0, 2002.0, 2003.0, 2004.0]


def test_download_errors(client):
    assert_error(client.get("/api/scalars/download", params={"tag": "loss"}), 400)
    params = {"run": "train", "tag": "loss", "format": "xml"}
    assert_error(client.get("/api/scalars/download", params=params), 400)
    assert_error(client.get("/api/scalars/download", params={"run": "x", "tag": "loss"}), 404)


# -- hostile names ---------------------------------------------------------------------------------
@pytest.mark.parametrize("tag", HOSTILE_TAGS)
def test_hostile_names_are_plain_keys(client, tag):
    body = client.get("/api/scalars", params={"run": HOSTILE_RUN, "tag": tag}).json()
    assert body["run"] == HOSTILE_RUN and body["tag"] == tag and body["values"] == [0.0, 1.0, 2.0]
    csv_body = client.get("/api/scalars/download", params={"run": HOSTILE_RUN, "tag": tag}).text
    assert HOSTILE_RUN in csv_body


def test_paths_are_never_joined(client):
    for run, tag in (("../../etc", "passwd"), ("/etc", "passwd"), ("train/../eval", "loss")):
        assert_error(client.get("/api/scalars", params={"run": run, "tag": tag}), 404)
    for path in ("/static/../../etc/passwd", "/static/%2e%2e/%2e%2e/etc/passwd", "/static//etc/passwd"):
        response = client.get(path)
        assert response.status_code == 404 and "root:" not in response.text


def test_error_and_json_bodies_are_not_html(client):
    response = client.get("/api/scalars", params={"run": HOSTILE_RUN, "tag": "nope"})
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "<script>" not in response.text  # the message never echoes the name


# -- transport -------------------------------------------------------------------------------------
def test_gzip_when_accepted(client):
    params = {"run": "train", "tag": "loss", "points": 5000}
    raw = client.get("/api/scalars", params=params, headers={"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in raw.headers
    zipped = client.get("/api/scalars", params=params, headers={"Accept-Encoding": "gzip"}, stream=True)
    assert zipped.headers["Content-Encoding"] == "gzip"
    body = gzip.decompress(zipped.raw.read())
    assert strict_json(body.decode()) == strict_json(raw.text)
    assert "Accept-Encoding" in zipped.headers["Vary"]


def test_etag_revalidation(client):
    params = {"run": "train", "tag": "loss"}
    first = client.get("/api/scalars", params=params)
    etag = first.headers["ETag"]
    again = client.get("/api/scalars", params=params, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize("path, params", [
    ("/api/runs", {}), ("/api/tags", {}), ("/api/tags", {"kind": "scalar"}),
])
def test_index_routes_revalidate(client, path, params):
    first = client.get(path, params=params)
    assert first.status_code == 200
    again = client.get(path, params=params, headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.content == b""


def test_index_and_static(client):
    index = client.get("/")
    assert index.status_code == 200 and "text/html" in index.headers["Content-Type"]
    assert "default-src 'self'" in index.headers["Content-Security-Policy"]
    # relative URLs (the app works under a path prefix), never a CDN
    assert 'src="static/js/app.js"' in index.text and "cdn" not in index.text.lower()
    module = client.get("/static/js/app.js")
    assert module.headers["Content-Type"].startswith("text/javascript")
    plotly = client.get("/static/vendor/plotly.min.js", headers={"Accept-Encoding": "gzip"}, stream=True)
    assert plotly.status_code == 200 and plotly.headers["Content-Encoding"] == "gzip"
    assert b"plotly.js" in gzip.decompress(plotly.raw.read())[:200]
    assert client.post("/api/reload").status_code == 202
