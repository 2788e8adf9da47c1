"""Serving the app under a path prefix (``visualdl --path-prefix /some/prefix``).

Behind a reverse proxy that forwards ``/some/prefix/...`` unchanged (nginx, a Jupyter
server proxy's ``/proxy/absolute/PORT/``), the app must answer there and only there. The
routes themselves never change: a WSGI middleware moves the prefix from ``PATH_INFO`` to
``SCRIPT_NAME`` (where Flask expects a mount point) and sends what lies outside it into it.
The browser app uses relative URLs only, so it needs no word of the prefix; the one rule it
relies on is that the page is served at a path ending in "/", hence the redirect of
``/some/prefix`` to ``/some/prefix/``.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable
from urllib.parse import quote

__all__ = ["PrefixMiddleware", "normalize_prefix"]

# Plain path segments only: what WSGI hands over in PATH_INFO is already percent-decoded,
# so a prefix holding "%" or non-ASCII characters could never be compared reliably.
_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")
# PATH_INFO is decoded (as latin-1); a Location must be encoded again, "/" and the
# sub-delimiters kept as they are.
_SAFE = "/!$&'()*+,;=:@~"


def normalize_prefix(text: str | None) -> str:
    """``"/a/b"`` for ``"a/b"``, ``"/a/b/"`` or ``"/a/b"``; ``""`` for no prefix (``""`` or
    ``"/"``). Raises ValueError naming the problem for anything else."""
    if text is None:
        return ""
    segments = text.strip("/").split("/")
    if segments == [""]:
        return ""
    for segment in segments:
        if not _SEGMENT.fullmatch(segment) or segment in (".", ".."):
            raise ValueError(
                f"path prefix must be a URL path such as /visualdl (letters, digits and "
                f"'-', '_', '.', '~' between single slashes), got {text!r}")
    return "/" + "/".join(segments)


StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict, StartResponse], Iterable[bytes]]


class PrefixMiddleware:
    """Mount ``app`` (a WSGI callable) at ``prefix`` (normalized, non-empty).

    * ``PREFIX/rest`` reaches the app as ``/rest`` with ``SCRIPT_NAME`` ending in PREFIX;
    * ``PREFIX`` itself is redirected to ``PREFIX/`` with a *relative* Location (its last
      segment plus "/"), which stays right whatever proxy put a further prefix in front;
    * any other path is redirected into the prefix (``/api/info`` to ``PREFIX/api/info``):
      the bare address someone typed, a bookmark or script from before the prefix. A proxy
      that forwards only the prefix never sends such a request, so the Location may be
      absolute.
    """

    def __init__(self, app: WsgiApp, prefix: str) -> None:
        if not prefix:
            raise ValueError("PrefixMiddleware needs a non-empty prefix")
        self.app = app
        self.prefix = prefix

    def __call__(self, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        prefix = self.prefix
        if path.startswith(prefix + "/"):
            environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "").rstrip("/") + prefix
            environ["PATH_INFO"] = path[len(prefix):]
            return self.app(environ, start_response)
        query = environ.get("QUERY_STRING")
        suffix = f"?{query}" if query else ""
        if path == prefix:
            return _redirect(start_response, prefix.rsplit("/", 1)[1] + "/" + suffix)
        script = environ.get("SCRIPT_NAME", "").rstrip("/")
        target = (script + prefix + path).encode("latin-1", "replace")
        return _redirect(start_response, quote(target, safe=_SAFE) + suffix)


def _redirect(start_response: StartResponse, location: str) -> list[bytes]:
    # 307: temporary (the same port may serve another prefix tomorrow) and method-keeping.
    start_response("307 Temporary Redirect", [
        ("Location", location), ("Content-Length", "0"), ("Cache-Control", "no-store"),
    ])
    return [b""]
