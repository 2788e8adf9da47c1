"""Workers routes: one run's ranks and elastic restarts (``/api/ranks``) and every run's
world size and restart count, the run table's columns (``/api/runs/workers``)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from visualdl.api.common import arg_str, etag_for, etag_json, provider, require_run
from visualdl.api.errors import ApiError
from visualdl.kinds.workers.group import Workers, summarize

__all__ = ["blueprint"]

blueprint = Blueprint("workers", __name__)
KIND = TAG = "workers"  # the kind's one tag: workers belong to the run


def _workers(run: str) -> Workers:
    try:
        events = provider().events(run, KIND, TAG)
    except KeyError:  # a run of one process (or gone: require_run tells)
        events = []
    return summarize(events)


@blueprint.get("/api/ranks")
def ranks() -> Response:
    """``?run=``: the run's ranks (``rank``, ``world_size``, ``host``, ``pid``,
    ``wall_time``: each rank's latest opening record), its elastic ``resizes``
    (``restart``, ``step`` resumed at, ``world_size``, ``wall_time``), the ``world_size``
    now and the count of ``restarts``. A run of one process has no ranks."""
    run = require_run(arg_str("run"))
    data = provider()
    return etag_json(etag_for("ranks", data.version, run),
                     lambda: {"run": run, **_workers(run).as_json()})


@blueprint.get("/api/runs/workers")
def runs_workers() -> Response:
    """Every run with workers (or only those named by ``run``, repeatable): ``{"runs":
    {run: {"world_size": n, "restarts": k}}}``; runs of one process are left out."""
    data = provider()
    wanted = [r for r in request.args.getlist("run") if r]

    def build() -> dict:
        listed = data.tags_by_kind(KIND).get(KIND, {})
        out = {}
        for run in (wanted or listed):
            if run not in listed:
                continue
            try:
                workers = summarize(data.events(run, KIND, TAG))
            except KeyError:  # vanished meanwhile
                continue
            out[run] = {"world_size": workers.world_size, "restarts": workers.restarts}
        return {"runs": out}

    if len(wanted) > 10_000:
        raise ApiError(400, "at most 10000 runs")
    return etag_json(etag_for("runs-workers", data.version, wanted), build)
