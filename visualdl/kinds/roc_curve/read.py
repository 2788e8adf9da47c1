"""ROC curves, reader side: x is the false positive rate, y the true positive rate."""

from __future__ import annotations

from typing import Any

from visualdl.kinds.curves import CurveEvent, build_event


def build(msg: Any) -> CurveEvent:
    return build_event(msg, msg.fpr, msg.tpr)
