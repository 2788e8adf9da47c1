"""The run table's routes: the sidebar's table of every run (``/api/runs/table``) and the
HParams view's rows of the runs that logged hyper-parameters (``/api/hparams``), both from
:func:`.table.run_table`."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from visualdl.api.common import etag_for, etag_json, provider
from visualdl.api.jsonio import json_number
from visualdl.api.run_states import run_states
from visualdl.kinds.hparams.table import (domains, experiment_only, hparam_names, metric_names,
                                         run_table)

__all__ = ["blueprint", "hides_run", "hparams_table"]

blueprint = Blueprint("hparams", __name__)
#: /api/runs lists no folder that holds only an experiment (kinds.registry.listed_runs)
hides_run = experiment_only


def hparams_table() -> dict:
    """Every run that logged hyper-parameters, with the union of names and metric tags."""
    rows = [row for row in run_table(provider(), declared=True) if row.hparams_time is not None]
    metrics = metric_names(rows)
    return {"hparam_names": hparam_names(rows), "metric_names": metrics,
            "domains": domains(rows), "runs": [
        {"run": row.run, "wall_time": row.hparams_time, "hparams": row.hparams,
         "metric_tags": list(row.metric_tags),
         "metrics": {tag: json_number(row.metrics.get(tag)) for tag in metrics}}
        for row in rows]}


@blueprint.get("/api/hparams")
def hparams() -> Response:
    """The whole table (it is small: one row per run)."""
    etag = etag_for("hparams", provider().version)
    return etag_json(etag, hparams_table)


@blueprint.get("/api/runs/table")
def runs_table() -> Response:
    """The run table of the sidebar, column by column (compact at thousands of runs):
    ``?tag=loss&tag=acc`` (the metrics whose last values to show; repeatable). Answers
    ``{"runs": [...], "start_time": [...], "last_update": [...], "hparams": {name: [value
    per run]}, "metrics": {tag: [last value per run]}}``; a run without a value has null.
    Start time and last update are the first and last wall time over the run's scalars.
    ``state`` and ``nan``: each run's health (see ``/api/runs``), null where unknown."""
    data = provider()
    tags = list(dict.fromkeys(t for t in request.args.getlist("tag") if t))
    states = run_states(data, list(data.runs()))
    etag = etag_for("runs-table", data.version, data.loaded, tags, states)
    return etag_json(etag, lambda: _with_states(_columns(run_table(data, tags), tags), states))


def _with_states(table: dict[str, Any], states: dict[str, Any]) -> dict[str, Any]:
    """The table with a ``state`` and a ``nan`` column (run health)."""
    health = [states.get(run) or {} for run in table["runs"]]
    table["state"] = [h.get("state") for h in health]
    table["nan"] = [h.get("nan") for h in health]
    return table


def _columns(rows: list, tags: list[str]) -> dict[str, Any]:
    """The table column by column (2,000 runs x 20 hparams as rows would repeat every name
    2,000 times)."""
    return {"runs": [row.run for row in rows],
            "start_time": [row.start for row in rows],
            "last_update": [row.last for row in rows],
            "hparams": {name: [row.hparams.get(name) for row in rows]
                        for name in hparam_names(rows)},
            "metrics": {tag: [json_number(row.metrics[tag]) for row in rows] for tag in tags}}
