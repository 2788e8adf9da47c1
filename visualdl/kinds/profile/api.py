"""The profiler's routes: ``/api/profile*``. Every route names one profile by
``?run=&tag=`` and optionally ``step=`` (the profile logged at that step; the newest by
default), and answers from the trace model kept in the app's :class:`Models`.

A trace that cannot be read is a 422 whose message says why; the other profiles and views
are unaffected. A model still being built after ``WAIT_SECONDS`` is a 503 with
``Retry-After`` (as the embeddings' projections): the build goes on, and the retry finds it.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable

from flask import Blueprint, Flask, Response, request

from visualdl.sources.values import BlobRef
from visualdl.api import blobs
from visualdl.api.common import app_cache, arg_choice, arg_float, arg_int, arg_str, \
    etag_for, etag_json, provider, require_run
from visualdl.api.errors import RETRY_AFTER, ApiError, busy
from visualdl.kinds.profile import distributed as _distributed
from visualdl.kinds.profile import views, warm
from visualdl.kinds.profile.build import build_model, give_back_memory, source
from visualdl.kinds.profile.model import TraceModel
from visualdl.kinds.profile.parse import TraceError

__all__ = ["blueprint", "Models", "WAIT_SECONDS", "RETRY_AFTER", "trace_model"]

KIND = "profile"
blueprint = Blueprint("profile", __name__)
_STEP_MAX = 2**63 - 1
_MAX_WIDTH = 16384
#: The longest a request waits for a model; then it is a 503 (the server's request threads
#: are few: a big trace's parse must not hold them).
WAIT_SECONDS = 8.0
CAPACITY = 4  # models kept per app (each is column arrays of the trace's size)


class Models:
    """The app's trace models, in a small LRU: each built once, on a thread of its own,
    however many requests (and the warm thread) ask for it meanwhile."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._items: OrderedDict[Any, Future] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, key: Any, build: Callable[[], TraceModel]) -> Future:
        """The model of ``key``, being built by ``build()`` (started now unless it is
        built or being built already)."""
        with self._lock:
            future = self._items.get(key)
            if future is not None:
                self._items.move_to_end(key)
                return future
            future = self._items[key] = Future()
            finished = [k for k, f in self._items.items() if f.done()]
            for old in finished[:max(0, len(self._items) - self.capacity)]:
                del self._items[old]
        threading.Thread(target=self._build, args=(key, future, build), daemon=True,
                         name="visualdl-profile-build").start()
        return future

    def get(self, key: Any, build: Callable[[], TraceModel], wait: float) -> TraceModel:
        """The model of ``key``, waited for at most ``wait`` seconds (then a 503)."""
        try:
            return self.start(key, build).result(timeout=max(0.0, wait))
        except FutureTimeout:
            raise busy("the trace is still being parsed") from None

    def failure(self, key: Any) -> TraceError | None:
        """Why the model of ``key`` could not be built, when it was tried and failed so."""
        with self._lock:
            future = self._items.get(key)
        if future is None or not future.done():
            return None
        err = future.exception()
        return err if isinstance(err, TraceError) else None

    def _build(self, key: Any, future: Future, build: Callable[[], TraceModel]) -> None:
        try:
            future.set_result(build())
        except TraceError as err:  # kept: the same bytes will not read better
            future.set_exception(err)
        except BaseException as err:  # noqa: BLE001 - not kept: the next request tries again
            with self._lock:
                if self._items.get(key) is future:
                    del self._items[key]
            future.set_exception(err)


@blueprint.record_once
def _warm(state) -> None:  # noqa: ANN001 - flask's BlueprintSetupState
    """Build the newest profile's model in the background (see visualdl.kinds.profile.warm)."""
    warm.start(state.app, _begin)


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


def _key(ref: BlobRef) -> tuple:
    return (ref.path, ref.offset, ref.size, ref.tag, ref.step)


def _builder(ref: BlobRef, app: Flask | None = None) -> Callable[[], TraceModel]:
    """``build_model`` for ``ref``, to run on a thread of its own (no app context there)."""
    data = provider(app)

    def build() -> TraceModel:
        try:
            src = source(ref, data.load_blob)
        except TraceError:
            raise
        except (OSError, ValueError) as err:  # as blobs.load says it
            raise ApiError(404, f"{ref.kind} at step {ref.step} can no longer be read: "
                                f"{err}") from None
        return build_model(src)

    return build


def _begin(app: Flask | None, ref: BlobRef) -> None:
    """Start building ``ref``'s model (``app``: the current one by default), waiting for
    nothing."""
    if not ref.meta.get("error"):
        app_cache("profile.models", Models, app).start(_key(ref), _builder(ref, app))


def _model(ref: BlobRef, until: float | None = None) -> TraceModel:
    """``ref``'s model, waited for until ``until`` (``time.monotonic()``; by default
    ``WAIT_SECONDS`` from now)."""
    if ref.meta.get("error"):
        raise ApiError(422, f"this trace cannot be read: {ref.meta['error']}")
    until = time.monotonic() + WAIT_SECONDS if until is None else until
    models = app_cache("profile.models", Models)
    try:
        return models.get(_key(ref), _builder(ref), until - time.monotonic())
    except TraceError as err:
        raise ApiError(422, f"this trace cannot be read: {err}") from None


def trace_model(run: str, tag: str, step: int | None = None) -> tuple[BlobRef, TraceModel]:
    """The profile of ``run``/``tag`` (the newest, or the one logged at ``step``) and its
    trace model, for another kind's route (the graph's values by profiler time): built and
    cached as this kind's routes do, with their answers for a missing or unreadable trace
    (ApiError 404 or 422, 503 while it is still being parsed)."""
    require_run(run)
    if step is None:
        found = blobs.refs(KIND, run, tag)
        if not found:
            raise ApiError(404, f"no profile for run {run}, tag {tag}")
        ref = found[-1]
    else:
        ref = blobs.ref_for_step(KIND, run, tag, step)
    return ref, _model(ref)


def _answer(name: str, build: Callable[[TraceModel], Any], prefix: str = "",
            until: float | None = None) -> Response:
    ref = _ref(prefix)
    etag = etag_for("profile", name, ref.path, ref.offset, ref.size, ref.tag, ref.step,
                    sorted(request.args.items(multi=True)))

    def body() -> Any:
        try:
            model = _model(ref, until)
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
    return _answer("overview", views.overview)


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
    until = time.monotonic() + WAIT_SECONDS  # one wait for both models, built at once
    _begin(None, _ref())
    model_b = _model(ref_b, until)

    def build(model_a: TraceModel) -> dict:
        table_a = views.operators(model_a, span_a, group)
        table_b = views.operators(model_b, span_b, group)
        out = views.compare(table_a, table_b)
        out["a"] = {"run": arg_str("run"), "tag": arg_str("tag"), "span": span_a or "all"}
        out["b"] = {"run": args.get("run2") or arg_str("run"),
                    "tag": args.get("tag2") or arg_str("tag"), "span": span_b or "all"}
        return out

    return _answer("compare", build, until=until)


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


@blueprint.get("/api/profile/distributed")
def distributed() -> Response:
    """``?run=[&step=]``: every worker (profile tag) of the run side by side, each step split
    into computation, overlap, communication and other; the slowest rank; the collectives.
    Each worker's newest profile, or its profile at ``step``. A worker whose trace is
    missing or unreadable is named in ``warnings``; workers sharing no step are a 422."""
    run = require_run(arg_str("run"))
    step = None
    if request.args.get("step", "") != "":
        step = arg_int("step", 0, -_STEP_MAX - 1, _STEP_MAX)
    tags = sorted(provider().tags(run).get(KIND, []))
    if not tags:
        raise ApiError(404, "no profile in this run")
    refs, missing = _worker_refs(run, tags, step)
    etag = etag_for("profile", "distributed", run, step, [_key(r) for r in refs.values()])

    def body() -> Any:
        until = time.monotonic() + WAIT_SECONDS  # one wait for all, built at once
        for ref in refs.values():
            _begin(None, ref)
        workers = []
        for tag, ref in refs.items():
            try:
                workers.append((tag, _model(ref, until)))
            except ApiError as err:
                if err.status == 503:
                    raise
                missing.append((tag, err.message))
        if not workers:
            raise ApiError(422, "no worker's trace can be read: " + "; ".join(
                f"{t}: {why}" for t, why in missing))
        try:
            return _distributed.distributed(workers, missing)
        except ValueError as err:
            raise ApiError(422, str(err)) from None

    return etag_json(etag, body)


def _worker_refs(run: str, tags: list[str], step: int | None
                 ) -> tuple[dict[str, BlobRef], list[tuple[str, str]]]:
    """Each worker's profile (newest, or at ``step``), and the workers without one."""
    refs: dict[str, BlobRef] = {}
    missing: list[tuple[str, str]] = []
    for tag in tags:
        try:
            ref = blobs.ref_for_step(KIND, run, tag, step) if step is not None \
                else blobs.refs(KIND, run, tag)[-1]
        except (ApiError, IndexError):
            missing.append((tag, f"no profile at step {step}" if step is not None
                            else "no profile"))
            continue
        refs[tag] = ref
    return refs, missing


@blueprint.get("/api/profile/trace")
def download() -> Response:
    """The raw trace as gzip'd Chrome-trace JSON, to open in Perfetto or chrome://tracing:
    the bytes as stored, never inflated here, and only of a trace that was read and
    accepted (one listed with an error, or whose parse failed, is a 422 as in the views)."""
    ref = _ref()
    if ref.meta.get("error"):
        raise ApiError(422, f"this trace cannot be read: {ref.meta['error']}")
    failed = app_cache("profile.models", Models).failure(_key(ref))
    if failed is not None:
        raise ApiError(422, f"this trace cannot be read: {failed}")
    loaded = blobs.load(ref)
    if ref.source == "torchtrace":  # a PyTorch trace file: as the user's file has it
        base = os.path.basename(ref.path)
        if loaded.gzipped:  # (read by the provider: the file may be in object storage)
            return blobs.bytes_response(ref, loaded.gz, "application/gzip", base)
        return blobs.bytes_response(ref, loaded.data, "application/json", base)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{ref.tag}.{ref.step}")
    return blobs.bytes_response(ref, loaded.trace_gz, "application/gzip",
                                f"{safe}.pt.trace.json.gz")
