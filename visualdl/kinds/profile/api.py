"""The profiler's routes: ``/api/profile*``. Every route names one profile by
``?run=&tag=`` and optionally ``step=`` (the profile logged at that step; the newest by
default), and answers from the trace model kept in the app's cache (loaded on first use).

A trace that cannot be read is a 422 whose message says why; the other profiles and views
are unaffected.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from flask import Blueprint, Response, request

from visualdl.sources.values import BlobRef
from visualdl.api import blobs
from visualdl.api.common import app_cache, arg_choice, arg_float, arg_int, arg_str, \
    etag_for, etag_json, provider
from visualdl.api.errors import ApiError
from visualdl.kinds.profile import store, views, warm, worker
from visualdl.kinds.profile.cache import TraceCache, build_model, give_back_memory
from visualdl.kinds.profile.model import TraceModel
from visualdl.kinds.profile.parse import TraceError

__all__ = ["blueprint"]

KIND = "profile"
blueprint = Blueprint("profile", __name__)
_STEP_MAX = 2**63 - 1
_MAX_WIDTH = 16384


@blueprint.record_once
def _warm(state) -> None:  # noqa: ANN001 - flask's BlueprintSetupState
    """Parse the newest profile in the background (see visualdl.kinds.profile.warm)."""
    warm.start(state.app, _model)


@blueprint.get("/api/profile")
def index() -> Response:
    """``?run=&tag=``: every profile of the tag: step range, source, size, any error."""
    return blobs.index_response(KIND, ("end_step", "source", "error"))


def _ref(prefix: str = "") -> BlobRef:
    run, tag = arg_str(f"run{prefix}"), arg_str(f"tag{prefix}")
    if request.args.get(f"step{prefix}", "") == "":
        found = blobs.refs(KIND, run, tag)
        if not found:
            raise ApiError(404, "no profile for this tag")
        return found[-1]
    step = arg_int(f"step{prefix}", 0, -_STEP_MAX - 1, _STEP_MAX)
    return blobs.ref_for_step(KIND, run, tag, step)


def _model(ref: BlobRef) -> TraceModel:
    if ref.meta.get("error"):
        raise ApiError(422, f"this trace cannot be read: {ref.meta['error']}")
    cache = app_cache("profile.traces", TraceCache)
    key = (ref.path, ref.offset, ref.size, ref.tag, ref.step)
    try:
        return cache.get(key, lambda: _load(ref))
    except TraceError as err:
        raise ApiError(422, f"this trace cannot be read: {err}") from None


def _load(ref: BlobRef) -> TraceModel:
    """The model saved on disk by an earlier server for these very bytes (see
    visualdl.kinds.profile.store), else the trace parsed (and the model saved): in a
    worker process when it is big (visualdl.kinds.profile.worker)."""
    src = store.source(ref, blobs.load)
    model = store.read(src.ident)
    if model is not None:
        worker.discard(src.ident)  # one started at start-up that saved it first
        return model
    if worker.worth(src.path, src.stored):  # off the server's GIL
        model = worker.build(src.ident, src.path, src.stored, src.kind)
        if model is not None:
            return model
    model = build_model(src.blob if src.blob is not None else blobs.load(ref))
    store.save_later(src.ident, model)
    return model


def _answer(name: str, build: Callable[[TraceModel], Any], prefix: str = "") -> Response:
    ref = _ref(prefix)
    etag = etag_for("profile", name, ref.path, ref.offset, ref.size, ref.tag, ref.step,
                    sorted(request.args.items(multi=True)))

    def body() -> Any:
        try:
            model = _model(ref)
            out = build(model)
            if model.n > 100_000:  # a big trace's temporaries: hand the memory back
                give_back_memory()
            return out
        except LookupError as err:
            raise ApiError(404, str(err.args[0]) if err.args else "not found") from None
        except ValueError as err:
            raise ApiError(400, str(err)) from None

    return etag_json(etag, body)


def _span(name: str = "span") -> str | None:
    value = request.args.get(name) or None
    if value not in (None, "all"):
        try:
            int(value)
        except ValueError:
            raise ApiError(400, f"parameter {name} must be 'all' or a step number") from None
    return value


@blueprint.get("/api/profile/overview")
def overview() -> Response:
    """Per step: wall time split into data loading, forward, backward, optimizer,
    compilation, GPU kernel/memcpy/runtime and other (the parts add up to the step); the
    environment the trace describes."""
    return _answer("overview", _overview)


def _overview(model: TraceModel) -> dict:
    """Saved beside the model's files when there are some (computed by the worker that
    built it, or by an earlier request), else computed, and saved there for a restart."""
    found = store.overview(model)
    if found is None:
        found = views.overview(model)
        if model.folder is not None:
            store.write_overview(model.folder, found)
    return found


@blueprint.get("/api/profile/operators")
def operators() -> Response:
    """``&span=all|<step>&group=name|shapes``: the operator table."""
    span = _span()
    group = arg_choice("group", "name", ("name", "shapes"))
    return _answer("operators", lambda m: views.operators(m, span, group))


@blueprint.get("/api/profile/kernels")
def kernels() -> Response:
    """``&span=``: GPU kernels by name (empty rows without GPU data)."""
    span = _span()
    return _answer("kernels", lambda m: views.kernels(m, span))


@blueprint.get("/api/profile/timeline")
def timeline() -> Response:
    """``&start=&end=&width=``: the events in [start, end] (trace microseconds; the whole
    trace by default) at ``width`` pixels, events shorter than a pixel merged."""
    start = arg_float("start", unit="microseconds")
    end = arg_float("end", unit="microseconds")
    if start is not None and end is not None and end <= start:
        raise ApiError(400, "parameter end must be greater than start")
    width = arg_int("width", 1000, 1, _MAX_WIDTH)
    return _answer("timeline", lambda m: views.timeline(m, start, end, width))


@blueprint.get("/api/profile/event")
def event() -> Response:
    """``&id=``: one event's details and args (``id`` as the timeline or search sent)."""
    index = arg_int("id", -1, 0, 2**31)
    arg_str("id")
    return _answer("event", lambda m: views.event(m, index))


@blueprint.get("/api/profile/search")
def search() -> Response:
    """``&q=``: events whose name contains q (case-insensitive), in time order."""
    query = arg_str("q")
    limit = arg_int("limit", 200, 1, 5000)
    return _answer("search", lambda m: views.search(m, query, limit))


@blueprint.get("/api/profile/memory")
def memory() -> Response:
    """Allocated bytes over time per device, the peak, and the ops allocating most."""
    return _answer("memory", views.memory)


@blueprint.get("/api/profile/compare")
def compare() -> Response:
    """Two operator tables (``run/tag/step/span`` against ``run2/tag2/step2/span2``; a
    side not given repeats the first) joined by name, with b - a differences."""
    group = arg_choice("group", "name", ("name", "shapes"))
    span_a, span_b = _span("span"), _span("span2")
    args = request.args
    second = "2" if any(args.get(k) for k in ("run2", "tag2")) else ""
    ref_b = _ref_b(second)
    model_b = _model(ref_b)

    def build(model_a: TraceModel) -> dict:
        table_a = views.operators(model_a, span_a, group)
        table_b = views.operators(model_b, span_b, group)
        out = views.compare(table_a, table_b)
        out["a"] = {"run": arg_str("run"), "tag": arg_str("tag"), "span": span_a or "all"}
        out["b"] = {"run": args.get("run2") or arg_str("run"),
                    "tag": args.get("tag2") or arg_str("tag"), "span": span_b or "all"}
        return out

    return _answer("compare", build)


def _ref_b(second: str) -> BlobRef:
    if not second:
        if request.args.get("step2"):
            step = arg_int("step2", 0, -_STEP_MAX - 1, _STEP_MAX)
            return blobs.ref_for_step(KIND, arg_str("run"), arg_str("tag"), step)
        return _ref()
    run = request.args.get("run2") or arg_str("run")
    tag = request.args.get("tag2") or arg_str("tag")
    if request.args.get("step2", "") == "":
        found = blobs.refs(KIND, run, tag)
        if not found:
            raise ApiError(404, "no profile for the second run and tag")
        return found[-1]
    step = arg_int("step2", 0, -_STEP_MAX - 1, _STEP_MAX)
    return blobs.ref_for_step(KIND, run, tag, step)


@blueprint.get("/api/profile/trace")
def download() -> Response:
    """The raw trace as gzip'd Chrome-trace JSON, to open in Perfetto or chrome://tracing."""
    ref = _ref()
    loaded = blobs.load(ref)
    if hasattr(loaded, "json"):  # a PyTorch trace file: as the user's file has it
        base = os.path.basename(ref.path)
        if loaded.gzipped:  # (read by the provider: the file may be in object storage)
            return blobs.bytes_response(ref, loaded.gz, "application/gzip", base)
        return blobs.bytes_response(ref, loaded.json, "application/json", base)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{ref.tag}.{ref.step}")
    return blobs.bytes_response(ref, loaded.trace_gz, "application/gzip",
                                f"{safe}.pt.trace.json.gz")
