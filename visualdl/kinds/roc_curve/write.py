"""ROC curves, writer side: counts at each threshold, then true and false positive rates."""

from __future__ import annotations

from typing import Any

from visualdl.kinds import curves

check = curves.check


def encode(msg: Any, payload: tuple) -> None:
    c = curves.encode(msg, payload)
    msg.tpr.extend(curves.safe_ratio(c.tp, c.tp + c.fn, 0.0).tolist())
    msg.fpr.extend(curves.safe_ratio(c.fp, c.fp + c.tn, 0.0).tolist())
