"""``LogReaderProvider``: the data provider over logdirs of record files, kept fresh by a
background thread.

The server must listen at once and answer with whatever is loaded so far, so loading never
happens on the request path: a daemon thread calls ``LogReader.reload()`` right away and then
every ``interval`` seconds (``reload()`` reads only bytes appended since the last call, so a
steady-state reload of an idle logdir costs a few stat calls).

For logdirs in object storage every reload is billed requests (a listing per logdir), so
idle reloads back off: while a reload finds nothing new, the wait doubles, up to
``max_reload_interval`` (16 x the interval by default: 5 s -> 80 s); it drops back to
``reload_interval`` as soon as a reload finds data, or when a browser (re)opens the
dashboard (``note_activity()``, called by ``/api/runs``, ``/api/kinds`` and
``/api/reload``). Local logdirs keep the fixed interval: their reloads cost stat calls.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

import visualdl.storage as storage
from visualdl.sources.values import BlobRef, FileInfo, Scalars
from visualdl.reader.log_reader import LogReader
from visualdl.server.provider import DataProvider, EmptyProvider

__all__ = ["LogReaderProvider", "open_provider", "resolve_logdirs"]

_log = logging.getLogger(__name__)


class LogReaderProvider(DataProvider):
    """Serves one ``LogReader`` and owns the thread that reloads it."""

    def __init__(self, logdirs: Sequence[str | os.PathLike], reload_interval: float = 5.0,
                 storage_options: dict[str, Any] | None = None,
                 max_reload_interval: float | None = None) -> None:
        super().__init__()
        self.logdirs = [os.fspath(p) for p in logdirs]
        self.reload_interval = float(reload_interval)
        self.storage_options = dict(storage_options or {})
        self.remote = any(storage.is_url(p) for p in self.logdirs)
        self.max_reload_interval = float(max_reload_interval) if max_reload_interval \
            else 16 * self.reload_interval
        self.current_interval = self.reload_interval  # grows while remote reloads are idle
        self.reloads = 0
        self.last_reload_storage: dict[str, int] = {}
        # Built on the reload thread (a missing or unreadable logdir must not fail the app);
        # until then requests see no runs instead of waiting.
        self._reader: LogReader | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._loaded = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_reload_seconds = 0.0
        self.last_error: str | None = None
        self._serving = 0  # requests building an answer now (see serving())
        self._serving_lock = threading.Lock()

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
        self.current_interval = self.reload_interval
        self._wake.set()

    def note_activity(self) -> None:
        """A browser opened or refreshed the dashboard: end the idle back-off (and reload
        now when it had set in), so that what it sees is fresh."""
        if self.current_interval > self.reload_interval:
            self.current_interval = self.reload_interval
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
            "storage": self._storage_status(reader),
        }

    def _storage_status(self, reader: LogReader | None) -> dict[str, Any] | None:
        if not self.remote:
            return None
        total = reader.storage_stats() if reader is not None else None
        return {
            "reloads": self.reloads,
            "current_reload_interval": self.current_interval,
            "max_reload_interval": self.max_reload_interval,
            "last_reload": dict(self.last_reload_storage),
            "total": total.as_dict() if total is not None else {},
        }

    def reload_once(self) -> int:
        """Run one reload now, never raising: a bad file must not stop the server."""
        started = time.perf_counter()
        try:
            if self._reader is None:
                # load=False: publish the reader first, so queries see runs as they load.
                self._reader = LogReader(list(self.logdirs), load=False,
                                         storage_options=self.storage_options)
                self._reader.pause_hook = self._yield_to_requests
            before = self._reader.storage_stats()
            count = int(self._reader.reload())
            if count and not self._loaded.is_set():
                _trim_heap()
            if before is not None:
                self.last_reload_storage = self._reader.storage_stats().minus(before).as_dict()
            self.last_error = None
        except Exception as err:  # the reader should not raise; if it does, keep serving
            _log.exception("reload failed")
            self.last_error = f"{type(err).__name__}: {err}"
            count = 0
        self.last_reload_seconds = time.perf_counter() - started
        self.reloads += 1
        if self.remote:
            self.current_interval = self.reload_interval if count else \
                min(self.current_interval * 2, self.max_reload_interval)
        return count

    @contextlib.contextmanager
    def serving(self):  # noqa: ANN201 - a context manager
        with self._serving_lock:
            self._serving += 1
        try:
            yield
        finally:
            with self._serving_lock:
                self._serving -= 1

    def _yield_to_requests(self) -> None:
        """Called by the reader between files of its first load's second pass: while a
        request builds an answer, wait (up to 0.25 s a file, so the load never starves).
        The two would otherwise share the GIL, and the chart the user waits for (a batch of
        thousands of series) would take far longer."""
        deadline = time.monotonic() + 0.25
        while self._serving and time.monotonic() < deadline:
            time.sleep(0.002)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.reload_once()
            self._loaded.set()
            self._wake.wait(self.current_interval)
            self._wake.clear()

    # -- data ------------------------------------------------------------------------------
    def _require(self) -> LogReader:
        if self._reader is None:
            raise KeyError("nothing is loaded yet")
        return self._reader

    def runs(self) -> list[str]:
        return self._reader.runs() if self._reader is not None else []

    def tags(self, run: str) -> dict[str, list[str]]:
        return self._require().tags(run)

    def scalars(self, run: str, tag: str, rank: int | None = None) -> Scalars:
        reader = self._require()
        if reader.loading:  # a chart asks for it: read it first (visualdl.reader.first_load)
            reader.prioritize((tag,))
        return reader.scalars(run, tag, rank)

    def ranks(self, run: str) -> list[int]:
        return self._require().ranks(run)

    def default_rank(self, run: str, tag: str) -> int | None:
        return self._require().default_rank(run, tag)

    def scalar_pending(self, tag: str) -> bool:
        reader = self._reader
        if reader is None:
            return not self._loaded.is_set()
        return reader.scalar_pending(tag)

    def scalar_ends(self, run: str, tag: str, rank: int | None = None,
                    ) -> tuple[int, float, float, float] | None:
        return self._require().scalar_ends(run, tag, rank)

    def events(self, run: str, kind: str, tag: str) -> list:
        return self._require().events(run, kind, tag)

    def files(self) -> list[FileInfo]:
        reader = self._reader
        return reader.file_infos() if reader is not None else []

    def load_blob(self, ref: BlobRef) -> Any:
        return self._require().load(ref)

    def hparams(self, run: str) -> Any:
        return self._require().hparams(run)

    def run_health(self, run: str) -> Any:
        return self._require().run_health(run)


def _trim_heap() -> None:
    """Give the C heap's free pages back to the system after the first load (glibc only).

    Loading frees as much as it keeps (read buffers, decoding temporaries); glibc keeps
    freed pages of its arenas for reuse, which shows as resident memory the server never
    uses again. Measured after loading 2,000 runs: see bench/many_runs.py."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl): nothing to do
        pass


def resolve_logdirs(logdirs: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """Normalize the logdir argument(s); raises FileNotFoundError for a missing path.

    A ``.log`` file is accepted as is (the reader treats its directory as the run). URLs
    (object storage) are kept as they are: checking them would cost a request.
    """
    if isinstance(logdirs, (str, os.PathLike)):
        logdirs = [logdirs]
    out = []
    for item in logdirs:
        if storage.is_url(item):
            out.append(str(item))
            continue
        path = Path(storage.local_path(os.fspath(item))).expanduser()
        if not path.exists():
            raise FileNotFoundError(f"logdir does not exist: {path}")
        out.append(os.fspath(path))
    return out


def open_provider(
    logdirs: str | os.PathLike | Sequence[str | os.PathLike],
    reload_interval: float = 5.0,
    storage_options: dict[str, Any] | None = None,
) -> DataProvider:
    """The provider for ``logdirs`` (not started); raises for a missing logdir, and
    :class:`visualdl.storage.StorageUnavailable` (an ImportError) for a URL whose
    filesystem is not installed.

    No logdirs at all is an empty provider (``visualdl --model m.onnx`` shows only models).
    """
    if reload_interval <= 0:
        raise ValueError("reload_interval must be positive")
    paths = resolve_logdirs(logdirs)
    if not paths:
        return EmptyProvider()
    for path in paths:
        if storage.is_url(path):
            storage.open_fs(path, storage_options)  # fail now, not on the reload thread
    return LogReaderProvider(paths, reload_interval, storage_options)
