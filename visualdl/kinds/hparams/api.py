"""Hyper-parameters: one row per run with its values and the last value of each metric
(the run table of :mod:`.table`, for the runs that logged hyper-parameters)."""

from __future__ import annotations

from flask import Blueprint, Response

from visualdl.api.common import etag_for, etag_json, provider
from visualdl.api.jsonio import json_number
from visualdl.kinds.hparams.table import hparam_names, metric_names, run_table

__all__ = ["blueprint", "hparams_table"]

blueprint = Blueprint("hparams", __name__)


def hparams_table() -> dict:
    """Every run that logged hyper-parameters, with the union of names and metric tags."""
    rows = [row for row in run_table(provider(), declared=True) if row.hparams_time is not None]
    metrics = metric_names(rows)
    return {"hparam_names": hparam_names(rows), "metric_names": metrics, "runs": [
        {"run": row.run, "wall_time": row.hparams_time, "hparams": row.hparams,
         "metric_tags": list(row.metric_tags),
         "metrics": {tag: json_number(row.metrics.get(tag)) for tag in metrics}}
        for row in rows]}


@blueprint.get("/api/hparams")
def hparams() -> Response:
    """The whole table (it is small: one row per run)."""
    etag = etag_for("hparams", provider().version)
    return etag_json(etag, hparams_table)
