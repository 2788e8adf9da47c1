"""Big views laid out off the request path, one background job per state, with progress.

"Expand all" on a 100,000-node model takes seconds: a request that waited for it would
leave the browser with nothing to say meanwhile. Instead the first request starts a job
and is answered at once with its progress (HTTP 202, ``pending``); the browser keeps
its current picture, shows the progress, asks again, and draws the answer when it is
ready. Jobs of one model run one at a time (they share the layout caches; two at once
would only halve each); small views never wait for them: they are laid out on the
request's own thread (:meth:`GraphDocument.view_or_progress` decides which).
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from visualdl.kinds.graph.layout import Progress

__all__ = ["JOBS_KEPT", "ViewJob", "ViewJobs", "release_later"]

JOBS_KEPT = 2  # finished jobs kept per model until asked for (an answer of 100,000
# nodes holds some hundred MB: it is handed out once, then forgotten; laid out again from
# the layout cache if asked for again)


class ViewJob:
    """One state being laid out: its progress, then its answer or its error."""

    def __init__(self) -> None:
        self.phase = "waiting"  # "waiting" | "layout" | "answer" | "done"
        self.done = 0
        self.total = 0
        self.started = time.monotonic()
        self.result: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.finished = threading.Event()

    def progress(self) -> dict[str, Any]:
        """What the browser shows: "laying out 3,400 / 9,800 groups"."""
        return {"phase": self.phase, "done": self.done, "total": self.total, "unit": "groups",
                "seconds": round(time.monotonic() - self.started, 2)}

    def _report(self, done: int, total: int) -> None:
        self.phase = "layout" if done < total else "answer"
        self.done, self.total = done, total


class ViewJobs:
    """The background view jobs of one model."""

    def __init__(self) -> None:
        self._jobs: OrderedDict[Hashable, ViewJob] = OrderedDict()
        self._lock = threading.Lock()  # guards _jobs
        self._running = threading.Lock()  # one job lays out at a time

    def get(self, key: Hashable) -> ViewJob | None:
        """The job for ``key`` (running or finished), if one was started."""
        with self._lock:
            return self._jobs.get(key)

    def start(self, key: Hashable, build: Callable[[Progress], dict[str, Any]]) -> ViewJob:
        """The job for ``key``: the one started before (running or finished), else a new one
        running ``build(progress)`` on its own thread."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None:
                self._jobs.move_to_end(key)
                return job
            job = self._jobs[key] = ViewJob()
            self._forget_old()
        threading.Thread(target=self._run, args=(job, build), name="graph-view-job",
                         daemon=True).start()
        return job

    @property
    def running(self) -> bool:
        """Whether a job is laying out now."""
        return self._running.locked()

    def drop(self, key: Hashable) -> None:
        """Forget the job for ``key`` (one whose answer or error was handed out)."""
        with self._lock:
            self._jobs.pop(key, None)

    def _forget_old(self) -> None:
        finished = [k for k, j in self._jobs.items() if j.finished.is_set()]
        for key in finished[:max(0, len(finished) - JOBS_KEPT)]:
            del self._jobs[key]

    def _run(self, job: ViewJob, build: Callable[[Progress], dict[str, Any]]) -> None:
        with self._running:
            job.started = time.monotonic()
            try:
                job.result = build(job._report)
                job.phase = "done"
            except Exception as err:  # noqa: BLE001 - answered to the request that asks next
                job.error = err
            finally:
                job.finished.set()


RELEASE_SLICE = 2000  # items freed between two hand-backs of the interpreter (~5 ms)
_released: queue.SimpleQueue = queue.SimpleQueue()
_releaser_lock = threading.Lock()
_releaser: list[threading.Thread] = []


def release_later(lists: list[list]) -> None:
    """Free the items of ``lists`` (an answered view's boxes and edges) on a thread of their
    own, a slice at a time. Freed at once, as the request that encoded them returned, the
    two million objects of a 100,000-node answer held the interpreter for 0.2 s before its
    first byte was sent; in slices they go while the browser reads the answer."""
    _released.put(lists)
    with _releaser_lock:
        if not _releaser:
            _releaser.append(threading.Thread(target=_release, name="graph-release", daemon=True))
            _releaser[0].start()


def _release() -> None:
    while True:
        lists = _released.get()
        for items in lists:
            while items:
                del items[-RELEASE_SLICE:]  # from the end: the rest does not move
                time.sleep(0)  # hands the interpreter to whoever waits for it
        del lists
