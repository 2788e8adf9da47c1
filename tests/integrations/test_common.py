"""What the integrations make of the trainers' configs and metrics (no trainer needed): a
config is never refused for a value that is no JSON, and a metric that is no number is
refused by name."""

from __future__ import annotations

import enum
import json
import math
from pathlib import Path

import numpy as np
import pytest

from visualdl.integrations.common import MAX_DEPTH, flat_hparams, metric_value, plain


class Color(enum.Enum):
    RED = 1


def test_plain_keeps_json_and_turns_the_rest_into_text():
    loop: dict = {}
    loop["self"] = loop
    out = plain({"lr": 0.1, "n": np.int64(3), "x": np.float32(0.5), "nan": math.nan,
                 "path": Path("/tmp/a"), "color": Color.RED, 1: "one", "t": (1, 2),
                 "none": None, "fn": len, "loop": loop})
    json.dumps(out, allow_nan=False)  # all of it is JSON
    assert out["lr"] == 0.1 and out["n"] == 3 and out["x"] == 0.5
    assert out["nan"] == "nan" and out["path"] == "/tmp/a" and out["color"] == "RED"
    assert out["1"] == "one" and out["t"] == [1, 2] and out["none"] is None
    assert out["fn"] == "<built-in function len>"
    depth, node = 0, out["loop"]
    while isinstance(node, dict):
        node, depth = node["self"], depth + 1
    assert depth == MAX_DEPTH - 1 and isinstance(node, str)  # a cycle ends as text


def test_flat_hparams_dots_nested_keys_and_keeps_lists_as_text():
    assert flat_hparams({"opt": {"lr": 0.1, "betas": [0.9, 0.99]}, "act": None, "on": True}) \
        == {"opt.lr": 0.1, "opt.betas": "[0.9, 0.99]", "act": "None", "on": True}


def test_metric_value_takes_numbers_and_one_element_arrays_only():
    assert metric_value("a", 2) == 2.0 and metric_value("a", np.float32(0.25)) == 0.25
    assert metric_value("a", np.array([1.5])) == 1.5
    with pytest.raises(TypeError, match="metric 'acc' must be a number or a one-element "
                                        "tensor, got str 'high'"):
        metric_value("acc", "high")
    with pytest.raises(TypeError, match="metric 'v' must be a number"):
        metric_value("v", np.ones(3))
