"""A real S3 API on 127.0.0.1 for tests and benchmarks: moto's server, with a request log.

``moto[server]`` (the ``test`` extra) implements S3 over HTTP; this wraps its WSGI app so
that every request is logged with its method, path, query and bytes in and out, as the
S3 bill would count them. Nothing here is used by visualdl itself.

>>> with LocalS3() as s3:           # doctest: +SKIP
...     s3.make_bucket("logs")
...     env = s3.env()                # AWS_ENDPOINT_URL etc. for child processes
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from typing import Any, Iterator

__all__ = ["LocalS3", "S3Request"]


@dataclass(frozen=True)
class S3Request:
    method: str
    path: str
    query: str
    bytes_in: int
    bytes_out: int

    @property
    def is_list(self) -> bool:
        return self.method == "GET" and ("list-type" in self.query or "prefix=" in self.query)

    @property
    def is_get(self) -> bool:
        return self.method == "GET" and not self.is_list

    @property
    def is_put(self) -> bool:
        return self.method in ("PUT", "POST")


class _Counting:
    def __init__(self, app: Any, log: list[S3Request], lock: threading.Lock) -> None:
        self.app, self.log, self.lock = app, log, lock

    def __call__(self, environ: dict, start_response: Any) -> Iterator[bytes]:
        try:
            bytes_in = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            bytes_in = 0
        body = b"".join(self.app(environ, start_response))
        with self.lock:
            self.log.append(S3Request(environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""),
                                      environ.get("QUERY_STRING", ""), bytes_in, len(body)))
        return iter([body])


class LocalS3:
    """moto's S3 server on a free loopback port, in a daemon thread of this process."""

    ACCESS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
              "AWS_DEFAULT_REGION": "us-east-1", "AWS_SESSION_TOKEN": "testing"}

    def __init__(self) -> None:
        self.log: list[S3Request] = []
        self._lock = threading.Lock()
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.endpoint = ""
        self._saved: dict[str, str | None] = {}

    def start(self) -> "LocalS3":
        from moto.moto_server.werkzeug_app import (
            DomainDispatcherApplication, MotoRequestHandler, create_backend_app)
        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
        app = _Counting(DomainDispatcherApplication(create_backend_app), self.log, self._lock)
        self._server = make_server("127.0.0.1", 0, app, threaded=True,
                                   request_handler=MotoRequestHandler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="moto-s3")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def env(self) -> dict[str, str]:
        """The variables a client needs to reach this endpoint."""
        return dict(self.ACCESS, AWS_ENDPOINT_URL=self.endpoint)

    def set_env(self) -> None:
        """Put :meth:`env` into ``os.environ`` (undone by :meth:`restore_env`)."""
        for key, value in self.env().items():
            self._saved.setdefault(key, os.environ.get(key))
            os.environ[key] = value

    def restore_env(self) -> None:
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved.clear()

    def make_bucket(self, name: str) -> None:
        import boto3

        boto3.client("s3", endpoint_url=self.endpoint, **_client_args(self.ACCESS)) \
            .create_bucket(Bucket=name)

    def requests(self) -> list[S3Request]:
        with self._lock:
            return list(self.log)

    def mark(self) -> int:
        """The position in the log now: ``since(mark)`` gives the requests after it."""
        with self._lock:
            return len(self.log)

    def since(self, mark: int) -> list[S3Request]:
        with self._lock:
            return self.log[mark:]

    def __enter__(self) -> "LocalS3":
        self.start()
        self.set_env()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.restore_env()
        self.stop()


def _client_args(access: dict[str, str]) -> dict[str, str]:
    return {"aws_access_key_id": access["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": access["AWS_SECRET_ACCESS_KEY"],
            "region_name": access["AWS_DEFAULT_REGION"]}
