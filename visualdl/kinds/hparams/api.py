"""Hyper-parameters: one row per run with its values and the last value of each metric."""

from __future__ import annotations

from flask import Blueprint, Response

from visualdl.api.common import etag_for, etag_json, provider
from visualdl.api.jsonio import float_list

__all__ = ["blueprint", "hparams_table"]

blueprint = Blueprint("hparams", __name__)


def _last(data, run: str, tag: str) -> float | str | None:  # noqa: ANN001 - a provider
    try:
        values = data.scalars(run, tag).values
    except KeyError:
        return None
    return float_list(values[-1:])[0] if len(values) else None


def hparams_table() -> dict:
    """Every run that logged hyper-parameters, with the union of names and metric tags."""
    data = provider()
    rows, names, metrics = [], {}, {}
    for run in data.runs():
        try:
            event = data.hparams(run)
        except KeyError:  # vanished meanwhile
            continue
        if event is None:
            continue
        names.update(dict.fromkeys(event.hparams))
        metrics.update(dict.fromkeys(event.metric_tags))
        rows.append({"run": run, "wall_time": event.wall_time, "hparams": event.hparams,
                     "metric_tags": list(event.metric_tags)})
    for row in rows:
        row["metrics"] = {tag: _last(data, row["run"], tag) for tag in metrics}
    return {"hparam_names": list(names), "metric_names": list(metrics), "runs": rows}


@blueprint.get("/api/hparams")
def hparams() -> Response:
    """The whole table (it is small: one row per run)."""
    etag = etag_for("hparams", provider().version)
    return etag_json(etag, hparams_table)
