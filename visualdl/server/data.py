"""The data service: one LogReader, kept fresh by a background thread.

The server must listen at once and answer with whatever is loaded so far, so loading never
happens on the request path: a daemon thread calls ``LogReader.reload()`` right away and then
every ``interval`` seconds (``reload()`` reads only bytes appended since the last call, so a
steady-state reload of an idle logdir costs a few stat calls). Handlers read the reader's
snapshots directly; ``version`` tells them (and the browser, via ETags) when anything changed.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Iterable, Sequence

from visualdl.reader.log_reader import LogReader

__all__ = ["DataService", "open_data_service", "resolve_logdirs"]

_log = logging.getLogger(__name__)


class DataService:
    """Owns the LogReader and the thread that reloads it."""

    def __init__(self, logdirs: Sequence[str | os.PathLike], reload_interval: float = 5.0) -> None:
        self.logdirs = [os.fspath(p) for p in logdirs]
        self.reload_interval = float(reload_interval)
        # Built on the reload thread (a missing or unreadable logdir must not fail the app);
        # until then requests see an empty index instead of waiting.
        self.reader: LogReader | _EmptyReader = _EmptyReader()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._loaded = threading.Event()
        self._thread: threading.Thread | None = None
        self.reload_count = 0
        self.last_reload_seconds = 0.0
        self.last_error: str | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Start the background reload thread (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="visualdl-reload", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the reload thread; waits for an in-flight reload up to ``timeout`` seconds."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def request_reload(self) -> None:
        """Ask for a reload now instead of at the next tick (used by the UI's refresh button)."""
        self._wake.set()

    def wait_loaded(self, timeout: float | None = None) -> bool:
        """Block until the first reload finished; for tests and benchmarks."""
        return self._loaded.wait(timeout)

    # -- state -------------------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        """True once the first full pass over the logdirs has finished."""
        return self._loaded.is_set()

    @property
    def version(self) -> int:
        """Changes whenever new data was read; used for ETags and the UI's auto-refresh."""
        return int(self.reader.version)

    def reload_once(self) -> int:
        """Run one reload now, never raising: a bad file must not stop the server."""
        started = time.perf_counter()
        try:
            if isinstance(self.reader, _EmptyReader):
                # load=False: publish the reader first, so queries see runs as they load.
                self.reader = LogReader(list(self.logdirs), load=False)
            count = int(self.reader.reload())
            self.last_error = None
        except Exception as err:  # the reader should not raise; if it does, keep serving
            _log.exception("reload failed")
            self.last_error = f"{type(err).__name__}: {err}"
            count = 0
        self.last_reload_seconds = time.perf_counter() - started
        self.reload_count += 1
        return count

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.reload_once()
            self._loaded.set()
            self._wake.wait(self.reload_interval)
            self._wake.clear()


def resolve_logdirs(logdirs: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """Normalize the logdir argument(s); raises FileNotFoundError for a missing path.

    A ``.log`` file is accepted as is (the reader treats its directory as the run).
    """
    if isinstance(logdirs, (str, os.PathLike)):
        logdirs = [logdirs]
    out = []
    for item in logdirs:
        path = Path(item).expanduser()
        if not path.exists():
            raise FileNotFoundError(f"logdir does not exist: {path}")
        out.append(os.fspath(path))
    if not out:
        raise ValueError("at least one logdir is required")
    return out


def open_data_service(
    logdirs: str | os.PathLike | Sequence[str | os.PathLike],
    reload_interval: float = 5.0,
    *,
    has_models: bool = False,
) -> DataService:
    """The data service for ``logdirs`` (not started); raises for a missing logdir.

    With no logdirs but ONNX models to show (``visualdl --model m.onnx``) there is nothing
    to read, and the service says so at once.
    """
    if reload_interval <= 0:
        raise ValueError("reload_interval must be positive")
    if not logdirs and has_models:
        from visualdl.server.graph.nologs import NoLogsDataService

        return NoLogsDataService(reload_interval)
    return DataService(resolve_logdirs(logdirs), reload_interval)


class _EmptyReader:
    """Stands in for the LogReader until its first load finished: no runs, no tags."""

    version = 0
    errors = 0
    error_messages: list[str] = []

    def runs(self) -> list[str]:
        return []

    def tags(self, run: str) -> dict[str, list[str]]:
        raise KeyError(run)

    def scalars(self, run: str, tag: str):  # noqa: ANN201
        raise KeyError(run)

    def reload(self) -> int:
        return 0
