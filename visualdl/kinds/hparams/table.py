"""The run table: per run, its hyper-parameters (its latest ``add_hparams``), the last value
of chosen scalar tags, and its first and last wall time. One table behind the sidebar's run
list (``/api/runs/table``), the HParams view (``/api/hparams``) and ``visualdl export``'s
``hparams.parquet``.

Every value comes from the cheap ends of each series (``scalar_ends``): building 40,000
whole series to read their last values would undo the reader's compact layout. ``data`` is
anything with ``runs()``, ``tags(run)``, ``scalar_ends(run, tag)`` and ``events(run, kind,
tag)``: a server's data provider or a ``LogReader``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable

__all__ = ["RunRow", "run_table", "run_hparams", "experiment_only", "hparam_names",
           "metric_names", "domains"]


@dataclass
class RunRow:
    """One run of the table. ``hparams``: its latest hyper-parameters (empty when it has
    none: then ``hparams_time`` is None); ``metric_tags``: the metrics that ``add_hparams``
    or an experiment at or above the run named; ``domains``: what that experiment
    declares of each hyper-parameter; ``metrics``: the last value of each tag asked for
    (None where it has none); ``start``/``last``: the first and last wall time over its
    scalars."""

    run: str
    hparams: dict[str, Any] = field(default_factory=dict)
    hparams_time: float | None = None
    metric_tags: tuple[str, ...] = ()
    domains: dict[str, dict] = field(default_factory=dict)
    metrics: dict[str, float | None] = field(default_factory=dict)
    start: float | None = None
    last: float | None = None


def run_table(data: Any, metrics: Iterable[str] = (), runs: Iterable[str] | None = None,
              declared: bool = False) -> list[RunRow]:
    """A row per run (all of ``data``'s, or ``runs``), with the last values of ``metrics``;
    ``declared`` adds the metrics every run's hparams named. A folder that holds only an
    experiment (TensorBoard's ``hparams_config``) is no row: its metrics and domains go to
    the runs below it, as TensorBoard's HParams dashboard applies them."""
    all_runs = list(data.runs())
    asked = all_runs if runs is None else list(runs)
    experiments: dict[str, Any] = {}
    rows = []
    for run in asked:
        try:
            events = _hparams_events(data, run)
            scalar_tags = data.tags(run).get("scalar", [])
        except KeyError:  # vanished meanwhile
            continue
        sessions = [e for e in events if not e.declaration]
        declared_here = [e for e in events if e.declaration]
        if declared_here:
            experiments[run] = declared_here[-1]
            if not sessions and not scalar_tags:
                continue  # the experiment's folder: no run of its own
        row = RunRow(run)
        if sessions:
            event = sessions[-1]  # in wall-time order; the last written on a tie
            row.hparams, row.hparams_time = dict(event.hparams), event.wall_time
            row.metric_tags, row.domains = tuple(event.metric_tags), dict(event.domains)
        rows.append((row, scalar_tags))
    experiments.update(_experiments(data, set(all_runs) - set(asked), rows))
    lone = [run for run in experiments if run not in {row.run for row, _ in rows}]
    for row, _ in rows:
        if row.hparams_time is not None:
            _apply(row, _enclosing(experiments, row.run, lone))
    wanted = list(dict.fromkeys(metrics))
    if declared:
        wanted = list(dict.fromkeys([*wanted, *metric_names(row for row, _ in rows)]))
    known = set(all_runs)
    for row, scalar_tags in rows:
        _fill(data, row, scalar_tags, wanted, known)
    return [row for row, _ in rows]


def run_hparams(data: Any, run: str) -> Any:
    """The run's latest hyper-parameters (an ``HParamsEvent``) with the metrics and domains
    of the experiment above it added, as the table shows them; an experiment (a
    declaration) only when the run has nothing else; None when it has neither."""
    events = _hparams_events(data, run)
    sessions = [e for e in events if not e.declaration]
    if not sessions:
        return events[-1] if events else None
    rows = run_table(data, runs=[run])
    latest = sessions[-1]
    if not rows or rows[0].hparams_time is None:
        return latest
    return replace(latest, metric_tags=rows[0].metric_tags, domains=rows[0].domains)


def experiment_only(data: Any, run: str) -> bool:
    """Whether ``run`` is a folder that holds only an experiment (TensorBoard's
    ``hparams_config``, declared above its trials): the runs below take its metrics and
    domains, and it is no run of its own to list (TensorBoard's HParams dashboard shows none)."""
    try:
        tags = data.tags(run)
    except KeyError:
        return False
    if any(names for kind, names in tags.items() if kind != "hparams"):
        return False
    events = _hparams_events(data, run)
    return bool(events) and all(e.declaration for e in events)


def _hparams_events(data: Any, run: str) -> list:
    """The run's hparams events in wall-time order ([] when it has none)."""
    try:
        return list(data.events(run, "hparams", "hparams"))
    except KeyError:
        data.tags(run)  # KeyError when the run itself is gone
        return []


def _experiments(data: Any, runs: set[str], rows: list) -> dict:
    """The experiments of ``runs`` not asked for (a table of some runs still takes the
    experiments above them), when some row may have one above it."""
    if not rows or not any(row.hparams_time is not None for row, _ in rows):
        return {}
    out = {}
    for run in runs:
        try:
            found = [e for e in _hparams_events(data, run) if e.declaration]
        except KeyError:
            continue
        if found:
            out[run] = found[-1]
    return out


def _enclosing(experiments: dict, run: str, lone: list[str]) -> Any:
    """The experiment nearest above ``run`` (or at it); else the one experiment that is
    alone in its folder, if there is one: a logdir's own folder is a run named after the
    folder, not a prefix of the runs below it, and TensorBoard shows one experiment."""
    best, depth = None, -1
    for where, event in experiments.items():
        if (run == where or run.startswith(where + "/")) and len(where) > depth:
            best, depth = event, len(where)
    if best is None and len(lone) == 1:
        return experiments[lone[0]]
    return best


def _apply(row: RunRow, experiment: Any) -> None:
    if experiment is None:
        return
    row.metric_tags = tuple(dict.fromkeys([*row.metric_tags, *experiment.metric_tags]))
    row.domains = {**experiment.domains, **row.domains}


def _fill(data: Any, row: RunRow, scalar_tags: list[str], wanted: list[str],
          known: set[str]) -> None:
    """The row's metric values and its first and last wall time."""
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
    for tag in row.metric_tags:
        if tag in row.metrics and row.metrics[tag] is None and "/" in tag:
            row.metrics[tag] = _group_value(data, row.run, tag, known)


def _group_value(data: Any, run: str, metric: str, known: set[str]) -> float | None:
    """A metric of a group (``validation/loss``): the tag ``loss`` of the run's sub-run
    ``validation``, where TensorBoard's HParams dashboard reads it."""
    group, _, tag = metric.rpartition("/")
    sub = f"{run}/{group}"
    if sub not in known:
        return None
    try:
        ends = data.scalar_ends(sub, tag)
    except KeyError:
        return None
    return None if ends is None else float(ends[3])


def hparam_names(rows: Iterable[RunRow]) -> list[str]:
    """Every hyper-parameter's name over ``rows``, sorted (the same order on every start)."""
    return sorted({name for row in rows for name in row.hparams})


def metric_names(rows: Iterable[RunRow]) -> list[str]:
    """The metric tags the runs' hparams named, in the order first named."""
    return list(dict.fromkeys(tag for row in rows for tag in row.metric_tags))


def domains(rows: Iterable[RunRow]) -> dict[str, dict]:
    """What the experiments declare of each hyper-parameter over ``rows`` (the first
    declared wins), by name, sorted."""
    out: dict[str, dict] = {}
    for row in rows:
        for name, domain in row.domains.items():
            out.setdefault(name, domain)
    return dict(sorted(out.items()))
