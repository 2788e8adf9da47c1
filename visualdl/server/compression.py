"""Gzip for responses, in one ``after_request`` hook.

flask-compress is not a dependency; the stdlib's zlib does the work and this hook is the only
place that knows about Content-Encoding. Static files are compressed once and cached by
:mod:`visualdl.server.static`, which marks its responses as already encoded, so the plotly
bundle (megabytes) is not re-compressed per request.
"""

from __future__ import annotations

import gzip

from flask import Flask, Request, Response, request

__all__ = ["accepts_gzip", "gzip_bytes", "install_compression", "MIN_SIZE"]

#: Below this, gzip's header overhead outweighs the saving.
MIN_SIZE = 512
_LEVEL = 5  # a size/CPU trade-off for JSON: higher levels cost much more time for little gain
# Big answers (a chart of 2,000 runs is tens of MB of JSON) get level 1: several times
# faster than level 5, for output only slightly larger.
_BIG = 1 << 20
_BIG_LEVEL = 1


def accepts_gzip(req: Request) -> bool:
    """True when the client lists gzip with a non-zero quality."""
    return req.accept_encodings.quality("gzip") > 0


def gzip_bytes(data: bytes, level: int = _LEVEL) -> bytes:
    """Gzip with a fixed mtime so identical inputs give identical bytes (stable ETags)."""
    return gzip.compress(data, compresslevel=level, mtime=0)


def _compressible(response: Response) -> bool:
    if response.direct_passthrough or response.is_streamed:
        return False
    if response.status_code < 200 or response.status_code in (204, 304):
        return False
    if "Content-Encoding" in response.headers:
        return False
    mimetype = response.mimetype or ""
    return mimetype.startswith("text/") or mimetype in (
        "application/json",
        "application/javascript",
        "image/svg+xml",
    )


def install_compression(app: Flask) -> None:
    """Gzip every compressible response when the client accepts it."""

    @app.after_request
    def _compress(response: Response) -> Response:
        if not _compressible(response):
            return response
        response.vary.add("Accept-Encoding")
        if not accepts_gzip(request):
            return response
        body = response.get_data()
        if len(body) < MIN_SIZE:
            return response
        response.set_data(gzip_bytes(body, _BIG_LEVEL if len(body) >= _BIG else _LEVEL))
        response.headers["Content-Encoding"] = "gzip"
        return response
