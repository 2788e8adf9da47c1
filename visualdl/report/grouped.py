"""Run grouping in a report, as the scalars page draws it (``group=re:<regex>`` or
``group=hp:<name>,<name>`` in the view's URL): each per-tag chart shows a line per group
(the members' mean or median) and a band (``gstat``, ``gband``), computed by the same code
as ``/api/scalars/groups`` (:mod:`visualdl.series.groups`) at the view's smoothing."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from visualdl.kinds.config.merge import group_values
from visualdl.series.groups import BANDS, STATS, GroupSpec, group_runs, group_stats
from visualdl.series.patterns import PatternError
from visualdl.report.select import ReportError

__all__ = ["parse_group", "grouped_chart"]


def parse_group(text: str, stat: str, band: str) -> GroupSpec | None:
    """The grouping of a view's ``group`` value (None: no grouping, as the page reads an
    empty or unknown one); ``ReportError`` naming a bad regex, stat or band."""
    if stat not in STATS:
        raise ReportError(f"gstat must be one of: {', '.join(STATS)} (not {stat!r})")
    if band not in BANDS:
        raise ReportError(f"gband must be one of: {', '.join(BANDS)} (not {band!r})")
    if text.startswith("re:") and len(text) > 3:
        spec = GroupSpec(regex=text[3:])
        try:
            spec.compiled()
        except PatternError as err:
            raise ReportError(f"group: {err}") from None
        return spec
    if text.startswith("hp:"):
        names = tuple(h.strip() for h in text[3:].split(",") if h.strip())
        return GroupSpec(hparams=names) if names else None
    return None


def grouped_chart(data: Any, runs: list[str], tag: str, spec: GroupSpec, smoothing: float,
                  stat: str, band: str, points: int,
                  encode: Callable[[np.ndarray], dict]) -> tuple[list[dict], int, int]:
    """The groups of one tag's chart (JSON-ready), the points kept and the members' total."""
    series = {run: data.scalars(run, tag) for run in runs
              if tag in data.tags(run).get("scalar", ())}
    out, kept, total = [], 0, 0
    for name, members in group_runs(series, spec, group_values(data)).items():
        result = group_stats([(series[r].steps, series[r].values) for r in members],
                             smoothing=smoothing, stat=stat, band=band, points=points)
        kept += len(result.steps)
        total += sum(len(series[r].values) for r in members)
        out.append({"name": name, "members": [runs.index(r) for r in members],
                    "x": encode(result.steps), "c": encode(result.center),
                    "lo": encode(result.lower), "hi": encode(result.upper)})
    return out, kept, total
