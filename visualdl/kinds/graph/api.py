"""HTTP API of the model graph view (``/api/graph/...``).

Models come from ``--model`` files (``create_app(models=...)``), from graphs logged with
``LogWriter.add_graph`` and from uploads. A bad upload is answered with a 400 that says
what is wrong with the file; nothing the user sends can cause a 500.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from flask import Blueprint, Flask, Response, current_app, g, request

from visualdl.api.common import (
    BODY_LIMITS_CONFIG, MODELS_CONFIG, app_cache, arg_int, arg_str, cached_json, etag_for, etag_json, json_body,
    not_modified, provider,
)
from visualdl.api.errors import ApiError
from visualdl.api.jsonio import json_response, plain_list
from visualdl.kinds.graph.errors import ModelError
from visualdl.kinds.graph.store import ModelStore

if TYPE_CHECKING:  # the graph modules import onnx; they load on the first graph request
    from visualdl.kinds.graph.document import GraphDocument
    from visualdl.kinds.graph.measure import Options

__all__ = ["MAX_UPLOAD_BYTES", "blueprint", "store", "view_body"]

MAX_UPLOAD_BYTES = 512 * 1024 * 1024
UPLOAD_PATH = "/api/graph/upload"
MAX_EXPANDED = 100_000
DIFF_CACHE = 4  # diffs kept: the view asks again for the JSON export and on every reopen

blueprint = Blueprint("graph", __name__)


@blueprint.record_once
def _install(state: Any) -> None:
    """Build the model store when the blueprint is registered (a bad --model path fails
    ``create_app`` with FileNotFoundError, which the CLI reports), and start parsing the
    first --model file."""
    app: Flask = state.app
    app.config.setdefault(BODY_LIMITS_CONFIG, {})[UPLOAD_PATH] = MAX_UPLOAD_BYTES
    _models(app).open_first_file()


@blueprint.before_request
def _request_started() -> None:
    store().request_started()
    g.graph_request_counted = True  # an earlier hook's answer skips this one, not teardown


@blueprint.teardown_request
def _request_ended(_error: BaseException | None) -> None:
    if g.pop("graph_request_counted", False):
        store().request_ended()


def _models(app: Flask) -> ModelStore:
    return app_cache("graph models", lambda: ModelStore(app.config.get(MODELS_CONFIG) or (),
                                                         provider(app)), app)


def store() -> ModelStore:
    """The app's ModelStore."""
    return _models(current_app)


def _document() -> tuple[str, GraphDocument]:
    model_id = _param("model")
    try:
        return model_id, store().document(model_id)
    except KeyError:
        raise ApiError(404, "unknown model") from None
    except ModelError as err:
        raise ApiError(422, str(err)) from None


def _param(name: str) -> str:
    body = _body()
    if name in body:
        value = body[name]
        if not isinstance(value, str) or not value:
            raise ApiError(400, f"parameter {name} must be a non-empty string")
        return value
    return arg_str(name)


def _body() -> dict[str, Any]:
    if request.method != "POST" or not request.is_json:
        return {}
    body = json_body()
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return body


def _flag(name: str, default: bool = False) -> bool:
    body = _body()
    raw = body.get(name, request.args.get(name))
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool):
        return raw
    if str(raw).lower() in ("1", "true", "yes", "on"):
        return True
    if str(raw).lower() in ("0", "false", "no", "off"):
        return False
    raise ApiError(400, f"parameter {name} must be 0 or 1")


def _options() -> Options:
    body = _body()
    direction = str(body.get("direction", request.args.get("direction", "TB")) or "TB").upper()
    if direction not in ("TB", "LR"):
        raise ApiError(400, "parameter direction must be TB or LR")
    from visualdl.kinds.graph.measure import Options

    return Options(direction=direction, attrs=_flag("attrs"), inits=_flag("inits"))


def _expanded_spec() -> str | list[str]:
    body = _body()
    if "expanded" in body:
        spec = body["expanded"]
    elif "expand" in request.args:
        spec = request.args["expand"]
    else:
        spec = request.args.getlist("expanded") or "initial"
    if isinstance(spec, str):
        if spec not in ("initial", "all", "none"):
            raise ApiError(400, "expanded must be initial, all, none or a list of groups")
        return spec
    if not isinstance(spec, list) or not all(isinstance(p, str) for p in spec):
        raise ApiError(400, "expanded must be a list of group paths")
    if len(spec) > MAX_EXPANDED:
        raise ApiError(400, "too many expanded groups")
    return spec


# -- routes ---------------------------------------------------------------------------------
@blueprint.get("/api/graph/models")
def models() -> Response:
    """Every model that can be opened (files, logged graphs, uploads)."""
    st = store()
    body = {"models": [s.public() for s in st.sources()], "has_files": st.has_files}
    response = json_response(body)
    response.headers["Cache-Control"] = "no-store"
    return response


@blueprint.post(UPLOAD_PATH)
def upload() -> Response:
    """Accept an .onnx file (multipart field ``file``, or the raw body with ``?name=``).

    Any other content type is the raw body too: ``curl --data-binary @m.onnx`` labels it a
    url-encoded form, and parsing it as one would leave nothing to read."""
    request.max_content_length = MAX_UPLOAD_BYTES
    if request.mimetype == "multipart/form-data":
        field = request.files.get("file")
        if field is None:
            raise ApiError(400, "the upload needs a form field named 'file'")
        raw, name = field.read(), field.filename or "upload.onnx"
    else:
        raw, name = request.get_data(cache=False), request.args.get("name", "upload.onnx")
    if not raw:
        raise ApiError(400, "the uploaded file is empty, not an ONNX model")
    try:
        src = store().add_upload(name, raw)
    except ModelError as err:
        raise ApiError(400, str(err)) from None
    doc = store().document(src.id)
    return json_response({"model": src.public(), "summary": doc.summary()}, status=201)


@blueprint.get("/api/graph/summary")
def summary() -> Response:
    """Metadata, counts, inputs/outputs, op histogram and the initial collapse state."""
    model_id, doc = _document()
    return etag_json(etag_for("graph-summary", model_id), lambda: {
        "model": model_id, **doc.summary(), "parse_seconds": round(doc.parse_seconds, 4)})


@blueprint.get("/api/graph/hierarchy")
def hierarchy() -> Response:
    """The group tree."""
    model_id, doc = _document()
    return etag_json(etag_for("graph-hierarchy", model_id), doc.hierarchy_tree)


@blueprint.route("/api/graph/view", methods=["GET", "POST"])
def view() -> Response:
    """The visible graph with coordinates for a collapse state and display options.

    With ``background=1`` a big state is laid out by a background job: until it is done
    the answer is a 202 ``{"pending": true, "progress": {...}}`` (ask again, the same way,
    to follow it); small states are answered at once either way."""
    model_id, doc = _document()
    spec = _expanded_spec()
    expanded = doc.expanded_set(spec)
    options = _options()
    # a keyword names its state (hashing the 40,000 paths of "all" slowed every poll)
    etag = etag_for("graph-view", model_id, spec if isinstance(spec, str) else sorted(expanded),
                    options)
    if not _flag("background"):
        return etag_json(etag, lambda: view_body(model_id, doc.view(expanded, options)))
    unchanged = not_modified(etag)
    if unchanged is not None:
        return unchanged
    try:
        body = view_body(model_id, doc.view_or_progress(expanded, options))
    except ModelError as err:
        raise ApiError(422, str(err)) from None
    if body.get("pending"):
        response = json_response(body, status=202)
        response.headers["Cache-Control"] = "no-store"
        return response
    from visualdl.kinds.graph.jobs import release_later  # loaded by _document()

    response = cached_json(body, etag)
    release_later([body[key] for key in ("nodes", "frames", "edges") if key in body])
    return response


def view_body(model_id: str, view: dict[str, Any]) -> dict[str, Any]:
    """A view as answered (bench/graph.py encodes it the same way): its boxes, frames and
    edges are built of plain values by visible_graph (coordinates rounded from the layout),
    so the encoder need not walk them."""
    body = {"model": model_id, **view}
    for key in ("nodes", "frames", "edges"):
        if key in body:
            body[key] = plain_list(body[key])
    return body


@blueprint.get("/api/graph/node")
def node() -> Response:
    """Details of one node (``id=n12``) or group (``id=g:<path>``)."""
    model_id, doc = _document()
    item = arg_str("id")
    if item.startswith("g:"):
        path = item[2:]
        if path not in doc.hierarchy.groups or not path:
            raise ApiError(404, "unknown group")
        build = partial(doc.group, path)
    else:
        from visualdl.kinds.graph.document import parse_node_id  # loaded by _document()

        nid = parse_node_id(item)
        if nid is None or nid >= len(doc.model.nodes):
            raise ApiError(404, "unknown node")
        build = partial(doc.node, nid)
    return etag_json(etag_for("graph-node", model_id, item), build)


@blueprint.get("/api/graph/search")
def search() -> Response:
    """Nodes matching ``q`` by name, op type or tensor name: ``total`` of them, and the
    ``limit`` from ``offset`` on (the find box steps through every match a page at a time)."""
    model_id, doc = _document()
    query = request.args.get("q", "")
    if len(query) > 500:
        raise ApiError(400, "the search text is too long")
    limit = arg_int("limit", 200, 1, 5000)
    offset = arg_int("offset", 0, 0, 1 << 40)

    def build() -> dict[str, Any]:
        body = doc.search(query, limit)
        if offset == 0 and body["total"] <= limit:
            return body  # every match, in its order
        # pages of one order: the matches of the whole model, ranked (GraphDocument.search
        # ranks the first `limit` it finds), kept for the next page's ask
        ranked = _ranked_matches(model_id, doc, query, body["total"])
        return {**body, "offset": offset, "matches": ranked[offset:offset + limit]}

    return etag_json(etag_for("graph-search", model_id, query, limit, offset), build)


SEARCH_CACHE = 4  # searches kept whole, for the pages after the first


def _ranked_matches(model_id: str, doc: GraphDocument, query: str, total: int) -> list[dict[str, Any]]:
    cache = app_cache("graph searches", lambda: _DocCache(SEARCH_CACHE))
    return cache.get((model_id, query), (doc,),
                     lambda: doc.search(query, max(total, 1))["matches"])


@blueprint.get("/api/graph/tensor")
def tensor() -> Response:
    """An initializer: summary, statistics and its first values (``limit``, default 64)."""
    model_id, doc = _document()
    name = arg_str("name")
    limit = arg_int("limit", 64, 0, 4096)

    def build() -> dict[str, Any]:
        try:
            return doc.tensor(name, 0, limit)
        except KeyError:
            raise ApiError(404, "unknown initializer") from None
        except ValueError as err:  # external data missing or outside the model folder
            raise ApiError(422, str(err)) from None

    return etag_json(etag_for("graph-tensor", model_id, name, limit), build)


@blueprint.get("/api/graph/values")
def values() -> Response:
    """A value per node to colour and rank by (``by=params|flops|activations|profile``),
    with per-group sums, the unit and the nodes without a value (see values_api)."""
    model_id, doc = _document()
    from visualdl.kinds.graph.values_api import ValuesCache, values_body, values_key

    key = values_key(model_id)

    def build() -> dict[str, Any]:
        cache = app_cache("graph values", ValuesCache)
        body = cache.get(key, doc)
        if body is None:
            body = values_body(model_id, doc, store().source(model_id))
            cache.put(key, doc, body)
        return body

    return etag_json(etag_for("graph-values", *key), build)


def _diff_side(prefix: str) -> tuple[str, GraphDocument]:
    """The model named by ``<prefix>model`` (an id) or ``<prefix>run``/``tag``/``step``
    (a logged graph; the latest step when none is given). Unknown: a 404 naming what;
    neither given: a 400 naming ``model``/``other``, the parameter a user leaves out."""
    model_key = "other" if prefix else "model"
    if request.args.get(model_key):
        model_id = request.args[model_key]
        if store().source(model_id) is None:
            raise ApiError(404, f"unknown model ({model_key}={model_id})")
    elif not request.args.get(f"{prefix}run") and not request.args.get(f"{prefix}tag"):
        raise ApiError(400, f"missing parameter: {model_key} (a model id, or "
                            f"{prefix}run and {prefix}tag of a logged graph)")
    else:
        model_id = _logged_id(prefix)
    try:
        return model_id, store().document(model_id)
    except KeyError:
        raise ApiError(404, f"unknown model ({model_key}={model_id})") from None
    except ModelError as err:
        raise ApiError(422, f"{model_key}: {err}") from None


def _logged_id(prefix: str) -> str:
    run, tag = arg_str(f"{prefix}run"), arg_str(f"{prefix}tag")
    step_arg = request.args.get(f"{prefix}step", "")
    step = arg_int(f"{prefix}step", 0, -(2**63), 2**63 - 1) if step_arg else None
    found = [s for s in store().sources()
             if s.origin == "log" and s.run == run and s.tag == tag
             and (step is None or s.step == step)]
    if not found:
        where = f"{prefix}run={run}, {prefix}tag={tag}" + (f", {prefix}step={step}"
                                                             if step is not None else "")
        raise ApiError(404, f"no logged graph for {where}")
    return max(found, key=lambda s: s.step or 0).id


@blueprint.get("/api/graph/diff")
def diff() -> Response:
    """The diff of two models (``model``/``other`` ids, or ``run``/``tag``/``step`` and
    ``other_run``/``other_tag``/``other_step``); ``download=1`` answers it as a file."""
    a_id, a_doc = _diff_side("")
    b_id, b_doc = _diff_side("other_")
    download = _flag("download")

    def build() -> dict[str, Any]:
        names = {s.id: s.name for s in store().sources() if s.id in (a_id, b_id)}
        return {"before": {"model": a_id, "name": names.get(a_id, a_id)},
                "after": {"model": b_id, "name": names.get(b_id, b_id)},
                **_diff_of(a_id, a_doc, b_id, b_doc)}

    response = etag_json(etag_for("graph-diff", a_id, b_id), build)
    if download:
        response.headers["Content-Disposition"] = 'attachment; filename="graph-diff.json"'
    return response


class _DocCache:
    """The last ``size`` results of some work on parsed documents (a diff, a search's
    ranked matches), each valid while those documents are the store's (a model read again
    is a new document)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple, tuple[tuple, Any]] = OrderedDict()

    def get(self, key: tuple, docs: tuple, make: Callable[[], Any]) -> Any:
        with self.lock:
            hit = self.items.get(key)
            if hit is not None and all(a is b for a, b in zip(hit[0], docs)):
                self.items.move_to_end(key)
                return hit[1]
        value = make()
        with self.lock:
            self.items[key] = (docs, value)
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return value


def _diff_of(a_id: str, a_doc: GraphDocument, b_id: str, b_doc: GraphDocument) -> dict[str, Any]:
    from visualdl.kinds.graph.diff import diff_models

    cache = app_cache("graph diffs", lambda: _DocCache(DIFF_CACHE))
    return cache.get((a_id, b_id), (a_doc, b_doc), lambda: diff_models(a_doc.model, b_doc.model))
