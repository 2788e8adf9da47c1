"""Scalar series: one, many in one round trip, and full-resolution downloads.

Series are downsampled at query time (see :mod:`visualdl.series.downsample`) to the number
of points the chart asked for; ``total`` says how long the full series is.
"""

from __future__ import annotations

import csv
import io
import re
import time
from typing import Any, NamedTuple

import numpy as np

from flask import Blueprint, Response, request

from visualdl.api.common import (
    arg_choice,
    arg_float,
    arg_int,
    arg_str,
    etag_for,
    etag_json,
    json_body,
    provider,
    read_tag,
)
from visualdl.kinds import registry
from visualdl.kinds.scalar import order
from visualdl.series import groups, patterns
from visualdl.series.downsample import MIN_POINTS
from visualdl.series.smoothing import MAX_RUNNING_POINTS, MODES, Smoothing, envelope_at, smooth_at
from visualdl.api.errors import ApiError
from visualdl.api.jsonio import dumps, float_list, json_response

__all__ = ["blueprint", "series_json", "rank_of", "check_rank", "DEFAULT_POINTS", "MAX_POINTS", "MAX_BATCH",
           "MAX_BATCH_POINTS"]

KIND = "scalar"
DEFAULT_POINTS = 1000
MAX_POINTS = 1_000_000
MAX_BATCH = 2000
#: points x series one batch may answer: 2,000 series at a million points each would be
#: gigabytes of JSON. Beyond it, each series gets fewer points (the answer says so).
MAX_BATCH_POINTS = 1_000_000
STEP_MIN, STEP_MAX = -(2**63), 2**63 - 1  # steps are int64

blueprint = Blueprint("scalars", __name__)


def _load(run: str, tag: str, rank: int | None = None):
    return read_tag(run, KIND, tag, lambda r, t: provider().scalars(r, t, rank=rank))


def _rank_in(run: str, rank: int | None) -> int | None:
    """``rank`` where ``run`` has it, else None (its default series): what the chart
    draws of each run when a rank is chosen."""
    if not rank:
        return None
    try:
        return rank if rank in provider().ranks(run) else None
    except KeyError:  # an unknown run: the read answers its 404
        return None


class Window(NamedTuple):
    """What part of a series a request asks for: an inclusive step range and an inclusive
    wall-time range (seconds since the epoch), any end None (open), and the smoothing
    weight whose values of the whole series the answer carries at its points (0: none),
    with its mode, the running average's points and whether the min/max envelope is
    wanted (see :mod:`visualdl.series.smoothing`)."""

    start_step: int | None = None
    end_step: int | None = None
    wall_min: float | None = None
    wall_max: float | None = None
    smoothing: float = 0.0
    smoothing_mode: str = "ema"
    smoothing_points: int = 0
    envelope: bool = False

    @property
    def bounded(self) -> bool:
        return any(v is not None for v in self[:4])

    @property
    def smoothing_spec(self) -> Smoothing:
        return Smoothing(self.smoothing_mode, self.smoothing, self.smoothing_points,
                         self.envelope)


MAX_RANK = 2**31 - 1  # ranks are int32 in the record format


def rank_of(source: Any = None) -> int | None:
    """The optional ``rank`` of a request: one worker's series of a data-parallel run
    (absent: the run's default series, rank 0's)."""
    args = request.args if source is None else source
    if args.get("rank") in (None, ""):
        return None
    return arg_int("rank", 0, 0, MAX_RANK, source=source)


def check_rank(run: str, rank: int | None) -> None:
    """404 unless ``run`` has ``rank`` (rank 0 and None: every run has its default series)."""
    if rank:
        try:
            ranks = provider().ranks(run)
        except KeyError:
            raise ApiError(404, "unknown run") from None
        if rank not in ranks:
            raise ApiError(404, f"unknown rank {rank} for this run (its ranks: "
                                f"{', '.join(map(str, ranks)) or 'none: one process'})")


def series_json(run: str, tag: str, points: int,
                window: "Window | tuple[int | None, int | None]" = Window(),
                rank: int | None = None) -> dict[str, Any]:
    """The downsampled series of ``run``/``tag`` as a JSON-ready dict; ``window`` (a
    ``Window``, or a ``(start_step, end_step)`` pair) restricts it to a zoomed chart's
    window; ``rank``: one worker's series of a data-parallel run (None: the default)."""
    if not isinstance(window, Window):
        window = Window(*window)
    check_rank(run, rank)
    view = read_tag(run, KIND, tag,
                    lambda r, t: provider().scalar_view(r, t, points, *window[:4], rank=rank))
    out = {
        "run": run,
        "tag": tag,
        "total": view.total,
        "downsampled": view.downsampled,
        "steps": view.steps.tolist(),
        "wall_times": float_list(view.wall_times),
        "values": float_list(view.values),
    }
    if window.bounded:
        out.update(start_step=window.start_step, end_step=window.end_step,
                   window_total=view.window_total)
        if window.wall_min is not None or window.wall_max is not None:
            out.update(wall_min=window.wall_min, wall_max=window.wall_max)
    if rank is not None:
        out["rank"] = rank
    else:
        default = provider().default_rank(run, tag)
        if default is not None:  # a data-parallel run: the rank of its default series
            out["default_rank"] = default
    if view.index is not None:
        out.update(_smoothed(run, tag, view.index, window.smoothing_spec, rank))
    if provider().scalar_pending(tag):
        out["loading"] = True  # the first load has more of it: ask again when it is done
    return out


def _smoothed(run: str, tag: str, idx: np.ndarray, spec: Smoothing,
              rank: int | None = None) -> dict[str, Any]:
    """The whole series' smoothed values at ``idx`` (``smoothed``, with what they are:
    ``smoothing``, and ``smoothing_mode``/``smoothing_points`` when not the EMA) and the
    envelope's ``lower``/``upper`` (see ``series.smoothing``); nothing that was not asked,
    or whose window is too wide to read."""
    if not spec.active and not spec.envelope:
        return {}
    data = read_tag(run, KIND, tag, lambda r, t: provider().scalars(r, t, rank))
    out: dict[str, Any] = {}
    try:
        smoothed = smooth_at(data, idx, spec) if spec.active else None
        if smoothed is not None:
            out.update(smoothing=spec.weight, smoothed=float_list(smoothed))
            if spec.mode != "ema":
                out.update(smoothing_mode=spec.mode)
            if spec.mode == "running":
                out.update(smoothing_points=spec.points)
        band = envelope_at(data.values, idx) if spec.envelope else None
        if band is not None:
            out.update(lower=float_list(band[0]), upper=float_list(band[1]))
        return out
    finally:
        data.release()  # memory-mapped: let go of the pages the smoothing read


def window_of(source: Any = None, base: Window = Window()) -> Window:
    """The optional window of a request: ``start_step``/``end_step``, ``wall_min``/
    ``wall_max`` and the smoothing (``smoothing``, ``smoothing_mode``,
    ``smoothing_points``, ``envelope``). A batch item that names any of the four ends has
    a window of its own; one that names none has the batch's (``base``); each smoothing
    parameter is the batch's unless the item gives it."""
    args = request.args if source is None else source
    given = {name: args.get(name) not in (None, "") for name in Window._fields}
    if any(given[name] for name in Window._fields[:4]):
        base = base._replace(start_step=None, end_step=None, wall_min=None, wall_max=None)
    start = _opt_step("start_step", source) if given["start_step"] else base.start_step
    end = _opt_step("end_step", source) if given["end_step"] else base.end_step
    if start is not None and end is not None and start > end:
        raise ApiError(400, "parameter start_step must not be greater than end_step")
    low = arg_float("wall_min", source) if given["wall_min"] else base.wall_min
    high = arg_float("wall_max", source) if given["wall_max"] else base.wall_max
    if low is not None and high is not None and low > high:
        raise ApiError(400, "parameter wall_min must not be greater than wall_max")
    smoothing = base.smoothing
    if given["smoothing"]:
        smoothing = arg_float("smoothing", source)
        if not 0 <= smoothing < 1:
            raise ApiError(400, "parameter smoothing must be a number from 0 to below 1")
    mode = base.smoothing_mode
    if given["smoothing_mode"]:
        mode = _body_choice(args, "smoothing_mode", "ema", MODES)
    points = base.smoothing_points
    if given["smoothing_points"]:
        points = arg_int("smoothing_points", 0, 1, MAX_RUNNING_POINTS, source=source)
    if mode == "running" and not points:
        raise ApiError(400, "parameter smoothing_points (the running average's points) "
                            "is missing")
    envelope = _arg_bool("envelope", source) if given["envelope"] else base.envelope
    return Window(start, end, low, high, smoothing, mode, points, envelope)


def _arg_bool(name: str, source: Any) -> bool:
    args = request.args if source is None else source
    value = args.get(name)
    if value in (True, False):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("1", "true", "0", "false"):
        return value.lower() in ("1", "true")
    raise ApiError(400, f"parameter {name} must be true or false")


def step_range(source: Any = None) -> tuple[int | None, int | None]:
    """The optional inclusive step window ``start_step``/``end_step`` of a request."""
    start = _opt_step("start_step", source)
    end = _opt_step("end_step", source)
    if start is not None and end is not None and start > end:
        raise ApiError(400, "parameter start_step must not be greater than end_step")
    return start, end


def _opt_step(name: str, source: Any) -> int | None:
    args = request.args if source is None else source
    if args.get(name) in (None, ""):
        return None
    return arg_int(name, 0, STEP_MIN, STEP_MAX, source=source)


@blueprint.get("/api/scalars")
def scalars() -> Response:
    """One series: ``?run=&tag=&points=``, and optionally a window: ``&start_step=&end_step=``
    (an inclusive step range) and/or ``&wall_min=&wall_max=`` (an inclusive wall-time range,
    seconds since the epoch), answered at ``points`` resolution: what a zoomed chart shows.
    ``&smoothing=w`` adds ``smoothed``: the EMA of the whole series at the answer's points;
    ``&smoothing_mode=time_ema`` (weights by step gaps) or ``running`` (with
    ``&smoothing_points=N``) another smoothing, and ``&envelope=1`` the min/max of the raw
    points around each answered point (``lower``/``upper``): see ``series.smoothing``.
    While the first load of the logdir still has points of the tag to read, the answer
    says ``"loading": true`` (here, in each batch item, and in a grouped chart).
    ``&rank=N``: worker N's series of a data-parallel run (by default rank 0's; see
    ``/api/ranks``)."""
    run, tag = arg_str("run"), arg_str("tag")
    points = arg_int("points", DEFAULT_POINTS, MIN_POINTS, MAX_POINTS)
    window = window_of()
    rank = rank_of()
    etag = etag_for("scalars", provider().version, run, tag, points, tuple(window), rank)
    return etag_json(etag, lambda: series_json(run, tag, points, window, rank))


@blueprint.get("/api/scalars/ranks")
def scalars_of_ranks() -> Response:
    """One tag of a data-parallel run, every rank's series (the per-rank overlay):
    ``?run=&tag=&points=`` and the window and smoothing parameters of ``/api/scalars``;
    ``{"run", "tag", "ranks": [rank, ...], "series": [an /api/scalars answer per rank]}``.
    A run of one process answers its one series as rank 0."""
    run, tag = arg_str("run"), arg_str("tag")
    points = arg_int("points", DEFAULT_POINTS, MIN_POINTS, MAX_POINTS)
    window = window_of()
    data = provider()
    etag = etag_for("scalar-ranks", data.version, run, tag, points, tuple(window))

    def build() -> dict[str, Any]:
        try:
            ranks = data.ranks(run) or [0]
        except KeyError:
            raise ApiError(404, "unknown run") from None
        each = max(MIN_POINTS, min(points, MAX_BATCH_POINTS // len(ranks)))
        return {"run": run, "tag": tag, "ranks": ranks,
                "series": [series_json(run, tag, each, window, rank) for rank in ranks]}

    return etag_json(etag, build)


@blueprint.post("/api/scalars/batch")
def scalars_batch() -> Response:
    """Many series in one request: ``{"series": [{"run", "tag"}, ...], "points": N}`` (an
    item may name a ``"rank"`` of a data-parallel run, as ``/api/scalars`` does), and
    optionally a window for every series (``"start_step"``/``"end_step"``, ``"wall_min"``/
    ``"wall_max"``, ``"smoothing"``), which an item may override with its own (a chart on
    a Relative axis: each run's window in wall time starts at that run's start).

    An unknown pair yields ``{"run", "tag", "error"}`` in its slot instead of failing the
    whole batch, so one deleted run does not blank a page of charts. The work is bounded:
    ``points`` x series is at most ``MAX_BATCH_POINTS``, else each series gets fewer points
    (``points`` says how many, ``points_requested`` what was asked).

    ``"wait": seconds`` (at most ``MAX_WAIT``): while the server's first load still has
    points of a tag asked for, hold the answer until they are in (or the time is up), so
    that a chart drawn from a partial answer gets the complete one in one more request,
    not one per poll (each partial answer of thousands of series takes CPU from the load).
    """
    body = json_body()
    if not isinstance(body, dict) or not isinstance(body.get("series"), list):
        raise ApiError(400, 'body must be JSON: {"series": [{"run": ..., "tag": ...}], "points": N}')
    items = body["series"]
    if len(items) > MAX_BATCH:
        raise ApiError(400, f"at most {MAX_BATCH} series per batch")
    asked = arg_int("points", DEFAULT_POINTS, MIN_POINTS, MAX_POINTS, source=body)
    points = min(asked, max(MIN_POINTS, MAX_BATCH_POINTS // max(1, len(items))))
    window = window_of(body)
    _wait_loaded(body, items)
    with provider().serving():
        out = [_batch_item(item, points, window) for item in items]
        answer: dict[str, Any] = {"points": points, "series": out,
                                  "loading": any(item.get("loading", False) for item in out)}
        if points < asked:
            answer.update(points_requested=asked, reduced=True)
        return json_response(answer)


MAX_WAIT = 10.0  # seconds a batch may wait for the first load (waitress has 8 threads)


def _wait_loaded(body: dict, items: list) -> None:
    """Sleep (not holding the GIL) while the first load may add points of the batch's tags,
    up to ``body["wait"]`` seconds."""
    wait = body.get("wait", 0)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not 0 <= wait <= MAX_WAIT:
        raise ApiError(400, f"parameter wait must be a number of seconds from 0 to {MAX_WAIT:g}")
    if not wait:
        return
    data = provider()
    tags = {item["tag"] for item in items if isinstance(item, dict)
            and isinstance(item.get("tag"), str)}
    deadline = time.monotonic() + wait
    while any(data.scalar_pending(tag) for tag in tags) and time.monotonic() < deadline:
        time.sleep(0.05)


def _batch_item(item: Any, points: int, window: Window) -> dict[str, Any]:
    if not isinstance(item, dict) or not isinstance(item.get("run"), str) or not isinstance(
        item.get("tag"), str
    ):
        return {"error": "each item must be {\"run\": string, \"tag\": string}"}
    try:
        return series_json(item["run"], item["tag"], points, window_of(item, window),
                           rank_of(item))
    except ApiError as err:
        return {"run": item["run"], "tag": item["tag"], "error": err.message}


@blueprint.get("/api/scalars/order")
def first_screen() -> Response:
    """The order the scalars page opens on (``?run=`` repeated: of those runs' tags; every
    run's by default): sections and tags, losses and main metrics first, then the sections
    most recently updated (see ``kinds.scalar.order``)."""
    data = provider()
    runs = [r for r in request.args.getlist("run") if r] or list(data.runs())
    etag = etag_for("scalar-order", data.version, data.loaded, runs)
    return etag_json(etag, lambda: order.order(order.last_updates(data, runs)))


@blueprint.route("/api/scalars/groups", methods=["GET", "POST"])
def scalar_groups() -> Response:
    """One tag over many runs, grouped: each group's centre line and band, computed here
    (see :mod:`visualdl.series.groups` for the smoothing, the common step grid and the
    statistics). Body::

        {"tag": "loss", "runs": [...] (default: every run with the tag),
         "regex": "^(.*)_seed\\d+$" | "hparams": ["lr", ...],
         "stat": "mean" | "median", "band": "minmax" | "std" | "sem",
         "smoothing": 0.6, "points": 1000, "start_step": ..., "end_step": ...}

    or the same as a GET query (``run`` and ``hparam`` repeat: ``?tag=loss&hparam=lr``).
    """
    body = json_body() if request.method == "POST" else _groups_query()
    if not isinstance(body, dict):
        raise ApiError(400, 'body must be a JSON object: {"tag": ..., "regex" or "hparams": ...}')
    tag = arg_str("tag", source=body)
    spec = _group_spec(body)
    stat = _body_choice(body, "stat", "mean", groups.STATS)
    band = _body_choice(body, "band", "minmax", groups.BANDS)
    smoothing = body.get("smoothing", 0.0)
    if isinstance(smoothing, bool) or not isinstance(smoothing, (int, float)) or \
            not 0 <= smoothing < 1:
        raise ApiError(400, "parameter smoothing must be a number from 0 to below 1")
    points = arg_int("points", DEFAULT_POINTS, MIN_POINTS, MAX_POINTS, source=body)
    window = step_range(body)
    data = provider()
    runs = body.get("runs")
    if runs is None:
        runs = [r for r in data.runs() if data.has_tag(r, KIND, tag)]
    elif not isinstance(runs, list) or not all(isinstance(r, str) for r in runs):
        raise ApiError(400, "parameter runs must be a list of run names")
    series: dict[str, Any] = {}
    for run in dict.fromkeys(runs):
        try:
            series[run] = data.scalars(run, tag)
        except KeyError:
            continue  # a run without the tag (or gone) is left out, as in a chart
    group_values = registry.get("config").part("merge").group_values
    hparams_of = group_values(data) if spec.hparams else (lambda r: None)
    out = []
    for name, members in groups.group_runs(series, spec, hparams_of).items():
        result = groups.group_stats([(series[r].steps, series[r].values) for r in members],
                                    smoothing=float(smoothing), stat=stat, band=band,
                                    points=points, window=window)
        out.append({"name": name, "members": members, "steps": result.steps.tolist(),
                    "center": float_list(result.center), "lower": float_list(result.lower),
                    "upper": float_list(result.upper), "count": result.count.tolist(),
                    "interpolated": result.interpolated})
    return json_response({"tag": tag, "stat": stat, "band": band, "smoothing": smoothing,
                          "groups": out, "loading": data.scalar_pending(tag)})


def _groups_query() -> dict[str, Any]:
    """A GET's query string as the POST body it stands for."""
    args = request.args
    body: dict[str, Any] = {k: args[k] for k in ("tag", "regex", "stat", "band", "points",
                                                 "start_step", "end_step") if k in args}
    if args.getlist("hparam"):
        body["hparams"] = args.getlist("hparam")
    if args.getlist("run"):
        body["runs"] = args.getlist("run")
    if "smoothing" in args:
        try:
            body["smoothing"] = float(args["smoothing"])
        except ValueError:
            raise ApiError(400, "parameter smoothing must be a number from 0 to below 1") \
                from None
    return body


def _group_spec(body: dict) -> "groups.GroupSpec":
    regex, names = body.get("regex"), body.get("hparams")
    if regex not in (None, "") and names not in (None, []):
        raise ApiError(400, "give either regex or hparams, not both")
    if regex not in (None, ""):
        try:  # RE2: a request's pattern is matched in linear time (series/patterns.py)
            patterns.compile_pattern(regex, "regex")
        except patterns.PatternError as err:
            raise ApiError(400, f"parameter {err}") from None
        return groups.GroupSpec(regex=regex)
    if names not in (None, []):
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise ApiError(400, "parameter hparams must be a list of hparam names")
        return groups.GroupSpec(hparams=tuple(names))
    raise ApiError(400, "missing parameter: regex or hparams (how to group the runs)")


def _body_choice(body: Any, name: str, default: str, choices: tuple[str, ...]) -> str:
    value = body.get(name) or default
    if value not in choices:
        raise ApiError(400, f"parameter {name} must be one of: {', '.join(choices)}")
    return value


@blueprint.get("/api/scalars/download")
def download() -> Response:
    """Full-resolution series of one tag for one or more runs (``run`` may repeat); with
    several tags (``tag`` repeated: a combined chart), one column per (run, tag) line.
    One tag with ``smoothing`` (and ``smoothing_mode``/``smoothing_points``, as for
    ``/api/scalars``) adds each point's ``smoothed`` value: the chart's curve. ``rank=N``
    (the rank the chart shows): worker N's series of each run that has it, the default
    series of the others; the rows then say which rank each is."""
    tags = list(dict.fromkeys(t for t in request.args.getlist("tag") if t)) or [arg_str("tag")]
    runs = [r for r in request.args.getlist("run") if r]
    if not runs:
        raise ApiError(400, "missing parameter: run")
    fmt = arg_choice("format", "csv", ("csv", "json"))
    rank = rank_of()
    if len(tags) > 1:
        return _download_lines(runs, tags, fmt, rank)
    tag = tags[0]
    ranks = {run: _rank_in(run, rank) for run in dict.fromkeys(runs)}
    series = [(run, _load(run, tag, r)) for run, r in ranks.items()]
    spec = window_of().smoothing_spec
    smoothed = [_full_smoothed(d, spec) for _, d in series] if spec.active else None
    shown = [ranks[run] or 0 for run, _ in series] if rank else None
    if fmt == "json":
        items = [{"run": run, "steps": d.steps.tolist(),
                  "wall_times": float_list(d.wall_times), "values": float_list(d.values)}
                 for run, d in series]
        for item, column in zip(items, smoothed or ()):
            item["smoothed"] = float_list(column)
        for item, r in zip(items, shown or ()):
            item["rank"] = r
        body = dumps({"tag": tag, "series": items})
        mimetype = "application/json"
    else:
        body = _csv(series, smoothed, shown)
        mimetype = "text/csv"
    response = Response(body, mimetype=mimetype)
    name = _filename((tag if len(series) > 1 else f"{series[0][0]}_{tag}")
                     + (f"_rank{rank}" if rank else ""))
    response.headers["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    response.headers["Cache-Control"] = "no-store"
    return response


def _download_lines(runs: list[str], tags: list[str], fmt: str, rank: int | None) -> Response:
    """A combined chart's lines: every (run, tag) pair that exists (at least one must), of
    ``rank`` where the run has it (its CSV column and JSON series then say so)."""
    lines = []  # (run, rank shown or None, tag, data)
    for run in dict.fromkeys(runs):
        shown = _rank_in(run, rank)
        for tag in tags:
            if provider().has_tag(run, KIND, tag):
                lines.append((run, shown, tag, _load(run, tag, shown)))
    if not lines:
        raise ApiError(404, "none of the runs has any of the tags")
    if fmt == "json":
        series = []
        for run, shown, tag, d in lines:
            item = {"run": run, "tag": tag, "steps": d.steps.tolist(),
                    "wall_times": float_list(d.wall_times), "values": float_list(d.values)}
            if rank:
                item["rank"] = shown or 0
            series.append(item)
        body = dumps({"tags": tags, "series": series})
        mimetype = "application/json"
    else:
        body, mimetype = _csv_columns(lines), "text/csv"
    response = Response(body, mimetype=mimetype)
    name = _filename("_".join(tags))
    response.headers["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    response.headers["Cache-Control"] = "no-store"
    return response


def _csv_columns(lines: list) -> str:
    """``step`` then one column per line (``run/tag``, ``run (rank N)/tag`` for a rank
    shown), a row per step any line has; a cell is empty where its line has no point (the
    last point wins where a step repeats)."""
    steps = np.unique(np.concatenate([d.steps for *_, d in lines]))
    columns = []
    for *_, d in lines:
        column = np.full(len(steps), None, dtype=object)
        column[np.searchsorted(steps, d.steps)] = [repr(v) for v in d.values.tolist()]
        columns.append(column.tolist())
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    names = [f"{run}/{tag}" if shown is None else f"{run} (rank {shown})/{tag}"
             for run, shown, tag, _ in lines]
    writer.writerow(["step"] + [_csv_safe(name) for name in names])
    writer.writerows(zip(steps.tolist(), *columns))
    return buf.getvalue()


def _full_smoothed(data: Any, spec: Smoothing) -> np.ndarray:
    """Every point's smoothed value (a download has them all: no span limit applies)."""
    n = int(data.steps.shape[0])
    found = smooth_at(data, np.arange(n, dtype=np.int64), spec) if n else None
    return found if found is not None else np.full(n, np.nan)


def _csv(series: list, smoothed: list | None = None, ranks: list[int] | None = None) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["run"] + (["rank"] if ranks else []) + ["step", "wall_time", "value"]
                    + (["smoothed"] if smoothed else []))
    for i, (run, d) in enumerate(series):
        cells = (_csv_safe(run), ranks[i]) if ranks else (_csv_safe(run),)
        columns = [d.steps.tolist(), d.wall_times.tolist(), d.values.tolist()]
        if smoothed:
            columns.append(smoothed[i].tolist())
        writer.writerows((*cells, row[0], *map(repr, row[1:])) for row in zip(*columns))
    return buf.getvalue()


def _csv_safe(text: str) -> str:
    """Defuse spreadsheet formula injection (OWASP): a leading = + - @ gets a quote."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _filename(text: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")
    return cleaned[:100] or "scalars"
