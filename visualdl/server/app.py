"""The Flask app factory: wires the data service, the API modules and the web app.

Dashboards plug in through :data:`API_MODULES`: each module exposes a ``blueprint`` and owns
the routes of one component (``api_scalars`` for scalars, and so on).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from flask import Flask, Response

from visualdl.server import (
    api_audio,
    api_core,
    api_curves,
    api_embeddings,
    api_figures,
    api_graph,
    api_histograms,
    api_hparams,
    api_images,
    api_scalars,
    api_text,
    static,
)
from visualdl.server.api_common import EXTENSION_KEY
from visualdl.server.compression import install_compression
from visualdl.server.data import DataService, open_data_service
from visualdl.server.errors import register_error_handlers

__all__ = ["create_app", "API_MODULES"]

#: One entry per component; a new dashboard adds its API module here.
API_MODULES = (
    api_core,
    api_scalars,
    api_images,
    api_audio,
    api_text,
    api_histograms,
    api_curves,
    api_hparams,
    api_embeddings,
    api_figures,
    api_graph,
)

# 'unsafe-eval': plotly.js's WebGL traces (parcoords, splom, scattergl) are drawn by regl,
# which compiles its draw calls with new Function(); without it they show "WebGL is not
# supported". Scripts still load only from this server, and no inline script runs.
_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; "
    "font-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)


def create_app(
    logdirs: str | os.PathLike | Sequence[str | os.PathLike],
    reload_interval: float = 5.0,
    *,
    web_dir: str | os.PathLike | None = None,
    start_reload: bool = True,
    models: Sequence[str | os.PathLike] = (),
    data: DataService | None = None,
) -> Flask:
    """Build the app for ``logdirs``.

    ``start_reload`` starts the background reload thread at once (the server listens before
    anything is loaded); tests may pass False and call ``app.extensions[...]`` themselves.
    The data service is reachable as ``app.extensions["visualdl.data"]`` so callers can
    ``stop()`` it. ``models`` are ONNX files for the graph view (``--model``); when models
    are given, ``logdirs`` may be empty. ``data`` is a service already built for ``logdirs``
    (it then brings its own reload interval; the CLI builds and starts it before importing
    Flask, so reading overlaps that import).
    """
    if data is None:
        data = open_data_service(logdirs, reload_interval, has_models=bool(models))
    app = Flask(__name__, static_folder=None)
    app.config.update(MAX_CONTENT_LENGTH=16 * 1024 * 1024, JSON_SORT_KEYS=False)
    app.config[api_graph.MODELS_CONFIG] = [os.fspath(m) for m in models]
    app.extensions[EXTENSION_KEY] = data
    app.extensions[static.STATIC_KEY] = static.StaticFiles(
        Path(web_dir) if web_dir is not None else static.find_web_dir()
    )
    for module in API_MODULES:
        app.register_blueprint(module.blueprint)
    app.register_blueprint(static.blueprint)
    register_error_handlers(app)
    install_compression(app)
    app.after_request(_security_headers)
    if start_reload:
        data.start()
    return app


def _security_headers(response: Response) -> Response:
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    if response.mimetype == "text/html":
        response.headers.setdefault("Content-Security-Policy", _CSP)
    return response
