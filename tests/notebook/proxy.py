"""A tiny real reverse proxy on 127.0.0.1, standing in for a Jupyter server with
jupyter-server-proxy: it serves notebook pages, and forwards ``<base>/proxy/PORT/rest`` to
``http://127.0.0.1:PORT/rest`` (the prefix stripped, as jupyter-server-proxy does).

The dashboard behind it lives at a path that is not the root, so any absolute URL the app
uses (``/api/...``, ``/static/...``) would miss it: a dashboard that works through this
proxy uses relative URLs only.
"""

from __future__ import annotations

import http.client
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

__all__ = ["HubProxy"]

_PROXIED = re.compile(r"^(?P<base>.*?)/proxy/(?P<port>\d+)(?P<rest>/.*)?$")
_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
        "trailers", "transfer-encoding", "upgrade", "host", "content-length"}


class HubProxy:
    """``pages`` maps a path to the HTML served there; ``requests`` lists every request's
    path as received (method, path with query)."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {}
        self.requests: list[tuple[str, str]] = []
        self.forwarded: list[tuple[int, str, int]] = []  # (port, path, status)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="hub-proxy",
                                        daemon=True)
        self._thread.start()

    def add_page(self, path: str, body: str) -> str:
        """Serve ``body`` (HTML, e.g. a notebook cell's outputs) as a page at ``path``;
        returns its URL."""
        self.pages[path] = ('<!doctype html><html><head><meta charset="utf-8">'
                            '<link rel="icon" href="data:,"><title>notebook</title></head>'
                            f"<body>{body}</body></html>")
        return self.url + path

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> "HubProxy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _handler(self) -> type:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                self._handle()

            def do_POST(self) -> None:
                self._handle()

            def do_HEAD(self) -> None:
                self._handle()

            def _handle(self) -> None:
                proxy.requests.append((self.command, self.path))
                parts = urlsplit(self.path)
                match = _PROXIED.match(parts.path)
                if match:
                    self._forward(int(match["port"]), match["rest"], parts.query)
                elif parts.path in proxy.pages:
                    self._send(200, proxy.pages[parts.path].encode(),
                               [("Content-Type", "text/html; charset=utf-8")])
                else:
                    self._send(404, b"not found", [("Content-Type", "text/plain")])

            def _forward(self, port: int, rest: str | None, query: str) -> None:
                if rest is None:  # /proxy/PORT: the page must end in "/" for relative URLs
                    self._send(301, b"", [("Location", f"{port}/")])
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                target = rest + (f"?{query}" if query else "")
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                try:
                    connection.request(self.command, target, body=body, headers=headers)
                    response = connection.getresponse()
                    data = response.read()
                except OSError as err:
                    self._send(502, f"proxy error: {err}".encode(), [("Content-Type", "text/plain")])
                    return
                finally:
                    connection.close()
                proxy.forwarded.append((port, target, response.status))
                kept = [(k, v) for k, v in response.getheaders() if k.lower() not in _HOP]
                self._send(response.status, data, kept)

            def _send(self, status: int, data: bytes, headers: list[tuple[str, str]]) -> None:
                self.send_response(status)
                for key, value in headers:
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

        return Handler
