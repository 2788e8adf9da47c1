"""Helpers shared by every API module: parameters, lookups, caching headers.

Handlers reach stored data only through the app's data provider (``provider()``, a
:class:`~visualdl.server.provider.DataProvider`), and keep whatever they cache in the app
(``app_cache()``), never in module globals: two apps in one process share nothing.

Runs and tags are only ever looked up in the provider's index (never joined into a path),
so a name like ``../../etc/passwd`` is just an unknown key or an ordinary tag.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Callable, TypeVar

from flask import Flask, Response, current_app, g, request

from visualdl.api.errors import ApiError
from visualdl.api.jsonio import json_response

__all__ = [
    "provider",
    "app_cache",
    "install",
    "arg_str",
    "arg_int",
    "arg_float",
    "arg_choice",
    "json_body",
    "require_run",
    "require_tag",
    "read_tag",
    "read_events",
    "run_tag_json",
    "cached_json",
    "not_modified",
    "etag_for",
    "etag_json",
]

MODELS_CONFIG = "VISUALDL_MODELS"  # create_app puts the --model paths here
# {path: max body bytes} for routes that accept more than MAX_CONTENT_LENGTH; the server
# refuses a larger declared body before reading it (visualdl.server.connections).
BODY_LIMITS_CONFIG = "VISUALDL_BODY_LIMITS"
_PROVIDER_KEY = "visualdl.provider"
_CACHES_KEY = "visualdl.caches"

T = TypeVar("T")


def install(app: Flask, data: Any) -> None:
    """Give ``app`` its data provider and an empty set of caches (``create_app`` calls it)."""
    app.extensions[_PROVIDER_KEY] = data
    app.extensions[_CACHES_KEY] = {}


def provider(app: Flask | None = None) -> Any:
    """The data provider of ``app`` (the current app by default): a
    :class:`visualdl.server.provider.DataProvider`, the seam every route reads data through
    (not imported here: the server, which defines it, builds on these helpers)."""
    return (app or current_app).extensions[_PROVIDER_KEY]


def app_cache(name: str, make: Callable[[], T], app: Flask | None = None) -> T:
    """What the app (the current one by default) keeps under ``name``: a cache, a store;
    made by ``make()`` on first use."""
    caches = (app or current_app).extensions[_CACHES_KEY]
    cache = caches.get(name)
    if cache is None:
        cache = caches.setdefault(name, make())
    return cache


def arg_str(name: str, source: Any = None) -> str:
    """A required, non-empty string parameter (query string by default)."""
    args = request.args if source is None else source
    value = args.get(name)
    if value is None or value == "":
        raise ApiError(400, f"missing parameter: {name}")
    if not isinstance(value, str):
        raise ApiError(400, f"parameter {name} must be a string")
    return value


def arg_int(name: str, default: int, low: int, high: int, source: Any = None) -> int:
    """An optional integer parameter, clamped to nothing: out of range is a 400."""
    args = request.args if source is None else source
    raw = args.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError, OverflowError):
        raise ApiError(400, f"parameter {name} must be an integer") from None
    if isinstance(raw, bool) or not low <= value <= high:
        raise ApiError(400, f"parameter {name} must be between {low} and {high}")
    return value


def arg_float(name: str, source: Any = None, unit: str = "") -> float | None:
    """An optional finite number (a query string's text or a JSON number); None when
    absent. ``unit`` (such as "microseconds") is named in the error."""
    args = request.args if source is None else source
    raw = args.get(name)
    if raw is None or raw == "":
        return None
    hint = f" ({unit})" if unit else ""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise ApiError(400, f"parameter {name} must be a number{hint}")
    try:
        value = float(raw)
    except (ValueError, OverflowError):
        raise ApiError(400, f"parameter {name} must be a number{hint}") from None
    if not math.isfinite(value):
        raise ApiError(400, f"parameter {name} must be a finite number")
    return value


def json_body() -> Any:
    """The request's JSON body, parsed once per request; None when it is not sent as JSON.

    The one way routes read a body: anything the client can send (nesting deep enough to
    exhaust the parser's stack, a number like ``1e400`` that overflows to infinity, NaN,
    bytes that are not UTF-8 or not JSON) is a 400 that says so, never a 500.
    """
    if "visualdl_json_body" in g:
        return g.visualdl_json_body
    body = None
    if request.is_json:
        raw = request.get_data(cache=True)
        try:
            body = json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
        except RecursionError:
            raise ApiError(400, "the JSON body is nested too deeply") from None
        except ApiError:
            raise
        except ValueError as err:  # JSONDecodeError, UnicodeDecodeError
            raise ApiError(400, f"the body is not valid JSON: {err}") from None
    g.visualdl_json_body = body
    return body


def _no_constant(name: str) -> float:
    raise ApiError(400, f"the JSON body holds {name}, which is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ApiError(400, f"the number {text[:40]} in the JSON body is out of range")
    return value


def arg_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """An optional parameter restricted to a fixed set of values."""
    value = request.args.get(name) or default
    if value not in choices:
        raise ApiError(400, f"parameter {name} must be one of: {', '.join(choices)}")
    return value


def require_run(run: str) -> str:
    """404 unless ``run`` is a loaded run.

    Asked through ``tags`` (a dict lookup), not ``run in runs()``: ``runs()`` sorts
    every run name, and a batch of 2,000 series asked it 2,000 times."""
    try:
        provider().tags(run)
    except KeyError:
        raise ApiError(404, "unknown run") from None
    return run


def require_tag(run: str, kind: str, tag: str) -> str:
    """404 unless ``run`` has ``tag`` of ``kind``."""
    try:
        tags = provider().tags(run)
    except KeyError:
        raise ApiError(404, "unknown run") from None
    if tag not in tags.get(kind, ()):
        raise ApiError(404, f"unknown {kind} tag for this run")
    return tag


def read_tag(run: str, kind: str, tag: str, read: Callable[[str, str], T]) -> T:
    """``read(run, tag)`` for a tag of ``kind``; 404 for an unknown run or tag, also when
    the run or tag vanished between the check and the read."""
    require_tag(run, kind, tag)
    try:
        return read(run, tag)
    except KeyError:
        raise ApiError(404, f"unknown {kind} tag for this run") from None


def read_events(run: str, kind: str, tag: str) -> list:
    """Every event of one tag of ``kind`` (404 for an unknown run or tag)."""
    return read_tag(run, kind, tag, lambda r, t: provider().events(r, kind, t))


def run_tag_json(name: str, build: Callable[[str, str], Any]) -> Response:
    """The ``?run=&tag=`` route shape: a 304 when the client holds this data version's
    answer, else ``build(run, tag)`` as cacheable JSON."""
    run, tag = arg_str("run"), arg_str("tag")
    return etag_json(etag_for(name, provider().version, run, tag), lambda: build(run, tag))


def etag_json(etag: str, build: Callable[[], Any]) -> Response:
    """A 304 when the client already holds ``etag``, else ``build()`` as cacheable JSON
    (built only then)."""
    return not_modified(etag) or cached_json(build(), etag)


def etag_for(*parts: object) -> str:
    """A short opaque ETag from the data version and whatever identifies the response."""
    digest = hashlib.blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=12)
    return digest.hexdigest()


def not_modified(etag: str) -> Response | None:
    """A 304 when the client already holds ``etag``; None otherwise."""
    if request.if_none_match.contains_weak(etag):
        response = Response(status=304)
        _cache_headers(response, etag)
        return response
    return None


def cached_json(obj: Any, etag: str) -> Response:
    """A JSON response the browser may keep but must revalidate (cheap 304s on refresh)."""
    response = json_response(obj)
    _cache_headers(response, etag)
    return response


def _cache_headers(response: Response, etag: str) -> None:
    response.set_etag(etag, weak=True)
    response.headers["Cache-Control"] = "no-cache"
