"""What a report shows: the runs and tags asked for, by name and regex or by a saved view's
URL (the dashboard keeps its state in the query string: ``web/js/shared/state.js``), checked
against what the logs hold before anything is written, so that a typo is an error that
names it instead of an empty report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping
from urllib.parse import parse_qs, urlsplit

from visualdl.series.patterns import PatternError, compile_pattern

__all__ = ["ReportError", "Selection", "selection_from_query", "selection_from_url",
           "resolve"]

#: the scalars page's default smoothing (web/js/views/scalars/settings.js)
DEFAULT_SMOOTHING = 0.6


class ReportError(ValueError):
    """Bad input to a report: an empty logdir, unknown runs, tags matching nothing."""


@dataclass
class Selection:
    """``runs``: exact names (None: every run); ``run_filter``: a regex on run names
    (case-insensitive, as the run list's filter); ``off``: runs switched off in the list;
    ``tags``: a regex on tag names (case-insensitive, as the tag filter) or exact names;
    ``smoothing``: the EMA weight drawn first; ``step``: the media step (None: the last);
    ``group``, ``gstat``, ``gband``: the scalars page's run grouping."""

    runs: list[str] | None = None
    run_filter: str = ""
    off: list[str] = field(default_factory=list)
    tags: str | list[str] = ""
    smoothing: float = DEFAULT_SMOOTHING
    logy: bool = False
    step: int | None = None
    group: str = ""
    gstat: str = "mean"
    gband: str = "minmax"


def _first(query: Mapping[str, list[str]], key: str, default: str = "") -> str:
    values = query.get(key) or [default]
    return values[-1]


def _float(text: str, name: str, default: float) -> float:
    if text == "":
        return default
    try:
        value = float(text)
    except ValueError:
        raise ReportError(f"{name} must be a number, not {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise ReportError(f"{name} must be in [0, 1), not {text!r}")
    return value


def selection_from_query(query: Mapping[str, list[str]]) -> Selection:
    """A selection from the dashboard's URL state: ``off``, ``runFilter``, ``tags``,
    ``smoothing``, ``logy``, ``group``, ``gstat``, ``gband``; ``runs`` (repeated) and
    ``step`` name exact runs and the media step (the report's own keys)."""
    step = _first(query, "step")
    try:
        step_value = int(step) if step else None
    except ValueError:
        raise ReportError(f"step must be an integer, not {step!r}") from None
    return Selection(
        runs=list(query["runs"]) if query.get("runs") else None,
        run_filter=_first(query, "runFilter"),
        off=list(query.get("off", [])),
        tags=_first(query, "tags"),
        smoothing=_float(_first(query, "smoothing"), "smoothing", DEFAULT_SMOOTHING),
        logy=_first(query, "logy") in ("1", "true"),
        step=step_value,
        group=_first(query, "group"),
        gstat=_first(query, "gstat", "mean"),
        gband=_first(query, "gband", "minmax"),
    )


def selection_from_url(url: str) -> Selection:
    """A selection from a saved view's URL (``http://host:8040/?tab=scalars&tags=loss``)."""
    return selection_from_query(parse_qs(urlsplit(url).query, keep_blank_values=True))


def _regex(text: str, name: str) -> Any:
    try:
        return compile_pattern(f"(?i){text}", name)
    except PatternError as err:
        raise ReportError(str(err).replace("(?i)", "", 1)) from None


def resolve(selection: Selection, runs: Iterable[str],
            tags_of: Mapping[str, Iterable[str]]) -> tuple[list[str], list[str]]:
    """The runs and scalar tags to show, in order; ``ReportError`` naming what is unknown
    or matches nothing. ``tags_of``: every tag (of any kind) per run."""
    everything = list(runs)
    if not everything:
        raise ReportError("the logdir holds no runs (nothing was logged there yet)")
    if selection.runs is not None:
        unknown = [r for r in selection.runs if r not in everything]
        if unknown:
            raise ReportError(f"unknown runs: {', '.join(map(repr, unknown))} "
                              f"(the logdir holds {', '.join(map(repr, everything[:10]))}"
                              f"{', ...' if len(everything) > 10 else ''})")
        chosen = [r for r in everything if r in set(selection.runs)]
    else:
        chosen = everything
    if selection.run_filter:
        pattern = _regex(selection.run_filter, "runFilter")
        chosen = [r for r in chosen if pattern.search(r)]
    off = set(selection.off)
    chosen = [r for r in chosen if r not in off]
    if not chosen:
        raise ReportError("no run is left to show (runFilter and off hide every run)")
    all_tags = sorted({t for r in chosen for t in tags_of.get(r, ())})
    if isinstance(selection.tags, list):
        unknown = [t for t in selection.tags if t not in all_tags]
        if unknown:
            raise ReportError(f"unknown tags: {', '.join(map(repr, unknown))}")
        tags = [t for t in all_tags if t in set(selection.tags)]
    elif selection.tags:
        pattern = _regex(selection.tags, "tags")
        tags = [t for t in all_tags if pattern.search(t)]
        if not tags:
            raise ReportError(f"tags {selection.tags!r} matches no tag of the chosen runs")
    else:
        tags = all_tags
    return chosen, tags
