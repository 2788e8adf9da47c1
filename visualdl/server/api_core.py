"""Routes every dashboard needs: server info, runs, tags per kind, reload.

``/api/tags`` is what the shell uses to decide which tabs to show: a kind appears once any
run has a tag of it.
"""

from __future__ import annotations

from flask import Blueprint, Response, request

import visualdl
from visualdl.reader.events import KINDS
from visualdl.server.api_common import etag_for, etag_json, service
from visualdl.server.errors import ApiError
from visualdl.server.jsonio import json_response

__all__ = ["blueprint", "KINDS"]

# ``/api/tags?kind=`` accepts exactly the kinds of the record format (read off record.proto).

blueprint = Blueprint("core", __name__)


@blueprint.get("/api/info")
def info() -> Response:
    """Server and load status; the UI polls it to know when to refresh."""
    data = service()
    reader = data.reader
    body = {
        "version": visualdl.__version__,
        "logdirs": data.logdirs,
        "loaded": data.loaded,
        "data_version": data.version,
        "reload_interval": data.reload_interval,
        "last_reload_seconds": round(data.last_reload_seconds, 4),
        "errors": int(getattr(reader, "errors", 0)),
        "error_messages": list(getattr(reader, "error_messages", []))[-20:],
        "reload_error": data.last_error,
    }
    response = json_response(body)
    response.headers["Cache-Control"] = "no-store"
    return response


@blueprint.get("/api/runs")
def runs() -> Response:
    """Sorted run names."""
    data = service()
    etag = etag_for("runs", data.version, data.loaded)
    return etag_json(etag, lambda: {"runs": list(data.reader.runs())})


@blueprint.get("/api/tags")
def tags() -> Response:
    """Tags per run for one kind (``?kind=scalar``), or for every kind when none is given."""
    data = service()
    kind = request.args.get("kind")
    if kind is not None and kind not in KINDS:
        raise ApiError(400, f"parameter kind must be one of: {', '.join(KINDS)}")
    return etag_json(etag_for("tags", kind, data.version, data.loaded),
                     lambda: _tags_body(data.reader, kind))


def _tags_body(reader, kind: str | None) -> dict:  # noqa: ANN001 - a LogReader
    by_kind: dict[str, dict[str, list[str]]] = {}
    for run in reader.runs():
        try:
            run_tags = reader.tags(run)
        except KeyError:  # vanished between runs() and tags(): skip it
            continue
        for k, names in run_tags.items():
            if names and (kind is None or k == kind):
                by_kind.setdefault(k, {})[run] = list(names)
    if kind is not None:
        return {"kind": kind, "runs": by_kind.get(kind, {})}
    return {"kinds": by_kind}


@blueprint.post("/api/reload")
def reload() -> Response:
    """Ask the background thread to reload now; returns at once (202)."""
    service().request_reload()
    return json_response({"requested": True}, status=202)
