"""The one place that decides what an error looks like on the wire.

Every failure, whether a bad query, an unknown run or a bug, leaves the server as
``{"error": "<message>"}`` with a 4xx/5xx status, so the browser code needs exactly one
error path and the server never answers with an HTML traceback page.
"""

from __future__ import annotations

import logging

from flask import Flask, Response
from werkzeug.exceptions import HTTPException

from visualdl.api.jsonio import json_response

__all__ = ["ApiError", "RETRY_AFTER", "busy", "error_response", "register_error_handlers"]

_log = logging.getLogger(__name__)


class ApiError(Exception):
    """Raised by API handlers for a request that cannot be answered (bad input, not found)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})  # e.g. Retry-After on a 503


#: Seconds a client waits before asking again after a 503 (``busy``).
RETRY_AFTER = 2


def busy(reason: str, retry_after: int = RETRY_AFTER) -> ApiError:
    """A 503 with ``Retry-After``: work a request started is still going on (a trace being
    parsed, a projection being prepared) and the same request, asked again, finds it. The
    browser's ``getJSONWhenReady`` (web/js/shared/api.js) waits and asks again."""
    return ApiError(503, f"{reason}; try again in a few seconds",
                    headers={"Retry-After": str(retry_after)})


def error_response(status: int, message: str) -> Response:
    """Build the JSON error response; the single definition of the error format."""
    response = json_response({"error": message}, status=status)
    response.headers["Cache-Control"] = "no-store"
    return response


def register_error_handlers(app: Flask) -> None:
    """Turn every exception raised while handling a request into a JSON error."""

    @app.errorhandler(ApiError)
    def _api_error(err: ApiError) -> Response:
        response = error_response(err.status, err.message)
        response.headers.update(err.headers)
        return response

    @app.errorhandler(HTTPException)
    def _http_error(err: HTTPException) -> Response:
        response = error_response(err.code or 500, err.description or err.name)
        if err.code == 405 and err.response is None:
            allowed = getattr(err, "valid_methods", None)
            if allowed:
                response.headers["Allow"] = ", ".join(allowed)
        return response

    @app.errorhandler(Exception)
    def _unexpected(err: Exception) -> Response:
        _log.exception("unhandled error while serving a request")
        return error_response(500, f"internal error: {type(err).__name__}")
