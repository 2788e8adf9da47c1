"""The Flask app factory: wires the data provider, the API blueprints and the web app.

``path_prefix`` mounts it all under a URL path (:mod:`visualdl.server.prefix`).
The API is ``api_core`` (info, runs, tags, kinds, reload) plus one blueprint per kind, taken
from the registry of kinds (:mod:`visualdl.kinds.registry`): a new kind brings its own
blueprint and no line here changes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from flask import Flask, Response, current_app

from visualdl.kinds import registry
from visualdl.api import common as api_common
from visualdl.server import api_core, export_html, static
from visualdl.api.common import BODY_LIMITS_CONFIG, MODELS_CONFIG
from visualdl.server.compression import install_compression
from visualdl.api.errors import register_error_handlers
from visualdl.server.prefix import PrefixMiddleware, normalize_prefix
from visualdl.server.provider import DataProvider

__all__ = ["create_app", "EMBEDDING_CONFIG", "MODELS_CONFIG"]

# 'unsafe-eval': plotly.js's WebGL traces (parcoords, splom, scattergl) are drawn by regl,
# which compiles its draw calls with new Function(); without it they show "WebGL is not
# supported". Scripts still load only from this server, and no inline script runs.
_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; "
    "font-src 'self' data:; object-src 'none'; base-uri 'none'"
)
# Other pages may not show the dashboard in a frame (clickjacking), unless it was started
# to be embedded (``--allow-embedding``: a notebook's output iframe, whose page may live on
# any origin, a VS Code webview's included, which no frame-ancestors source list can name).
_NO_FRAMING = "; frame-ancestors 'none'"
EMBEDDING_CONFIG = "VISUALDL_ALLOW_EMBEDDING"


def create_app(
    logdirs: str | os.PathLike | Sequence[str | os.PathLike] = (),
    reload_interval: float = 5.0,
    *,
    web_dir: str | os.PathLike | None = None,
    start_reload: bool = True,
    models: Sequence[str | os.PathLike] = (),
    data: DataProvider | None = None,
    path_prefix: str = "",
    allow_embedding: bool = False,
) -> Flask:
    """Build the app for ``logdirs``.

    ``start_reload`` starts the provider's background loading at once (the server listens
    before anything is loaded). ``models`` are ONNX files for the graph view (``--model``);
    with models, ``logdirs`` may be empty. ``data`` is a provider already built (the CLI
    builds and starts it before importing Flask, so reading overlaps that import); the app
    then serves it instead of one for ``logdirs``. ``provider(app)`` (in
    :mod:`visualdl.api.common`) returns the app's provider, to stop it or wait for it.

    ``path_prefix`` (such as ``/visualdl``) makes the app answer under that path only, for
    a reverse proxy that forwards it unchanged. ``allow_embedding`` lets pages of other
    origins show the dashboard in an iframe (notebooks); by default it refuses to be framed.
    """
    prefix = normalize_prefix(path_prefix)
    if data is None:
        from visualdl.server.reader_provider import open_provider

        if not logdirs and not models:
            raise ValueError("at least one logdir (or a --model file) is required")
        data = open_provider(logdirs, reload_interval)
    app = Flask(__name__, static_folder=None)
    app.config.update(MAX_CONTENT_LENGTH=16 * 1024 * 1024, JSON_SORT_KEYS=False)
    app.config[MODELS_CONFIG] = [os.fspath(m) for m in models]
    app.config[EMBEDDING_CONFIG] = bool(allow_embedding)
    api_common.install(app, data)
    kinds = registry.all_kinds()
    static.install(app, Path(web_dir) if web_dir is not None else static.find_web_dir(), kinds)
    app.register_blueprint(api_core.blueprint)
    app.register_blueprint(export_html.blueprint)
    for kind in kinds:
        if kind.has("api"):
            app.register_blueprint(kind.part("api").blueprint)
    app.register_blueprint(static.blueprint)
    register_error_handlers(app)
    install_compression(app)
    app.after_request(_security_headers)
    if prefix:
        _mount(app, prefix)
    if start_reload:
        data.start()
    return app


def _mount(app: Flask, prefix: str) -> None:
    """Serve ``app`` under ``prefix``; the per-path body limits (checked by waitress on the
    raw request path, see :mod:`visualdl.server.connections`) follow it there."""
    app.wsgi_app = PrefixMiddleware(app.wsgi_app, prefix)  # type: ignore[method-assign]
    limits = app.config.get(BODY_LIMITS_CONFIG) or {}
    app.config[BODY_LIMITS_CONFIG] = {prefix + path: limit for path, limit in limits.items()}


def _security_headers(response: Response) -> Response:
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    if response.mimetype == "text/html":
        framing = "" if current_app.config.get(EMBEDDING_CONFIG) else _NO_FRAMING
        response.headers.setdefault("Content-Security-Policy", _CSP + framing)
    return response
