"""Every JSON body is strict JSON, whatever was logged (issue 13, item 5).

A NaN hyper-parameter used to make ``/api/hparams`` answer 500 ("Out of range float
values") for every run, and a plotly figure dict holding NaN was served as invalid JSON
(a bare ``NaN``). Non-finite numbers follow the documented convention instead: the strings
"NaN", "Infinity" and "-Infinity".
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogWriter
from visualdl.api.jsonio import _plain, dumps, dumps_bytes, float_list, plain_list


def _strict_loads(text: str):
    """json.loads that refuses NaN/Infinity literals, as a browser's JSON.parse does."""
    def refuse(name: str):
        raise AssertionError(f"invalid JSON literal {name}")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    root = tmp_path_factory.mktemp("nonfinite")
    with LogWriter(logdir=str(root / "nan_run")) as w:
        w.add_hparams({"lr": float("nan"), "wd": float("inf"), "name": "x"}, ["loss"])
        w.add_scalar("loss", float("-inf"), step=0)
        w.add_figure("fig", {"data": [{"x": [1, 2, 3], "y": [1.0, float("nan"), float("inf")]}],
                             "layout": {"title": {"text": "NaN in a string stays"}}}, step=0)
    with LogWriter(logdir=str(root / "ok_run")) as w:
        w.add_hparams({"lr": 0.1, "name": "y"}, ["loss"])
        w.add_scalar("loss", 0.5, step=0)
    with serving(root) as server:
        client = Client(server.url)
        yield client
        client.close()


def test_hparams_with_nan_are_served_to_every_run(api):
    response = api.get("/api/hparams")
    assert response.status_code == 200, response.text
    body = _strict_loads(response.text)
    rows = {row["run"]: row for row in body["runs"]}
    assert rows["nan_run"]["hparams"] == {"lr": "NaN", "wd": "Infinity", "name": "x"}
    assert rows["nan_run"]["metrics"] == {"loss": "-Infinity"}
    assert rows["ok_run"]["hparams"] == {"lr": 0.1, "name": "y"}
    assert rows["ok_run"]["metrics"] == {"loss": 0.5}


def test_plotly_figure_with_nan_is_strict_json(api):
    response = api.get("/api/figures/data", run="nan_run", tag="fig", step=0)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    figure = _strict_loads(response.text)
    assert figure["data"][0]["y"] == [1.0, "NaN", "Infinity"]
    assert figure["layout"]["title"]["text"] == "NaN in a string stays"


def test_encoder_converts_at_any_depth():
    from visualdl.api.jsonio import dumps

    obj = {"a": [1.0, {"b": (math.nan, -math.inf)}], "c": np.float32("inf"),
           "d": np.array([1.0, np.nan]), "e": "NaN"}
    assert _strict_loads(dumps(obj)) == {"a": [1.0, {"b": ["NaN", "-Infinity"]}], "c": "Infinity",
                                         "d": [1.0, "NaN"], "e": "NaN"}
    assert obj["a"][1]["b"][0] != obj["a"][1]["b"][0]  # the input is left alone
    assert _strict_loads(dumps({math.inf: 1, 1.5: math.nan})) == {"Infinity": 1, "1.5": "NaN"}


def test_encoder_handles_deep_nesting_without_recursion():
    from visualdl.api.jsonio import strict

    deep: list = []
    leaf = deep
    for _ in range(50_000):
        leaf.append([])
        leaf = leaf[0]
    leaf.append(math.nan)
    out = strict(deep)
    for _ in range(50_000):
        out = out[0]
    assert out == ["NaN"]


def test_stored_json_is_passed_through_when_already_strict():
    from visualdl.api.jsonio import strict_json_bytes

    raw = b'{"x": [1, 2], "label": "fine"}'
    assert strict_json_bytes(raw) is raw
    assert strict_json_bytes(b'[NaN, -Infinity]') == b'["NaN","-Infinity"]'
    with pytest.raises(ValueError):
        strict_json_bytes(b"[" * 100_000 + b"NaN" + b"]" * 100_000)


@pytest.mark.parametrize("body", [
    {"values": float_list(np.array([0.5, np.nan, np.inf, -np.inf])), "steps": list(range(40))},
    {"hparams": {"lr": float("nan"), "layers": [1.0] * 20 + [float("inf")]}},
    {"deep": [[1.0] * 20, [float("-inf")] * 20], "keys": {"a": [True] * 30}},
    {"mixed": [1.0, "x", None, 2] * 10, "big": 2 ** 70, "text": "café \ud800 ☃"},
    {1: "int key", 2.5: [np.float32(1.5), np.int64(3)]},
    {"overflow": [1e308] * 20},
])
def test_fast_and_strict_encoders_give_the_same_json(body):
    """Responses go through msgspec when the body is plain and finite, through the strict
    encoder otherwise: the JSON values must be the same either way, NaN convention kept."""
    fast = _strict_loads(dumps_bytes(body).decode("utf-8"))
    assert fast == _strict_loads(dumps(body))


def test_a_big_batch_takes_the_fast_encoder():
    series = [{"run": f"r{i}", "steps": list(range(500)),
               "values": float_list(np.linspace(0, 1, 500))} for i in range(50)]
    assert _plain({"series": series})
    assert not _plain({"series": series + [{"values": [float("nan")] * 40}]})
    assert json.loads(dumps_bytes({"series": series})) == json.loads(dumps({"series": series}))


def test_a_plain_list_is_taken_as_it_is():
    # a graph view's boxes, built plain by the view code: not walked, encoded the same
    boxes = [{"id": f"n{i}", "x": i / 10, "lines": [["k", "v"]], "shape": [1, None, "N"]}
             for i in range(1000)]
    assert _plain({"nodes": plain_list(boxes)})
    assert json.loads(dumps_bytes({"nodes": plain_list(boxes)})) == {"nodes": boxes}
    assert not _plain({"nodes": boxes + [{"x": float("nan")}]})  # walked: NaN found
    # not walked: the caller's word is taken (a NaN inside would be encoded as null)
    assert _plain({"nodes": plain_list([{"x": float("nan")}])})
