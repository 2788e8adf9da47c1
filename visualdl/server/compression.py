"""Gzip for responses, in one ``after_request`` hook.

flask-compress is not a dependency; the stdlib's zlib does the work and this hook is the only
place that knows about Content-Encoding. Static files are compressed once and cached by
:mod:`visualdl.server.static`, which marks its responses as already encoded, so the plotly
bundle (megabytes) is not re-compressed per request.
"""

from __future__ import annotations

import gzip
import os
import struct
import threading
import zlib

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


# Bodies from this size are compressed in slices on several threads (zlib lets go of the
# interpreter while it works), as pigz does.
_SLICED = 8 << 20
_WINDOW = 1 << 15  # deflate's window: each slice is primed with the 32 KB before it


def gzip_bytes(data: bytes, level: int = _LEVEL) -> bytes:
    """Gzip with a fixed mtime so identical inputs give identical bytes (stable ETags)."""
    if len(data) >= _SLICED and (os.cpu_count() or 1) > 1:
        return _gzip_sliced(data, level, min(os.cpu_count() or 1, 4))
    return gzip.compress(data, compresslevel=level, mtime=0)


def _gzip_sliced(data: bytes, level: int, slices: int) -> bytes:
    """One gzip member whose deflate stream is the slices' streams end to end: each but
    the last ends on a byte boundary (a sync flush), each starts with the previous 32 KB as
    its dictionary, so the output is what one stream would be, about as small, made on
    ``slices`` cores at once (the view of a 100,000-node graph, 47 MB: 0.45 s on one)."""
    view = memoryview(data)
    size = -(-len(data) // slices)
    bounds = [(i, min(i + size, len(data))) for i in range(0, len(data), size)]
    parts: list[bytes] = [b""] * len(bounds)

    def deflate(k: int) -> None:
        start, end = bounds[k]
        prior = {"zdict": view[max(0, start - _WINDOW):start]} if start else {}
        c = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS, **prior)
        last = k == len(bounds) - 1
        parts[k] = c.compress(view[start:end]) + c.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)

    threads = [threading.Thread(target=deflate, args=(k,)) for k in range(1, len(bounds))]
    for t in threads:
        t.start()
    deflate(0)
    crc = zlib.crc32(view)
    for t in threads:
        t.join()
    xfl = 4 if level == 1 else 2 if level == 9 else 0  # as gzip.compress writes it
    header = struct.pack("<BBBBIBB", 0x1F, 0x8B, 8, 0, 0, xfl, 255)
    return b"".join([header, *parts, struct.pack("<II", crc, len(data) & 0xFFFFFFFF)])


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
