"""The app's projections: a first frame at once, refined by one worker thread, kept in a
small LRU. See :class:`Refinements`."""

from __future__ import annotations

import queue
import threading
import uuid
from collections import OrderedDict
from contextlib import closing
from time import monotonic
from typing import Callable, Iterator

from visualdl.api.errors import busy

__all__ = ["Refinements", "Start"]

# A refinement: ``(patch to the body, progress)`` pairs, the last with progress 1.0.
Frames = Iterator[tuple[dict, float]]
# What a request computes itself: the first body, and its refinement (None: it is final).
Start = Callable[[], tuple[dict, "Callable[[], Frames] | None"]]

_CACHE_SIZE = 32
_MAX_PENDING = 4  # refinements queued or running per app; more wait for a poll to queue them
_MAX_STARTING = 2  # request threads (of the server's 8) that may make first frames at once
_WAIT_SECONDS = 5.0  # the longest a request waits (for a first frame), then a 503
_IDLE_SECONDS = 30.0  # the worker thread ends after this long without work
_ABANDON_SECONDS = 30.0  # a refinement nobody asked about for this long is dropped


class _Entry:
    """One projection: its latest body and where its refinement stands."""

    def __init__(self) -> None:
        self.body: dict = {}
        self.version = 0
        self.refine: Callable[[], Frames] | None = None
        # new -> final | waiting (for a slot) -> queued -> running -> final | failed | dropped
        self.state = "new"
        self.error: BaseException | None = None
        self.ready = threading.Event()  # the first body (or the error) is there
        self.seen = monotonic()


class Refinements:
    """First frames on the request thread, refinements on one worker, results in an LRU.

    t-SNE and UMAP take seconds to minutes, and a request that waits that long holds one of
    the server's few request threads (and meets proxies' time limits). So a request answers
    with the best frame there is (PCA at first) and its ``progress``; the one worker thread
    refines one projection at a time and publishes each frame, and the view polls. At most
    ``_MAX_STARTING`` requests make first frames at once, so cheap requests always find a
    free thread; at most ``_MAX_PENDING`` refinements are pending, the rest start when polled
    again; one nobody polls any more stops. The same projection asked twice is made once.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple, _Entry] = OrderedDict()
        self.pending = 0
        self.token = uuid.uuid4().hex  # in ETags: a restarted server's version 1 differs
        self._starting = threading.BoundedSemaphore(_MAX_STARTING)
        self._queue: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None

    def get(self, key: tuple, start: Start) -> tuple[dict, int]:
        """``(body, version)`` of the latest frame for ``key``; ``start`` makes the first."""
        entry, mine = self._entry(key)
        if mine:
            self._start(key, entry, start)
        elif not entry.ready.wait(_WAIT_SECONDS):
            raise busy("the projection is still being prepared")
        with self.lock:
            entry.seen = monotonic()
            if entry.error is not None:
                if self.items.get(key) is entry:
                    del self.items[key]  # the next request tries afresh
                raise entry.error
            if entry.state == "waiting":
                self._submit(key, entry)
            return entry.body, entry.version

    def _entry(self, key: tuple) -> tuple[_Entry, bool]:
        """The entry for ``key`` and whether this request makes its first frame."""
        with self.lock:
            entry = self.items.get(key)
            if entry is not None:
                self.items.move_to_end(key)
                return entry, False
        if not self._starting.acquire(timeout=_WAIT_SECONDS):
            raise busy("other projections are being prepared")
        with self.lock:
            entry = self.items.get(key)
            if entry is not None:  # another request started it meanwhile
                self._starting.release()
                return entry, False
            entry = self.items[key] = _Entry()
            self._evict()
            return entry, True

    def _start(self, key: tuple, entry: _Entry, start: Start) -> None:
        try:
            body, refine = start()
        except BaseException as err:
            with self.lock:
                entry.error, entry.state = err, "failed"
                entry.ready.set()
                if self.items.get(key) is entry:
                    del self.items[key]  # the next request tries afresh
            raise
        finally:
            self._starting.release()
        with self.lock:
            entry.body = {**body, "progress": 0.0 if refine else 1.0, "final": refine is None}
            entry.version = 1
            entry.refine = refine
            entry.state = "waiting" if refine else "final"
            entry.ready.set()

    def _submit(self, key: tuple, entry: _Entry) -> None:
        """Queue ``entry``'s refinement if there is room (under the lock)."""
        if self.pending >= _MAX_PENDING:
            return  # it stays "waiting": a later poll queues it
        entry.state = "queued"
        self.pending += 1
        self._queue.put((key, entry))
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="visualdl-projections",
                                            daemon=True)
            self._thread.start()

    def _evict(self) -> None:
        """Drop the least recently asked entries beyond the size, never a pending one."""
        for key in [k for k, e in self.items.items() if e.state not in ("queued", "running")]:
            if len(self.items) <= _CACHE_SIZE:
                return
            del self.items[key]

    def _work(self) -> None:
        while True:
            try:
                key, entry = self._queue.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with self.lock:  # submissions happen under the lock: none is missed
                    if self._queue.empty():
                        self._thread = None
                        return
                continue
            try:
                self._refine(key, entry)
            except BaseException as err:  # noqa: BLE001 - handed to the next request
                with self.lock:
                    entry.error, entry.state = err, "failed"
            finally:
                with self.lock:
                    self.pending -= 1
                    entry.refine = None  # the matrix it holds is no longer needed

    def _refine(self, key: tuple, entry: _Entry) -> None:
        with self.lock:
            entry.state = "running"
        with closing(entry.refine()) as frames:
            for patch, progress in frames:
                final = progress >= 1.0
                with self.lock:
                    entry.body = {**entry.body, **patch, "progress": min(progress, 1.0),
                                  "final": final}
                    entry.version += 1
                    if final:
                        entry.state = "final"
                        return
                    if monotonic() - entry.seen > _ABANDON_SECONDS:
                        entry.state = "dropped"
                        if self.items.get(key) is entry:
                            del self.items[key]
                        return
        with self.lock:  # frames ended without saying 1.0: what there is, is final
            entry.body = {**entry.body, "progress": 1.0, "final": True}
            entry.version += 1
            entry.state = "final"

