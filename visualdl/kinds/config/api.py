"""Config routes: one run's config (``/api/config``), every run's config as table columns
(``/api/runs/config``) and the comparison of chosen runs (``/api/compare``).

A run's config is its configs merged with its hyper-parameters (:mod:`.merge`). The views
are kept in the app (``app_cache``) and rebuilt when a run's configs or hparams change: the
run table asks for all of them on every refresh, the comparison for up to 100.
"""

from __future__ import annotations

import time

from flask import Blueprint, Response, request

from visualdl.api.common import (app_cache, arg_str, etag_for, etag_json, json_body,
                                 provider, require_run)
from visualdl.api.errors import ApiError
from visualdl.api.jsonio import json_response
from visualdl.kinds.config.compare import (config_diff, default_tags, infer_direction,
                                           MISSING, summarize, uniform)
from visualdl.kinds.config.merge import RunConfig, run_config

__all__ = ["blueprint", "MAX_RUNS", "MAX_TAGS"]

blueprint = Blueprint("config", __name__)

MAX_RUNS = 100  # a comparison's runs: its table has a column per run
MAX_TAGS = 50  # summarised tags; each reads every point of the tag in every run
DEFAULT_TAGS = 12


def _view(run: str) -> RunConfig:
    """The run's config view; 404 for an unknown run. Views are kept in the app per run
    (``run_config``'s memo) and rebuilt only when the run's configs or hparams change."""
    memo = app_cache("config-views", dict)
    try:
        return run_config(provider(), run, memo)
    except KeyError:
        raise ApiError(404, f"unknown run: {run}") from None


@blueprint.get("/api/config")
def config() -> Response:
    """``?run=``: the run's config, nested and flat, and its hyper-parameters."""
    run = require_run(arg_str("run"))
    data = provider()

    def build() -> dict:
        view = _view(run)
        return {"run": run, "config": view.nested, "hparams": view.hparams,
                "flat": view.flat, "wall_time": view.wall_time}

    return etag_json(etag_for("config", data.version, run), build)


@blueprint.get("/api/runs/config")
def runs_config() -> Response:
    """Every run's flat config as table columns, compact at thousands of runs: ``runs``
    (those that have a config or hparams), ``columns`` ({key: [value per run]}, only the
    keys whose values differ between those runs; null where a run lacks the key) and
    ``same`` ({key: value}, the keys every one of them has with one value)."""
    data = provider()
    views = [v for v in (_maybe_view(run) for run in data.runs()) if v and v.flat]
    # The answer changes only with the runs' configs and hparams, not with every point
    # logged: its ETag and the body kept in the app follow their signatures.
    memo = app_cache("config-views", dict)
    key = etag_for("runs-config", [(v.run, memo.get(v.run, (None,))[0]) for v in views])
    kept = app_cache("runs-config-body", dict)

    def build() -> dict:
        if kept.get("key") != key:
            kept["body"], kept["key"] = _columns(views), key
        return kept["body"]

    return etag_json(key, build)


def _columns(views: list[RunConfig]) -> dict:
    columns, same = {}, {}
    for key in sorted({key for v in views for key in v.flat}):
        column = [v.flat.get(key, MISSING) for v in views]
        if uniform(column):
            same[key] = column[0]
        else:
            columns[key] = [None if x is MISSING else x for x in column]
    return {"runs": [v.run for v in views], "columns": columns, "same": same}


def _maybe_view(run: str) -> RunConfig | None:
    try:
        return _view(run)
    except ApiError:  # vanished meanwhile
        return None


@blueprint.route("/api/compare", methods=["GET", "POST"])
def compare() -> Response:
    """Chosen runs compared: the config keys that differ (every key with ``all``) and a
    summary of scalar tags per run. GET: ``?run=a&run=b`` (repeatable), ``all=1``,
    ``tag=`` (repeatable), ``dir=tag:min`` (repeatable); POST: the same as a JSON object
    ``{"runs": [...], "all": bool, "tags": [...], "directions": {tag: "min"|"max"}}``.
    The ``Server-Timing`` header says how long the diff and the summaries took."""
    runs, everything, tags, directions = _compare_args()
    for run in runs:
        require_run(run)
    started = time.perf_counter()
    views = [_view(run) for run in runs]
    diff = config_diff(views, everything)
    diffed = time.perf_counter()
    if not tags:
        tags = default_tags((_scalar_tags(run) for run in runs), DEFAULT_TAGS)
    chosen = {tag: directions.get(tag, infer_direction(tag)) for tag in tags}
    summaries = {tag: [_summary(run, tag, d) for run in runs] for tag, d in chosen.items()}
    done = time.perf_counter()
    response = json_response({"runs": runs, "config": diff, "tags": list(chosen),
                              "directions": chosen, "summaries": summaries})
    response.headers["Server-Timing"] = (f"diff;dur={(diffed - started) * 1e3:.2f}, "
                                         f"summaries;dur={(done - diffed) * 1e3:.2f}")
    response.headers["Cache-Control"] = "no-store"
    return response


def _compare_args() -> tuple[list[str], bool, list[str], dict[str, str]]:
    if request.method == "POST":
        body = json_body()
        if not isinstance(body, dict):
            raise ApiError(400, "the body must be a JSON object with a list of runs")
        runs, everything = body.get("runs"), body.get("all", False)
        tags, directions = body.get("tags", []), body.get("directions", {})
        if not isinstance(everything, bool):
            raise ApiError(400, "all must be true or false")
        if not isinstance(directions, dict):
            raise ApiError(400, "directions must be an object of tag -> \"min\" or \"max\"")
    else:
        runs, tags = request.args.getlist("run"), request.args.getlist("tag")
        everything = request.args.get("all", "") in ("1", "true")
        directions = {}
        for item in request.args.getlist("dir"):
            tag, sep, which = item.rpartition(":")
            if not sep or not tag:
                raise ApiError(400, f"dir={item!r} must be tag:min or tag:max")
            directions[tag] = which
    for name, values in (("runs", runs), ("tags", tags)):
        if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
            raise ApiError(400, f"{name} must be a list of non-empty strings")
    runs = list(dict.fromkeys(runs))
    if not 2 <= len(runs) <= MAX_RUNS:
        raise ApiError(400, f"runs: compare 2 to {MAX_RUNS} runs, got {len(runs)}")
    tags = list(dict.fromkeys(tags))
    if len(tags) > MAX_TAGS:
        raise ApiError(400, f"tags: at most {MAX_TAGS}, got {len(tags)}")
    for tag, which in directions.items():
        if which not in ("min", "max"):
            raise ApiError(400, f"direction of {tag!r} must be \"min\" or \"max\", got {which!r}")
    return runs, everything, tags, directions


def _scalar_tags(run: str) -> list[str]:
    try:
        return provider().tags(run).get("scalar", [])
    except KeyError:
        return []


def _summary(run: str, tag: str, direction: str | None) -> dict | None:
    """The tag's summary in the run; None when the run has no such tag."""
    try:
        series = provider().scalars(run, tag)
    except KeyError:
        return None
    return summarize(series.steps, series.values, direction)
