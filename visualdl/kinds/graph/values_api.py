"""``/api/graph/values``: a value per node of one model, to colour and rank nodes by.

``by=params|flops`` need only the model. ``by=activations`` reads the scalars the
``VisualDL`` callback logs (``activations/<layer>/<stat>``) from ``run`` (default: the run
that logged the graph), at the newest step at or before ``step`` (default: the newest).
``by=profile`` maps the profile ``profile_run``/``worker`` (the profile tag; default: the
model's run and its only, or first, profile tag) at ``profile_step`` (default: the newest)
onto the nodes; ``span`` (a ProfilerStep number of that profile; default: all of them)
counts only that step's ops. A model opened from a file or an upload has no run: those two
need the run named. Pairing, as "Show in graph" does it: a profile goes with the graph logged in the same
run (our framework's callback logs both there).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import numpy as np
from flask import request

from visualdl.api.common import arg_choice, arg_int, provider
from visualdl.api.errors import ApiError
from visualdl.kinds.graph.document import GraphDocument
from visualdl.kinds.graph.node_values import ACTIVATION_STATS, MEASURES, activations, flops, \
    parameters, to_json
from visualdl.kinds.graph.store import ModelSource

__all__ = ["ACTIVATION_PREFIX", "CACHE", "ValuesCache", "values_body", "values_key"]

ACTIVATION_PREFIX = "activations/"
CACHE = 8  # answers kept (a profile mapping reads every op event's args once)
_STEP_MAX = 2**63 - 1


class ValuesCache:
    """The last few answers, each valid while its parsed document is the store's."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: OrderedDict[Any, tuple[GraphDocument, dict[str, Any]]] = OrderedDict()

    def get(self, key: Any, doc: GraphDocument) -> dict[str, Any] | None:
        with self.lock:
            hit = self.items.get(key)
            if hit is None or hit[0] is not doc:
                return None
            self.items.move_to_end(key)
            return hit[1]

    def put(self, key: Any, doc: GraphDocument, body: dict[str, Any]) -> None:
        with self.lock:
            self.items[key] = (doc, body)
            while len(self.items) > CACHE:
                self.items.popitem(last=False)


def _opt_step(name: str) -> int | None:
    if request.args.get(name, "") == "":
        return None
    return arg_int(name, 0, -_STEP_MAX - 1, _STEP_MAX)


def values_key(model_id: str) -> tuple:
    """What identifies an answer: the model, the parameters, the data version."""
    return (model_id, provider().version, tuple(sorted(request.args.items(multi=True))))


def values_body(model_id: str, doc: GraphDocument, source: ModelSource | None) -> dict[str, Any]:
    """The answer for the request's parameters (ApiError on a bad one)."""
    by = arg_choice("by", "params", MEASURES)
    if by == "params":
        nv = parameters(doc.model)
        extra: dict[str, Any] = {}
    elif by == "flops":
        nv = flops(doc.model)
        extra = {}
    elif by == "activations":
        nv, extra = _activations(doc, source)
    else:
        nv, extra = _profile(doc, source)
    return {"model": model_id, **to_json(doc.hierarchy, nv), **extra}


def _run_of(source: ModelSource | None, name: str) -> str:
    run = request.args.get(name) or (source.run if source is not None else None)
    if not run:
        raise ApiError(400, f"parameter {name} is required: the model was not logged in a run")
    try:
        provider().tags(run)
    except KeyError:
        raise ApiError(404, f"unknown run ({name}={run})") from None
    return run


def _activations(doc: GraphDocument, source: ModelSource | None) -> tuple[Any, dict[str, Any]]:
    stat = arg_choice("stat", "mean", ACTIVATION_STATS)
    run = _run_of(source, "run")
    step = _opt_step("step")
    data = provider()
    suffix = f"/{stat}"
    stats: dict[str, float] = {}
    at: dict[str, int] = {}
    for tag in data.tags(run).get("scalar", []):
        if not (tag.startswith(ACTIVATION_PREFIX) and tag.endswith(suffix)):
            continue
        layer = tag[len(ACTIVATION_PREFIX):-len(suffix)]
        series = data.scalars(run, tag)
        k = len(series.steps) if step is None else \
            int(np.searchsorted(series.steps, step, side="right"))
        if k == 0 or not layer:
            continue
        value = float(series.values[k - 1])
        if np.isfinite(value):
            stats[layer] = value
            at[layer] = int(series.steps[k - 1])
    if not stats:
        raise ApiError(404, f"no activation statistics ({ACTIVATION_PREFIX}<layer>{suffix}) in "
                            f"run {run}" + (f" at or before step {step}" if step is not None
                                            else "") + ": log them with VisualDL("
                            "activation_layers=[...])")
    nv = activations(doc.model, stats, stat)
    return nv, {"run": run, "step": max(at.values()), "layers_logged": sorted(stats)}


def _profile(doc: GraphDocument, source: ModelSource | None) -> tuple[Any, dict[str, Any]]:
    from visualdl.kinds.graph.profile_map import PHASES, ProfileMapError, profile_values
    from visualdl.kinds.profile.api import trace_model
    from visualdl.kinds.profile.views import span_window

    run = _run_of(source, "profile_run")
    tags = sorted(provider().tags(run).get("profile", []))
    worker = request.args.get("worker") or (tags[0] if tags else "")
    if not worker:
        raise ApiError(404, f"no profile in run {run}")
    if worker not in tags:
        raise ApiError(404, f"no profile tag {worker} in run {run} (it has: "
                            f"{', '.join(tags) or 'none'})")
    phase = arg_choice("phase", "all", PHASES)
    ref, trace = trace_model(run, worker, _opt_step("profile_step"))
    op = request.args.get("op") or None
    span = request.args.get("span") or "all"
    try:
        window = span_window(trace, span)
    except ValueError as err:
        raise ApiError(400, str(err)) from None
    except LookupError as err:
        raise ApiError(404, f"profile {run}/{worker} at step {ref.step}: {err}") from None
    try:
        nv = profile_values(doc.model, trace, phase, op=op, window=window)
    except ProfileMapError as err:
        raise ApiError(422, f"profile {run}/{worker} at step {ref.step}: {err}") from None
    extra = {"profile": {"run": run, "worker": worker, "step": ref.step, "span": span,
                         "workers": tags}}
    return nv, extra
