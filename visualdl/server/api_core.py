"""Routes every dashboard needs: server info, runs, tags per kind, the kinds and their web
views, reload.

``/api/tags`` is what the shell uses to decide which tabs to show: a kind appears once any
run has a tag of it. ``/api/kinds`` tells it which view modules to load.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from visualdl.format.version import __version__
from visualdl.kinds import registry
from visualdl.api.common import etag_for, etag_json, provider
from visualdl.api.errors import ApiError
from visualdl.api.jsonio import json_response
from visualdl.api.run_states import run_states

__all__ = ["blueprint"]

blueprint = Blueprint("core", __name__)


@blueprint.get("/api/info")
def info() -> Response:
    """Server and load status; the UI polls it to know when to refresh."""
    data = provider()
    status = data.status()
    body = {
        "version": __version__,
        "logdirs": data.logdirs,
        "loaded": data.loaded,
        "data_version": data.version,
        "reload_interval": data.reload_interval,
        "last_reload_seconds": round(status["last_reload_seconds"], 4),
        "errors": status["errors"],
        "error_messages": status["error_messages"],
        "reload_error": status["reload_error"],
    }
    if status.get("storage"):  # logdirs in object storage: requests and bytes per reload
        body["storage"] = status["storage"]
    response = json_response(body)
    response.headers["Cache-Control"] = "no-store"
    return response


@blueprint.get("/api/kinds")
def kinds() -> Response:
    """Every kind the server knows, with the URLs of its web view modules (relative to the
    page), so the browser loads the views of plugin kinds as it loads its own."""
    _note_activity(provider())  # fetched once per page load
    body = {"kinds": [{"name": k.name, "blob": k.blob, "views": k.view_urls()}
                      for k in registry.all_kinds()]}
    return etag_json(etag_for("kinds", body), lambda: body)


@blueprint.get("/api/runs")
def runs() -> Response:
    """Sorted run names (not a folder that holds only an hparams experiment), and each run's health in ``states`` (``{run: {"state", "nan",
    "last_update", "interval"}}``, see ``reader.run_health``). The ETag covers the
    states: a run's state changes with time alone (running -> stalled) while its data
    stays the same."""
    data = provider()
    _note_activity(data)
    names = registry.listed_runs(data, data.runs())
    body = {"runs": names, "states": run_states(data, names)}
    return etag_json(etag_for("runs", data.version, data.loaded, body["states"]), lambda: body)


@blueprint.get("/api/tags")
def tags() -> Response:
    """Tags per run for one kind (``?kind=scalar``), or for every kind when none is given."""
    data = provider()
    kind = request.args.get("kind")
    if kind is not None and kind not in registry.names():
        raise ApiError(400, f"parameter kind must be one of: {', '.join(registry.names())}")
    return etag_json(etag_for("tags", kind, data.version, data.loaded),
                     lambda: _tags_body(data.tags_by_kind(kind), kind))


def _tags_body(by_kind: dict[str, dict[str, list[str]]], kind: str | None) -> dict:
    if kind is not None:
        return {"kind": kind, "runs": by_kind.get(kind, {})}
    return {"kinds": by_kind}


@blueprint.post("/api/reload")
def reload() -> Response:
    """Ask the provider to look for new data now; returns at once (202)."""
    provider().request_reload()
    return json_response({"requested": True}, status=202)


def _note_activity(data: Any) -> None:
    """A browser (re)opened the dashboard: a provider that backs off idle reloads (logs in
    object storage) goes back to its normal interval."""
    data.note_activity()
