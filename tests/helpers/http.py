"""One HTTP client for the tests: requests against one server, base URL filled in."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

import pytest

requests = pytest.importorskip("requests")  # the test extra's; a module that talks HTTP skips

__all__ = ["Client", "client_of", "wait_for"]

T = TypeVar("T")

# Generous: the first embedding projection compiles UMAP, and a 2-core machine running the
# suite may be slow to answer; a hung server still fails the test, only later.
DEFAULT_TIMEOUT = 120.0


class Client:
    """``get``/``post``/``json`` against the server at ``url`` (no trailing slash).

    Query parameters are keyword arguments (``get("/api/scalars", run="a", tag="b")``) or
    a ``params`` mapping, which may repeat a key (``params={"run": ["a", "b"]}``);
    ``headers`` and ``stream`` go to requests.
    """

    def __init__(self, url: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()

    def get(self, path: str, params: dict | None = None, *, headers: dict | None = None,
            stream: bool = False, **query: Any) -> requests.Response:
        return self.session.get(self.url + path, params={**(params or {}), **query},
                                headers=headers, stream=stream, timeout=self.timeout)

    def post(self, path: str, **kw: Any) -> requests.Response:
        """POST with requests' keywords (``json=``, ``data=``, ``files=``, ``headers=``)."""
        kw.setdefault("timeout", self.timeout)
        return self.session.post(self.url + path, **kw)

    def json(self, path: str, params: dict | None = None, **query: Any) -> Any:
        """GET ``path``, assert a 200 and return the decoded body."""
        response = self.get(path, params, **query)
        assert response.status_code == 200, f"{path}: {response.status_code} {response.text}"
        return json.loads(response.text)

    def close(self) -> None:
        self.session.close()


def wait_for(predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.05) -> T:
    """Poll until ``predicate()`` is truthy; returns its value or fails the test."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout} s")
        time.sleep(interval)


@contextmanager
def client_of(logdirs: Any, timeout: float = DEFAULT_TIMEOUT, **serving_options: Any
              ) -> Iterator[Client]:
    """A :class:`Client` of a server on ``logdirs`` (``tests.helpers.server.serving``, with
    its options), closed with it."""
    from tests.helpers.server import serving

    with serving(logdirs, **serving_options) as handle:
        client = Client(handle.url, timeout)
        try:
            yield client
        finally:
            client.close()
