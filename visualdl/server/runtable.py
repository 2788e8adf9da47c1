"""The run table: per run, its hyper-parameters, the last value of chosen scalar tags, and
its first and last wall time, as columns (2,000 runs x 20 hparams as rows would repeat
every name 2,000 times)."""

from __future__ import annotations

import math
from typing import Any

from visualdl.server.provider import DataProvider

__all__ = ["build_table"]


def build_table(data: DataProvider, tags: list[str]) -> dict[str, Any]:
    """Columns of the run table (see ``/api/runs/table``)."""
    runs = list(data.runs())
    starts: list[float | None] = []
    lasts: list[float | None] = []
    hparams: dict[str, list[Any]] = {}
    metrics: dict[str, list[float | str | None]] = {t: [] for t in tags}
    for i, run in enumerate(runs):
        try:
            scalar_tags = data.run_tags(run).get("scalar", [])
        except KeyError:
            scalar_tags = []
        first = last = None
        for tag in scalar_tags:
            try:  # the series' ends only: building 40,000 whole series would undo
                ends = data.scalar_ends(run, tag)  # the reader's compact layout
            except KeyError:
                continue
            if ends is not None:
                # merged by wall time (several files) or in write order: the ends are the
                # extremes in practice; min/max of the ends keeps it O(tags), not O(points).
                lo, hi = min(ends[1], ends[2]), max(ends[1], ends[2])
                first = lo if first is None else min(first, lo)
                last = hi if last is None else max(last, hi)
            if tag in metrics:
                metrics[tag].append(_json_float(ends[3]) if ends is not None else None)
        for tag, column in metrics.items():
            if len(column) == i:
                column.append(None)
        starts.append(first)
        lasts.append(last)
        try:
            found = data.hparams(run)
        except KeyError:
            found = None
        values = found.hparams if found is not None else {}
        for name, value in values.items():
            column = hparams.get(name)
            if column is None:
                column = hparams[name] = [None] * i
            column.append(value)
        for column in hparams.values():
            if len(column) == i:
                column.append(None)
    return {"runs": runs, "start_time": starts, "last_update": lasts,
            "hparams": dict(sorted(hparams.items())), "metrics": metrics}


def _json_float(value: Any) -> float | str:
    value = float(value)
    if math.isfinite(value):
        return value
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
