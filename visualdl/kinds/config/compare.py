"""Runs compared: which config keys differ, and a summary of each scalar tag per run (last,
min, max, and the step of the best value, in the tag's direction).

A tag's direction is inferred from the words of its name (``val/loss``: minimise;
``eval/top1_acc``: maximise) unless the caller sets it; a name that says neither has no
best value.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Iterable

import numpy as np

from visualdl.kinds.config.merge import RunConfig

__all__ = ["MISSING", "MINIMISE", "MAXIMISE", "config_diff", "default_tags", "infer_direction",
           "summarize", "uniform"]

MINIMISE = frozenset({
    "loss", "losses", "error", "err", "errors", "perplexity", "ppl", "mse", "mae", "rmse",
    "nll", "cost", "wer", "cer", "ter", "regret", "distance", "fid", "kl", "divergence",
    "bpd", "bpc", "latency", "lpips",
})
MAXIMISE = frozenset({
    "acc", "accuracy", "f1", "auc", "roc", "precision", "prec", "recall", "map", "iou",
    "miou", "bleu", "rouge", "score", "reward", "return", "r2", "top1", "top5", "dice",
    "psnr", "ssim", "mcc", "kappa", "ndcg", "mrr", "hit", "hits", "throughput", "em",
})
_WORDS = re.compile(r"[a-z]+[0-9]*|[0-9]+")
MISSING = ("missing",)  # a key a run lacks: differs from every value, null included


def infer_direction(tag: str) -> str | None:
    """``"min"``, ``"max"`` or None, from the last path part of ``tag`` (its last word that
    says one: ``train/loss_acc`` would be ``max``; ``val_loss`` is ``min``)."""
    words = _WORDS.findall(tag.rsplit("/", 1)[-1].lower().replace("_", " "))
    for word in reversed(words):
        base = word.rstrip("0123456789") if word not in MAXIMISE else word
        if word in MINIMISE or base in MINIMISE:
            return "min"
        if word in MAXIMISE or base in MAXIMISE:
            return "max"
    return None


def _ident(value: Any) -> Any:
    """A hashable identity under which equal config values are equal: 1 and 1.0 are (the
    same number in YAML), True and 1 are not, containers by their JSON."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, (dict, list)):
        return ("j", json.dumps(value, sort_keys=True))
    return ("s", value)


def uniform(column: list) -> bool:
    """Whether every value of ``column`` is the same (``MISSING`` differs from any value)."""
    return len({MISSING if v is MISSING else _ident(v) for v in column}) <= 1


def config_diff(configs: list[RunConfig], everything: bool = False) -> dict[str, Any]:
    """``keys``: the dotted keys whose values are not the same in every run (a key some run
    lacks differs), sorted, or every key with ``everything``; ``values``: per key, a value
    per run (None where a run lacks it, and ``missing`` lists those runs' indices);
    ``same``: how many keys are the same everywhere."""
    union = sorted({key for c in configs for key in c.flat})
    keys, values, missing, same = [], {}, {}, 0
    for key in union:
        column = [c.flat.get(key, MISSING) for c in configs]
        differs = not uniform(column)
        same += not differs
        if differs or everything:
            keys.append(key)
            values[key] = [None if v is MISSING else v for v in column]
            absent = [i for i, v in enumerate(column) if v is MISSING]
            if absent:
                missing[key] = absent
    return {"keys": keys, "values": values, "missing": missing, "same": same,
            "total": len(union)}


def summarize(steps: np.ndarray, values: np.ndarray, direction: str | None) -> dict[str, Any]:
    """``points``, ``last`` (value and step), ``min``, ``max`` over the finite values, and
    ``best``/``best_step`` (the first step where the best value was reached) when a
    direction is known; None where there is no finite value."""
    out: dict[str, Any] = {"points": int(values.shape[0]), "direction": direction,
                           "last": None, "last_step": None, "min": None, "max": None,
                           "best": None, "best_step": None}
    if not values.shape[0]:
        return out
    out["last"], out["last_step"] = _finite(values[-1]), int(steps[-1])
    finite = np.isfinite(values)
    if not finite.any():
        return out
    vals = np.where(finite, values, np.nan)
    lo, hi = int(np.nanargmin(vals)), int(np.nanargmax(vals))
    out["min"], out["max"] = float(values[lo]), float(values[hi])
    if direction is not None:
        at = lo if direction == "min" else hi
        out["best"], out["best_step"] = float(values[at]), int(steps[at])
    return out


def _finite(value: Any) -> Any:
    v = float(value)
    if math.isfinite(v):
        return v
    return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")


def default_tags(tags_per_run: Iterable[Iterable[str]], limit: int) -> list[str]:
    """The scalar tags to summarise when none are asked for: those whose name says a
    direction, shared by most runs first, then by name; at most ``limit``."""
    counts: dict[str, int] = {}
    for tags in tags_per_run:
        for tag in tags:
            counts[tag] = counts.get(tag, 0) + 1
    known = [t for t in counts if infer_direction(t) is not None]
    return sorted(known, key=lambda t: (-counts[t], t))[:limit]
