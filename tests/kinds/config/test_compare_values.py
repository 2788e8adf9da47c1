"""The comparison's pure parts: directions from tag names, summaries over non-finite values,
and which keys differ."""

from __future__ import annotations

import math

import numpy as np
import pytest

from visualdl.kinds.config.compare import config_diff, infer_direction, summarize
from visualdl.kinds.config.merge import RunConfig


@pytest.mark.parametrize("tag, direction", [
    ("loss", "min"), ("train/val_loss", "min"), ("eval/top1_acc", "max"),
    ("perplexity", "min"), ("valid/ppl", "min"), ("mse", "min"), ("error_rate", "min"),
    ("f1_score", "max"), ("eval/mAP", "max"), ("bleu4", "max"), ("auc", "max"),
    ("precision", "max"), ("recall", "max"), ("loss2", "min"),
    ("train/lr", None), ("grad_norm", None), ("accuracy/loss", "min"),
])
def test_direction_from_the_name(tag, direction):
    assert infer_direction(tag) == direction


def test_summary_over_non_finite_values():
    steps = np.array([0, 10, 20, 30, 40])
    values = np.array([math.nan, 3.0, 1.0, 1.0, math.inf])
    assert summarize(steps, values, "min") == {
        "points": 5, "direction": "min", "last": "Infinity", "last_step": 40, "min": 1.0,
        "max": 3.0, "best": 1.0, "best_step": 20}  # the first step reaching the best
    assert summarize(steps, values, None)["best"] is None
    assert summarize(steps, values, "max")["best_step"] == 10
    empty = summarize(np.array([], np.int64), np.array([]), "max")
    assert empty["points"] == 0 and empty["last"] is None and empty["best"] is None
    nan_only = summarize(np.array([1]), np.array([math.nan]), "min")
    assert nan_only["last"] == "NaN" and nan_only["min"] is None


def test_diff_equality_rules():
    runs = [RunConfig("a", flat={"n": 1, "f": True, "l": [], "s": "x", "z": None}),
            RunConfig("b", flat={"n": 1.0, "f": 1, "l": [], "s": "x"})]
    diff = config_diff(runs)
    assert diff["keys"] == ["f", "z"]  # 1 == 1.0; True != 1; a missing key differs from None
    assert diff["values"] == {"f": [True, 1], "z": [None, None]}
    assert diff["missing"] == {"z": [1]}
    assert (diff["same"], diff["total"]) == (3, 5)
