"""Scalar series: one, many in one round trip, and full-resolution downloads.

Series are downsampled at query time (see :mod:`visualdl.server.downsample`) to the number
of points the chart asked for; ``total`` says how long the full series is.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import numpy as np

from flask import Blueprint, Response, request

from visualdl.server.api_common import (
    arg_choice,
    arg_int,
    arg_str,
    etag_for,
    etag_json,
    json_body,
    provider,
    read_tag,
)
from visualdl.server.downsample import MIN_POINTS
from visualdl.server.errors import ApiError
from visualdl.server.jsonio import dumps, float_list, json_response

__all__ = ["blueprint", "series_json", "DEFAULT_POINTS", "MAX_POINTS", "MAX_BATCH",
           "MAX_BATCH_POINTS"]

KIND = "scalar"
DEFAULT_POINTS = 1000
MAX_POINTS = 1_000_000
MAX_BATCH = 2000
#: points x series one batch may answer: 2,000 series at a million points each would be
#: gigabytes of JSON. Beyond it, each series gets fewer points (the answer says so).
MAX_BATCH_POINTS = 1_000_000

blueprint = Blueprint("scalars", __name__)


def _load(run: str, tag: str):
    return read_tag(run, KIND, tag, provider().scalars)


def series_json(run: str, tag: str, points: int) -> dict[str, Any]:
    """The downsampled series of ``run``/``tag`` as a JSON-ready dict."""
    view = read_tag(run, KIND, tag, lambda r, t: provider().scalar_view(r, t, points))
    return {
        "run": run,
        "tag": tag,
        "total": view.total,
        "downsampled": view.downsampled,
        "steps": view.steps.tolist(),
        "wall_times": float_list(view.wall_times),
        "values": float_list(view.values),
    }


@blueprint.get("/api/scalars")
def scalars() -> Response:
    """One series: ``?run=&tag=&points=``."""
    run, tag = arg_str("run"), arg_str("tag")
    points = arg_int("points", DEFAULT_POINTS, MIN_POINTS, MAX_POINTS)
    etag = etag_for("scalars", provider().version, run, tag, points)
    return etag_json(etag, lambda: series_json(run, tag, points))


@blueprint.post("/api/scalars/batch")
def scalars_batch() -> Response:
    """Many series in one request: ``{"series": [{"run", "tag"}, ...], "points": N}``.

    An unknown pair yields ``{"run", "tag", "error"}`` in its slot instead of failing the
    whole batch, so one deleted run does not blank a page of charts. The work is bounded:
    ``points`` x series is at most ``MAX_BATCH_POINTS``, else each series gets fewer points
    (``points`` says how many, ``points_requested`` what was asked).
    """
    body = json_body()
    if not isinstance(body, dict) or not isinstance(body.get("series"), list):
        raise ApiError(400, 'body must be JSON: {"series": [{"run": ..., "tag": ...}], "points": N}')
    items = body["series"]
    if len(items) > MAX_BATCH:
        raise ApiError(400, f"at most {MAX_BATCH} series per batch")
    asked = arg_int("points", DEFAULT_POINTS, MIN_POINTS, MAX_POINTS, source=body)
    points = min(asked, max(MIN_POINTS, MAX_BATCH_POINTS // max(1, len(items))))
    out = [_batch_item(item, points) for item in items]
    answer: dict[str, Any] = {"points": points, "series": out}
    if points < asked:
        answer.update(points_requested=asked, reduced=True)
    return json_response(answer)


def _batch_item(item: Any, points: int) -> dict[str, Any]:
    if not isinstance(item, dict) or not isinstance(item.get("run"), str) or not isinstance(
        item.get("tag"), str
    ):
        return {"error": "each item must be {\"run\": string, \"tag\": string}"}
    try:
        return series_json(item["run"], item["tag"], points)
    except ApiError as err:
        return {"run": item["run"], "tag": item["tag"], "error": err.message}


@blueprint.get("/api/scalars/download")
def download() -> Response:
    """Full-resolution series of one tag for one or more runs (``run`` may repeat); with
    several tags (``tag`` repeated: a combined chart), one column per (run, tag) line."""
    tags = list(dict.fromkeys(t for t in request.args.getlist("tag") if t)) or [arg_str("tag")]
    runs = [r for r in request.args.getlist("run") if r]
    if not runs:
        raise ApiError(400, "missing parameter: run")
    fmt = arg_choice("format", "csv", ("csv", "json"))
    if len(tags) > 1:
        return _download_lines(runs, tags, fmt)
    tag = tags[0]
    series = [(run, _load(run, tag)) for run in dict.fromkeys(runs)]
    if fmt == "json":
        body = dumps(
            {
                "tag": tag,
                "series": [
                    {
                        "run": run,
                        "steps": d.steps.tolist(),
                        "wall_times": float_list(d.wall_times),
                        "values": float_list(d.values),
                    }
                    for run, d in series
                ],
            }
        )
        mimetype = "application/json"
    else:
        body = _csv(series)
        mimetype = "text/csv"
    response = Response(body, mimetype=mimetype)
    name = _filename(tag if len(series) > 1 else f"{series[0][0]}_{tag}")
    response.headers["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    response.headers["Cache-Control"] = "no-store"
    return response


def _download_lines(runs: list[str], tags: list[str], fmt: str) -> Response:
    """A combined chart's lines: every (run, tag) pair that exists (at least one must)."""
    lines = []
    for run in dict.fromkeys(runs):
        for tag in tags:
            if provider().has_tag(run, KIND, tag):
                lines.append((run, tag, _load(run, tag)))
    if not lines:
        raise ApiError(404, "none of the runs has any of the tags")
    if fmt == "json":
        body = dumps({"tags": tags, "series": [
            {"run": run, "tag": tag, "steps": d.steps.tolist(),
             "wall_times": float_list(d.wall_times), "values": float_list(d.values)}
            for run, tag, d in lines]})
        mimetype = "application/json"
    else:
        body, mimetype = _csv_columns(lines), "text/csv"
    response = Response(body, mimetype=mimetype)
    name = _filename("_".join(tags))
    response.headers["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    response.headers["Cache-Control"] = "no-store"
    return response


def _csv_columns(lines: list) -> str:
    """``step`` then one column per line (``run/tag``), a row per step any line has; a cell
    is empty where its line has no point (the last point wins where a step repeats)."""
    steps = np.unique(np.concatenate([d.steps for _, _, d in lines]))
    columns = []
    for _, _, d in lines:
        column = np.full(len(steps), None, dtype=object)
        column[np.searchsorted(steps, d.steps)] = [repr(v) for v in d.values.tolist()]
        columns.append(column.tolist())
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["step"] + [_csv_safe(f"{run}/{tag}") for run, tag, _ in lines])
    writer.writerows(zip(steps.tolist(), *columns))
    return buf.getvalue()


def _csv(series: list) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["run", "step", "wall_time", "value"])
    for run, d in series:
        cell = _csv_safe(run)
        writer.writerows(
            (cell, s, repr(w), repr(v))
            for s, w, v in zip(d.steps.tolist(), d.wall_times.tolist(), d.values.tolist())
        )
    return buf.getvalue()


def _csv_safe(text: str) -> str:
    """Defuse spreadsheet formula injection (OWASP): a leading = + - @ gets a quote."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _filename(text: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")
    return cleaned[:100] or "scalars"
