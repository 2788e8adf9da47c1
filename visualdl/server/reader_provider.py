"""``LogReaderProvider``: the data provider over logdirs of record files, kept fresh by a
background thread.

The server must listen at once and answer with whatever is loaded so far, so loading never
happens on the request path: a daemon thread calls ``LogReader.reload()`` right away and then
every ``interval`` seconds (``reload()`` reads only bytes appended since the last call, so a
steady-state reload of an idle logdir costs a few stat calls).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from visualdl.reader.events import BlobRef, Scalars
from visualdl.reader.log_reader import LogReader
from visualdl.server.provider import DataProvider, EmptyProvider

__all__ = ["LogReaderProvider", "open_provider", "resolve_logdirs"]

_log = logging.getLogger(__name__)


class LogReaderProvider(DataProvider):
    """Serves one ``LogReader`` and owns the thread that reloads it."""

    def __init__(self, logdirs: Sequence[str | os.PathLike], reload_interval: float = 5.0) -> None:
        super().__init__()
        self.logdirs = [os.fspath(p) for p in logdirs]
        self.reload_interval = float(reload_interval)
        # Built on the reload thread (a missing or unreadable logdir must not fail the app);
        # until then requests see no runs instead of waiting.
        self._reader: LogReader | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._loaded = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_reload_seconds = 0.0
        self.last_error: str | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="visualdl-reload", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def request_reload(self) -> None:
        self._wake.set()

    def wait_loaded(self, timeout: float | None = None) -> bool:
        return self._loaded.wait(timeout)

    @property
    def loaded(self) -> bool:
        return self._loaded.is_set()

    @property
    def version(self) -> int:
        return int(self._reader.version) if self._reader is not None else 0

    def status(self) -> dict[str, Any]:
        reader = self._reader
        return {
            "errors": int(reader.errors) if reader else 0,
            "error_messages": reader.error_messages[-20:] if reader else [],
            "last_reload_seconds": self.last_reload_seconds,
            "reload_error": self.last_error,
        }

    def reload_once(self) -> int:
        """Run one reload now, never raising: a bad file must not stop the server."""
        started = time.perf_counter()
        try:
            if self._reader is None:
                # load=False: publish the reader first, so queries see runs as they load.
                self._reader = LogReader(list(self.logdirs), load=False)
            count = int(self._reader.reload())
            self.last_error = None
        except Exception as err:  # the reader should not raise; if it does, keep serving
            _log.exception("reload failed")
            self.last_error = f"{type(err).__name__}: {err}"
            count = 0
        self.last_reload_seconds = time.perf_counter() - started
        return count

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.reload_once()
            self._loaded.set()
            self._wake.wait(self.reload_interval)
            self._wake.clear()

    # -- data ------------------------------------------------------------------------------
    def _require(self) -> LogReader:
        if self._reader is None:
            raise KeyError("nothing is loaded yet")
        return self._reader

    def runs(self) -> list[str]:
        return self._reader.runs() if self._reader is not None else []

    def run_tags(self, run: str) -> dict[str, list[str]]:
        return self._require().tags(run)

    def scalars(self, run: str, tag: str) -> Scalars:
        return self._require().scalars(run, tag)

    def events(self, run: str, kind: str, tag: str) -> list:
        return self._require().events(run, kind, tag)

    def load_blob(self, ref: BlobRef) -> Any:
        return self._require().load(ref)

    def hparams(self, run: str) -> Any:
        return self._require().hparams(run)


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
    return out


def open_provider(
    logdirs: str | os.PathLike | Sequence[str | os.PathLike],
    reload_interval: float = 5.0,
) -> DataProvider:
    """The provider for ``logdirs`` (not started); raises for a missing logdir.

    No logdirs at all is an empty provider (``visualdl --model m.onnx`` shows only models).
    """
    if reload_interval <= 0:
        raise ValueError("reload_interval must be positive")
    paths = resolve_logdirs(logdirs)
    if not paths:
        return EmptyProvider()
    return LogReaderProvider(paths, reload_interval)
