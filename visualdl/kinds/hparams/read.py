"""Hyper-parameters, reader side: one event per ``add_hparams`` call; the latest counts.

An experiment (TensorBoard's ``hparams_config``, format 1.6) is an event too: it holds no
values, only the domains and metric tags it declares for the runs at and below its run
(see :mod:`.table`); the reader does not list a tag for it alone (``declaration``), so a
folder that holds only an experiment is no run of any view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class HParamsEvent:
    wall_time: float
    hparams: dict[str, Any]
    metric_tags: tuple[str, ...]
    #: name -> {"values": [...]} or {"min": lo, "max": hi}, where an experiment gave one
    domains: dict[str, dict] = field(default_factory=dict)
    #: an experiment: declares domains and metrics for the runs below, holds no values
    declaration: bool = False


def _value(v: Any) -> Any:
    which = v.WhichOneof("value")
    return getattr(v, which) if which else None


def _domain(d: Any) -> dict:
    if d.interval:
        return {"min": d.min, "max": d.max}
    return {"values": [x for x in map(_value, d.values) if x is not None]}


def build(msg: Any) -> HParamsEvent:
    values = {name: _value(v) for name, v in msg.hparams.items() if v.WhichOneof("value")}
    domains = {name: _domain(d) for name, d in msg.domains.items()}
    return HParamsEvent(msg.wall_time, values, tuple(msg.metric_tags), domains,
                        msg.experiment)
