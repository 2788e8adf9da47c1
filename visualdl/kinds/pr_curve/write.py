"""PR curves, writer side: counts at each threshold, then precision and recall."""

from __future__ import annotations

from typing import Any

from visualdl.kinds import curves

check = curves.check


def encode(msg: Any, payload: tuple) -> None:
    c = curves.encode(msg, payload)
    msg.precision.extend(curves.safe_ratio(c.tp, c.tp + c.fp, 1.0).tolist())
    msg.recall.extend(curves.safe_ratio(c.tp, c.tp + c.fn, 0.0).tolist())
