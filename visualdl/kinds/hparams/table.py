"""The run table: per run, its hyper-parameters (its latest ``add_hparams``), the last value
of chosen scalar tags, and its first and last wall time. One table behind the sidebar's run
list (``/api/runs/table``), the HParams view (``/api/hparams``) and ``visualdl export``'s
``hparams.parquet``.

Every value comes from the cheap ends of each series (``scalar_ends``): building 40,000
whole series to read their last values would undo the reader's compact layout. ``data`` is
anything with ``runs()``, ``tags(run)``, ``scalar_ends(run, tag)`` and ``hparams(run)``: a
server's data provider or a ``LogReader``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

__all__ = ["RunRow", "run_table", "hparam_names", "metric_names"]


@dataclass
class RunRow:
    """One run of the table. ``hparams``: its latest hyper-parameters (empty when it has
    none: then ``hparams_time`` is None); ``metric_tags``: the metrics that ``add_hparams``
    named; ``metrics``: the last value of each tag asked for (None where it has none);
    ``start``/``last``: the first and last wall time over its scalars."""

    run: str
    hparams: dict[str, Any] = field(default_factory=dict)
    hparams_time: float | None = None
    metric_tags: tuple[str, ...] = ()
    metrics: dict[str, float | None] = field(default_factory=dict)
    start: float | None = None
    last: float | None = None


def run_table(data: Any, metrics: Iterable[str] = (), runs: Iterable[str] | None = None,
              declared: bool = False) -> list[RunRow]:
    """A row per run (all of ``data``'s, or ``runs``), with the last values of ``metrics``;
    ``declared`` adds the metrics every run's ``add_hparams`` named."""
    rows = []
    for run in (data.runs() if runs is None else runs):
        row = RunRow(run)
        try:
            event = data.hparams(run)
            scalar_tags = data.tags(run).get("scalar", [])
        except KeyError:  # vanished meanwhile
            continue
        if event is not None:
            row.hparams, row.hparams_time = dict(event.hparams), event.wall_time
            row.metric_tags = tuple(event.metric_tags)
        rows.append((row, scalar_tags))
    wanted = list(dict.fromkeys(metrics))
    if declared:
        wanted = list(dict.fromkeys([*wanted, *metric_names(row for row, _ in rows)]))
    for row, scalar_tags in rows:
        row.metrics = dict.fromkeys(wanted)
        for tag in scalar_tags:
            try:
                ends = data.scalar_ends(row.run, tag)
            except KeyError:
                continue
            if ends is None:
                continue
            # merged by wall time (several files) or in write order: the ends are the
            # extremes in practice; min/max of the ends keeps it O(tags), not O(points)
            lo, hi = min(ends[1], ends[2]), max(ends[1], ends[2])
            row.start = lo if row.start is None else min(row.start, lo)
            row.last = hi if row.last is None else max(row.last, hi)
            if tag in row.metrics:
                row.metrics[tag] = float(ends[3])
    return [row for row, _ in rows]


def hparam_names(rows: Iterable[RunRow]) -> list[str]:
    """Every hyper-parameter's name over ``rows``, sorted (the same order on every start)."""
    return sorted({name for row in rows for name in row.hparams})


def metric_names(rows: Iterable[RunRow]) -> list[str]:
    """The metric tags the runs' ``add_hparams`` named, in the order first named."""
    return list(dict.fromkeys(tag for row in rows for tag in row.metric_tags))
