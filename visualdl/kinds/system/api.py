"""System metrics routes: a run's hosts and metrics, their series on the wall-time axis,
the machine's state at a wall time (what a hovered training point shows), and each run's
GPU memory peak (a column of the run table)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from visualdl.api.common import (arg_float, arg_int, arg_str, etag_for, etag_json, provider,
                                 require_run)
from visualdl.api.errors import ApiError
from visualdl.api.jsonio import float_list, json_number
from visualdl.kinds.system import series
from visualdl.series.downsample import MIN_POINTS

__all__ = ["blueprint"]

KIND = "system"
DEFAULT_POINTS = 500
MAX_POINTS = 100_000

blueprint = Blueprint("system", __name__)


def _hosts(run: str) -> dict[str, dict[str, str]]:
    require_run(run)
    try:
        tags = provider().tags(run).get(KIND, ())
    except KeyError:
        raise ApiError(404, "unknown run") from None
    return series.by_host(tags)


def _read(run: str):
    def read(tag: str) -> Any:
        try:
            return provider().scalars(run, tag)
        except KeyError:
            raise ApiError(404, "unknown run") from None  # vanished since it was listed
    return read


@blueprint.get("/api/system")
def system() -> Response:
    """``?run=``: its hosts, each with its metrics (tag, points, first and last wall time,
    last value), and the run's GPU memory peak (bytes, null without GPUs)."""
    run = arg_str("run")
    etag = etag_for("system", provider().version, run)
    return etag_json(etag, lambda: _overview(run))


def _overview(run: str) -> dict[str, Any]:
    hosts = _hosts(run)
    read = _read(run)
    out = []
    for host, metrics in hosts.items():
        rows = []
        for metric, tag in metrics.items():
            data = read(tag)
            n = int(data.wall_times.shape[0])
            rows.append({"metric": metric, "tag": tag, "points": n,
                         "first": float(data.wall_times[0]) if n else None,
                         "last": float(data.wall_times[-1]) if n else None,
                         "last_value": json_number(float(data.values[-1])) if n else None})
        out.append({"host": host, "metrics": rows})
    tags = [tag for metrics in hosts.values() for tag in metrics.values()]
    return {"run": run, "hosts": out, "gpu_memory_peak": series.gpu_memory_peak(tags, read)}


@blueprint.get("/api/system/series")
def system_series() -> Response:
    """``?run=&host=&points=``: every metric of one host as a downsampled series on the
    wall-time axis (min and max of each bucket kept), optionally ``&wall_min=&wall_max=``."""
    run, host = arg_str("run"), arg_str("host")
    points = arg_int("points", DEFAULT_POINTS, MIN_POINTS, MAX_POINTS)
    low, high = arg_float("wall_min"), arg_float("wall_max")
    if low is not None and high is not None and low > high:
        raise ApiError(400, "parameter wall_min must not be greater than wall_max")
    etag = etag_for("system-series", provider().version, run, host, points, low, high)
    return etag_json(etag, lambda: _series(run, host, points, low, high))


def _series(run: str, host: str, points: int, low: float | None,
            high: float | None) -> dict[str, Any]:
    metrics = _hosts(run).get(host)
    if metrics is None:
        raise ApiError(404, "unknown host for this run")
    out = []
    for metric, tag in metrics.items():
        try:
            view = provider().scalar_view(run, tag, points, None, None, low, high)
        except KeyError:
            raise ApiError(404, "unknown run") from None
        out.append({"metric": metric, "tag": tag, "total": view.total,
                    "wall_times": float_list(view.wall_times),
                    "values": float_list(view.values)})
    return {"run": run, "host": host, "series": out}


@blueprint.get("/api/system/at")
def system_at() -> Response:
    """``?run=&wall_time=``: each host's metrics at that wall time (seconds since the
    epoch): for each metric its sample nearest in time, with that sample's wall time."""
    run = arg_str("run")
    wall_time = arg_float("wall_time")
    if wall_time is None:
        raise ApiError(400, "missing parameter: wall_time")
    etag = etag_for("system-at", provider().version, run, wall_time)
    return etag_json(etag, lambda: {"run": run, "wall_time": wall_time, "hosts":
                                    series.state_at(_hosts(run), _read(run), wall_time)})


@blueprint.get("/api/system/peaks")
def system_peaks() -> Response:
    """Every run's GPU memory peak (bytes; runs without GPU samples are left out):
    ``{"runs": {run: bytes}}``, or only the runs named by ``run`` (repeatable)."""
    data = provider()
    wanted = [r for r in request.args.getlist("run") if r]
    etag = etag_for("system-peaks", data.version, data.loaded, wanted)
    return etag_json(etag, lambda: {"runs": _peaks(wanted)})


def _peaks(wanted: list[str]) -> dict[str, float]:
    listed = provider().tags_by_kind(KIND).get(KIND, {})
    out = {}
    for run in (wanted or listed):
        tags = listed.get(run)
        if not tags:
            continue
        try:
            peak = series.gpu_memory_peak(tags, _read(run))
        except ApiError:
            continue  # the run vanished meanwhile
        if peak is not None:
            out[run] = peak
    return out
