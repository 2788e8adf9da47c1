"""Connection hygiene for waitress: slow clients cannot hold connections, and a body
declared too large is refused before it is read.

waitress reads every request completely on its event loop before a worker thread sees it,
and counts a connection as active whenever a byte arrived recently. So a client sending
one header byte per second holds a connection forever, and about a hundred of them (the
default connection limit) locked everyone else out. And a request that declared a 1 GB body
was read to its end before Flask could refuse it.

:func:`harden` gives the server's listening dispatchers a channel class that

* closes a connection whose request headers have not all arrived ``HEADER_TIMEOUT`` seconds
  after its first byte, or whose body arrives slower than ``MIN_BODY_RATE`` bytes per
  second on average (after ``HEADER_TIMEOUT`` of grace), however steadily bytes trickle in;
* answers 413 (in the API's JSON error format) as soon as the headers declare a
  ``Content-Length`` above the limit of the request's path, and closes the connection.

The limits come from the Flask app: ``MAX_CONTENT_LENGTH``, and ``BODY_LIMITS_CONFIG`` (in
:mod:`visualdl.api.common`), a mapping of path to a larger limit that a route
needing one (the graph upload) registers.
"""

from __future__ import annotations

import json
import time
from typing import Any, Mapping

from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import BaseWSGIServer
from waitress.utilities import RequestEntityTooLarge

from visualdl.api.common import BODY_LIMITS_CONFIG

__all__ = ["BODY_LIMITS_CONFIG", "HEADER_TIMEOUT", "MIN_BODY_RATE", "body_limits", "harden"]

#: Seconds a client has to send a request's headers (a browser needs milliseconds).
HEADER_TIMEOUT = 10.0
#: Bytes per second a request body must average once HEADER_TIMEOUT has passed.
MIN_BODY_RATE = 50_000


class _BodyTooLarge(RequestEntityTooLarge):
    """waitress's 413, in the API's error format (``{"error": ...}``)."""

    def to_response(self, ident: str | None = None) -> tuple[str, list, bytes]:
        body = json.dumps({"error": self.body}).encode("utf-8")
        return ("413 Content Too Large",
                [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body)


def body_limits(app: Any) -> tuple[int, dict[str, int]]:
    """``(default limit, {path: limit})`` of ``app`` (a Flask app)."""
    default = int(app.config.get("MAX_CONTENT_LENGTH") or 0)
    by_path: Mapping[str, int] = app.config.get(BODY_LIMITS_CONFIG) or {}
    return default, {path: int(limit) for path, limit in by_path.items()}


def _parser_class(default: int, by_path: dict[str, int]) -> type:
    class Parser(HTTPRequestParser):
        def received(self, data: bytes) -> int:
            had_headers = self.headers_finished
            consumed = super().received(data)
            if self.headers_finished and not had_headers and (
                    self.error is None or isinstance(self.error, RequestEntityTooLarge)):
                limit = by_path.get(self.path, default)
                if limit and self.content_length > limit:  # also replaces waitress's text 413
                    self.error = _BodyTooLarge(
                        f"the request body declares {self.content_length} bytes; "
                        f"at most {limit} are accepted here")
                    self.completed = True
            return consumed

    return Parser


def _channel_class(default: int, by_path: dict[str, int]) -> type:
    class Channel(HTTPChannel):
        parser_class = _parser_class(default, by_path)
        _started: float | None = None  # when the request being read sent its first byte

        def received(self, data: bytes) -> bool:
            result = super().received(data)
            if self.request is None:
                self._started = None
            elif self._started is None:
                self._started = time.monotonic()
            return result

        def readable(self) -> bool:
            if self._started is not None and not self.requests and self._overdue():
                self.will_close = True  # handle_write (writable is now True) closes it
                return False
            return super().readable()

        def _overdue(self) -> bool:
            request = self.request
            if request is None:
                return False
            waited = time.monotonic() - (self._started or 0.0)
            if not request.headers_finished:
                return waited > HEADER_TIMEOUT
            return waited > HEADER_TIMEOUT + request.body_bytes_received / MIN_BODY_RATE

    return Channel


def harden(server_map: Mapping[Any, Any], app: Any) -> None:
    """Give every listening dispatcher in ``server_map`` (waitress's socket map) the hardened
    channel class for ``app``'s body limits."""
    default, by_path = body_limits(app)
    channel = _channel_class(default, by_path)
    for dispatcher in list(server_map.values()):
        if isinstance(dispatcher, BaseWSGIServer):
            dispatcher.channel_class = channel
