"""The order the scalars page opens on: what a user looks at first, not the alphabet.

A tag's *tier*, from the words of its name (split at ``/ _ . -`` and spaces, any case):

0. a loss (a word starting or ending with ``loss``) of training: ``loss``, ``train/loss``,
   ``loss_G``, ``celoss`` (not ``glossary``);
1. a loss of evaluation (a word among ``EVAL_WORDS``: ``eval``, ``val``, ``test``, ...);
2. a main metric (a word among ``METRIC_WORDS``: ``acc``, ``accuracy``, ``f1``, ``auc``,
   ...; with its digits dropped: ``top1``, ``acc5``) of training;
3. a main metric of evaluation;
4. anything else.

A section (the part of a tag before its first ``/``; "" for tags without one) ranks by its
best tag's tier, then by its last update (the newest point of any of its tags in any run:
the most recently updated first), then by name; tags within a section by tier, then name.
So a logdir whose sections are ``activations/``, ``params/`` and ``train/`` opens on
``train/loss``, not on nine ``activations/...`` charts. Pinned charts, custom layouts and
charts made on the page come before all of these, as before.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable

__all__ = ["tier", "section_of", "order", "METRIC_WORDS", "EVAL_WORDS"]

METRIC_WORDS = frozenset({
    "acc", "accuracy", "f1", "auc", "auroc", "roc", "precision", "recall", "ap", "map",
    "iou", "miou", "dice", "bleu", "rouge", "ppl", "perplexity", "error", "err", "top",
    "mae", "mse", "rmse", "r2", "wer", "cer", "reward", "return", "score", "metric",
})
EVAL_WORDS = frozenset({"eval", "evaluation", "val", "valid", "validation", "test", "dev"})
_SPLIT = re.compile(r"[/_.\-\s]+")


def _words(tag: str) -> list[str]:
    return [w for w in _SPLIT.split(tag.lower()) if w]


def tier(tag: str) -> int:
    """The tag's tier (see the module's docstring): 0 is looked at first."""
    words = _words(tag)
    evaluation = any(w in EVAL_WORDS for w in words)
    if any(w.startswith("loss") or w.endswith("loss") for w in words):
        return 1 if evaluation else 0
    if any(w.rstrip("0123456789") in METRIC_WORDS or w in METRIC_WORDS for w in words):
        return 3 if evaluation else 2
    return 4


def section_of(tag: str) -> str:
    """The section a tag's chart is in: the part before the first ``/`` ("" if none)."""
    return tag.split("/", 1)[0] if "/" in tag else ""


def order(last_updates: dict[str, float | None]) -> dict[str, Any]:
    """``{"sections": [{"name", "tier", "last_update"}], "tags": [...]}`` in the order the
    page opens on, from each tag's last update (None: no point yet)."""
    sections: dict[str, list[str]] = {}
    for tag in last_updates:
        sections.setdefault(section_of(tag), []).append(tag)
    rows = []
    for name, tags in sections.items():
        times = [t for t in (last_updates[tag] for tag in tags)
                 if t is not None and math.isfinite(t)]
        rows.append({"name": name, "tier": min(tier(t) for t in tags),
                     "last_update": max(times) if times else None})
    rows.sort(key=lambda r: (r["tier"], -(r["last_update"] or -math.inf), r["name"]))
    tags = [t for r in rows for t in sorted(sections[r["name"]], key=lambda t: (tier(t), t))]
    return {"sections": rows, "tags": tags}


def last_updates(data: Any, runs: Iterable[str]) -> dict[str, float | None]:
    """Each scalar tag's newest wall time over ``runs`` (``scalar_ends``: no series read)."""
    out: dict[str, float | None] = {}
    for run in runs:
        try:
            tags = data.tags(run).get("scalar", ())
        except KeyError:
            continue
        for tag in tags:
            try:
                ends = data.scalar_ends(run, tag)
            except KeyError:
                continue
            last = ends[2] if ends else None
            have = out.get(tag)
            out[tag] = last if have is None else (have if last is None else max(have, last))
    return out
