"""Run the server on a background thread of the current process.

For notebooks and scripts that want a dashboard next to their training loop, and for the
test suites, which need a real server on a free loopback port that they can stop by handle.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Sequence

from flask import Flask

from visualdl.api.common import provider
from visualdl.server.app import create_app
from visualdl.server.cli import make_server
from visualdl.server.listen import listen
from visualdl.server.prefix import normalize_prefix

__all__ = ["ServerHandle", "start_server"]


@dataclass
class ServerHandle:
    """A running server: ``url`` to open (the dashboard's address, ending in "/" as the
    ``visualdl`` command prints it), ``stop()`` to shut it down."""

    url: str
    app: Flask
    _server: object = field(repr=False)
    _thread: threading.Thread = field(repr=False)

    def stop(self, timeout: float = 5.0) -> None:
        """Close the listening socket and connections, stop the reload thread."""
        # Closing waitress's sockets from another thread races its select() loop, so the
        # close runs on the loop's own thread through waitress's trigger. The server's own
        # close() would leave keep-alive connections in the loop's map, so every dispatcher
        # is closed; the trigger is only taken out of the map there (the loop then ends) and
        # closed here after the join, so no thread ever writes to a closed pipe.
        from waitress import wasyncore

        server = self._server
        trigger = server.trigger

        def close_on_loop() -> None:
            trigger.del_channel()
            for dispatcher in list(server._map.values()):
                if dispatcher is server:  # its close() would close the trigger too
                    wasyncore.dispatcher.close(server)
                else:
                    dispatcher.close()
            server._map.clear()

        if self._thread.is_alive():
            trigger.pull_trigger(close_on_loop)
            self._thread.join(timeout)
        else:
            close_on_loop()
        trigger.close()
        server.task_dispatcher.shutdown(timeout=timeout)
        provider(self.app).stop(timeout)

    def wait_loaded(self, timeout: float | None = None) -> bool:
        """Block until the first load of the logdirs finished (at once when only models are
        served); False when ``timeout`` seconds passed first."""
        return provider(self.app).wait_loaded(timeout)

    def __enter__(self) -> "ServerHandle":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server(
    logdirs: str | os.PathLike | Sequence[str | os.PathLike] = (),
    host: str = "127.0.0.1",
    port: int = 0,
    reload_interval: float = 5.0,
    *,
    models: Sequence[str | os.PathLike] = (),
    path_prefix: str = "",
    allow_embedding: bool = False,
) -> ServerHandle:
    """Start serving ``logdirs`` on a daemon thread; port 0 picks a free port.

    ``models`` are ONNX files for the graph view (``visualdl --model``); with models and no
    logdirs, only the models are served. ``path_prefix`` and ``allow_embedding`` are the
    CLI's ``--path-prefix`` and ``--allow-embedding``; the handle's ``url`` includes the
    prefix.
    """
    try:
        prefix = normalize_prefix(path_prefix)
    except ValueError as exc:
        raise ValueError(f"path_prefix: {exc}") from None
    app = create_app(logdirs, reload_interval=reload_interval, models=models,
                     path_prefix=prefix, allow_embedding=allow_embedding)
    server = make_server(app, listen(host, port))
    thread = threading.Thread(target=server.run, name="visualdl-server", daemon=True)
    thread.start()
    shown = f"[{host}]" if ":" in host else host
    return ServerHandle(f"http://{shown}:{server.effective_port}{prefix}/", app, server,
                        thread)
