"""A run's config view: its configs (``add_config``; later calls merged over earlier ones)
together with its hyper-parameters (``add_hparams``, TensorBoard's hparams, VisualDL 2.x's),
so that filtering, grouping and comparing work the same for runs that logged only one of
them. On a key both name, the config's value wins: it is the fuller record of the run.

``data`` is anything with ``events(run, kind, tag)`` and ``hparams(run)``: a server's data
provider or a ``LogReader``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from visualdl.kinds.config.flatten import deep_merge, flatten

__all__ = ["RunConfig", "run_config", "group_values"]

KIND = "config"


@dataclass
class RunConfig:
    """``nested``: the merged configs; ``hparams``: the run's hyper-parameters; ``flat``:
    both as dotted keys (sorted); ``wall_time``: of the latest config or hparams (None when
    the run has neither)."""

    run: str
    nested: dict[str, Any] = field(default_factory=dict)
    hparams: dict[str, Any] = field(default_factory=dict)
    flat: dict[str, Any] = field(default_factory=dict)
    wall_time: float | None = None


def run_config(data: Any, run: str, memo: dict | None = None) -> RunConfig:
    """The run's config view (``KeyError`` for an unknown run). With ``memo`` (a dict kept
    by the caller), a run whose configs and hparams are the ones seen last time is answered
    from it: the run table asks for every run's view whenever any run logs a point."""
    try:
        events = list(data.events(run, KIND, KIND))
    except KeyError:
        data.tags(run)  # KeyError when the run itself is unknown
        events = []
    hp = data.hparams(run)
    seen = (len(events), max((e.wall_time for e in events), default=None),
            None if hp is None else (hp.wall_time, len(hp.hparams)))
    if memo is not None and run in memo and memo[run][0] == seen:
        return memo[run][1]
    out = _build(run, events, hp)
    if memo is not None:
        memo[run] = (seen, out)
    return out


def group_values(data: Any) -> Callable[[str], dict[str, Any] | None]:
    """A run's values to group runs by (``hp:`` grouping on the scalars page, its
    ``/api/scalars/groups`` and a report): its config view as dotted keys (``model.depth``),
    so that configs group runs as hparams do; None for an unknown run or one with neither."""

    def lookup(run: str) -> dict[str, Any] | None:
        try:
            found = run_config(data, run)
        except KeyError:
            return None
        return found.flat if found.wall_time is not None else None
    return lookup


def _build(run: str, events: list, hp: Any) -> RunConfig:
    out = RunConfig(run)
    times = []
    for event in sorted(events, key=lambda e: e.wall_time):
        out.nested = deep_merge(out.nested, event.config)
        times.append(event.wall_time)
    if hp is not None and not getattr(hp, "declaration", False):
        out.hparams = {k: _number(v) for k, v in hp.hparams.items()}
        times.append(hp.wall_time)
    flat = flatten(out.nested)
    for name, value in out.hparams.items():
        flat.setdefault(name, value)
    out.flat = dict(sorted(flat.items()))
    out.wall_time = max(times) if times else None
    return out


def _number(value: Any) -> Any:
    """Hparams may hold a non-finite float (TensorBoard's do); it becomes its JSON name
    ("NaN", "Infinity") so that every answer stays strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    return value
