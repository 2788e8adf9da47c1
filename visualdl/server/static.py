"""Serving the browser app (``web/``) and plotly.js from the installed ``plotly`` package.

Files are found by looking the requested path up in an index built by walking the web
folder, never by joining the request into a filesystem path. Each file is read and gzipped
once and kept in memory (keyed by mtime and size, so edits show up on reload): the app is
small, plotly.min.js a few megabytes (far fewer gzipped).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from flask import Blueprint, Flask, Response, request

from visualdl.kinds.spec import Kind
from visualdl.api.common import app_cache
from visualdl.server.compression import accepts_gzip, gzip_bytes
from visualdl.api.errors import ApiError

__all__ = ["blueprint", "find_web_dir", "install", "plotly_js_path", "StaticFiles"]
PLOTLY_URL = "vendor/plotly.min.js"

_MIME = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".woff2": "font/woff2",
}
_COMPRESSIBLE = {".html", ".js", ".mjs", ".css", ".svg", ".json", ".txt"}


def find_web_dir() -> Path:
    """The web app folder: ``visualdl/_web`` in a wheel, ``<repo>/web`` in a checkout."""
    packaged = Path(__file__).resolve().parent.parent / "_web"
    if (packaged / "index.html").is_file():
        return packaged
    try:  # an editable install maps visualdl._web onto web/ without a folder on disk
        mapped = Path(str(resources.files("visualdl._web")))
        if (mapped / "index.html").is_file():
            return mapped
    except (ModuleNotFoundError, TypeError, ValueError):
        pass
    checkout = Path(__file__).resolve().parents[2] / "web"
    if (checkout / "index.html").is_file():
        return checkout
    raise FileNotFoundError(
        "the visualdl web app was not found (looked for visualdl/_web and ./web); "
        "reinstall the package"
    )


def plotly_js_path() -> Path:
    """plotly.min.js as shipped inside the ``plotly`` Python package (works offline).

    Found through the import system without importing plotly (which would cost the
    server's start some milliseconds for a file path).
    """
    spec = importlib.util.find_spec("plotly")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise FileNotFoundError("the plotly package is not installed; it ships plotly.min.js")
    return Path(folders[0]) / "package_data" / "plotly.min.js"


@dataclass(frozen=True)
class _Entry:
    stamp: tuple[int, int]
    raw: bytes
    gz: bytes | None
    etag: str
    mimetype: str


class StaticFiles:
    """An index of servable files and their cached (raw, gzipped) bytes."""

    def __init__(self, web_dir: Path, with_plotly: bool = True) -> None:
        self.web_dir = Path(web_dir)
        self.with_plotly = with_plotly
        self._lock = threading.Lock()
        self._index: dict[str, Path] = {}
        self._cache: dict[str, _Entry] = {}
        self._rescan()

    def _rescan(self) -> None:
        index = {}
        for root, dirs, files in os.walk(self.web_dir):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                if name.startswith(".") or Path(name).suffix not in _MIME:
                    continue
                path = Path(root) / name
                index[path.relative_to(self.web_dir).as_posix()] = path
        if self.with_plotly:
            index[PLOTLY_URL] = plotly_js_path()
        self._index = index

    def get(self, relpath: str) -> _Entry | None:
        """The cached entry for ``relpath``, or None when it is not a servable file."""
        path = self._index.get(relpath)
        if path is None:
            with self._lock:
                self._rescan()  # a file added to web/ while the server runs
                path = self._index.get(relpath)
            if path is None:
                return None
        try:
            st = path.stat()
        except OSError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        entry = self._cache.get(relpath)
        if entry is None or entry.stamp != stamp:
            entry = self._load(path, stamp)
            self._cache[relpath] = entry
        return entry

    @staticmethod
    def _load(path: Path, stamp: tuple[int, int]) -> _Entry:
        raw = path.read_bytes()
        suffix = path.suffix
        gz = gzip_bytes(raw, level=6) if suffix in _COMPRESSIBLE and len(raw) > 512 else None
        etag = hashlib.blake2b(raw, digest_size=12).hexdigest()
        return _Entry(stamp, raw, gz, etag, _MIME[suffix])


blueprint = Blueprint("static", __name__)


def serve(relpath: str, max_age: int = 0, files: StaticFiles | None = None) -> Response:
    """Serve one indexed file (of the web app, or of ``files``) with ETag revalidation and
    pre-compressed gzip."""
    if files is None:
        files = app_cache("web app files", _missing)
    entry = files.get(relpath)
    if entry is None:
        raise ApiError(404, "not found")
    if request.if_none_match.contains(entry.etag):
        response = Response(status=304)
    else:
        use_gz = entry.gz is not None and accepts_gzip(request)
        response = Response(entry.gz if use_gz else entry.raw, mimetype=None)
        response.headers["Content-Type"] = entry.mimetype
        if use_gz:
            response.headers["Content-Encoding"] = "gzip"
    response.set_etag(entry.etag)
    if entry.gz is not None:
        response.vary.add("Accept-Encoding")
    response.headers["Cache-Control"] = f"public, max-age={max_age}" if max_age else "no-cache"
    return response


@blueprint.get("/")
def index() -> Response:
    """The single page of the app; views are chosen client-side from the URL."""
    return serve("index.html")


@blueprint.get("/static/<path:relpath>")
def static_file(relpath: str) -> Response:
    """App modules, CSS and the vendored plotly bundle (long-cached: its URL is versioned)."""
    return serve(relpath, max_age=86400 if relpath == PLOTLY_URL and request.args.get("v") else 0)


@blueprint.get("/kinds/<name>/<path:relpath>")
def kind_file(name: str, relpath: str) -> Response:
    """The web view modules of a plugin kind, from the folder its ``Kind.web_dir`` names."""
    files = app_cache("plugin web files", _missing).get(name)
    if files is None:
        raise ApiError(404, "not found")
    return serve(relpath, files=files)


def install(app: Flask, web_dir: Path, kinds: list[Kind]) -> None:
    """Index the web app and the web folders of the plugin kinds for ``app``."""
    app_cache("web app files", lambda: StaticFiles(web_dir), app)
    app_cache("plugin web files", lambda: {
        kind.name: StaticFiles(Path(kind.web_dir), with_plotly=False)
        for kind in kinds if kind.web_dir is not None
    }, app)


def _missing() -> None:
    raise RuntimeError("static.install() was not called for this app")
