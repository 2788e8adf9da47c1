"""The one way the tests run a server in their own process: ``start_server`` on a free
loopback port, waited on until its first load, stopped by its handle."""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator, Sequence

from visualdl.server.background import ServerHandle, start_server

__all__ = ["serving"]

PathLike = str | os.PathLike


@contextmanager
def serving(logdirs: PathLike | Sequence[PathLike] = (), *, models: Sequence[PathLike] = (),
            reload_interval: float = 0.5, load_timeout: float = 20.0) -> Iterator[ServerHandle]:
    """A server on 127.0.0.1 (port 0: a free one) whose first load has finished."""
    handle = start_server(logdirs, reload_interval=reload_interval, models=models)
    try:
        assert handle.wait_loaded(load_timeout), f"not loaded within {load_timeout} s"
        yield handle
    finally:
        handle.stop()
