"""PR curves, writer side: counts at each threshold, then precision and recall; or the
caller's own columns (torch's ``add_pr_curve_raw``), at thresholds ``i / (n - 1)`` as
TensorBoard's PR-curve plugin lays them out."""

from __future__ import annotations

from typing import Any

import numpy as np

from visualdl.kinds import curves
from visualdl.kinds.checks import require_real, to_array

_RAW = ("true_positive_counts", "false_positive_counts", "true_negative_counts",
        "false_negative_counts", "precision", "recall")


def check(tag: str, labels: Any, predictions: Any, num_thresholds: Any = 127,
          weights: Any = None, raw: dict | None = None) -> tuple[Any, int]:
    """The payload ``encode`` takes, and its size. ``raw`` maps the six column names of
    torch's ``add_pr_curve_raw`` to equal-length sequences, in place of labels."""
    if raw is None:
        return curves.check(tag, labels, predictions, num_thresholds, weights)
    columns = {}
    for name in _RAW:
        array = to_array(tag, raw.get(name), name).astype(np.float64).reshape(-1)
        require_real(tag, array, name)
        if not np.isfinite(array).all():
            raise ValueError(f"{tag!r}: {name} holds NaN or infinite values")
        columns[name] = array
    lengths = {len(a) for a in columns.values()}
    if len(lengths) != 1 or not lengths.pop():
        raise ValueError(f"{tag!r}: the six columns of add_pr_curve_raw must have the same "
                         f"non-zero length, got {[len(a) for a in columns.values()]}")
    return columns, sum(a.nbytes for a in columns.values())


def encode(msg: Any, payload: Any) -> None:
    if isinstance(payload, dict):
        n = len(payload["precision"])
        msg.thresholds.extend((np.arange(n) / (n - 1) if n > 1 else np.zeros(1)).tolist())
        for field, name in zip(("tp", "fp", "tn", "fn", "precision", "recall"), _RAW):
            getattr(msg, field).extend(payload[name].tolist())
        return
    c = curves.encode(msg, payload)
    msg.precision.extend(curves.safe_ratio(c.tp, c.tp + c.fp, 1.0).tolist())
    msg.recall.extend(curves.safe_ratio(c.tp, c.tp + c.fn, 0.0).tolist())
