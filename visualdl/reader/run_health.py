"""Run health: whether a run is running, finished, stalled or crashed, and the first
non-finite value of its scalars, decided from its files as a reader sees them.

A ``LogWriter`` ends its file with a close marker (format 1.7, ``Close``) when it is closed
(``close()``, ``with``, or at interpreter exit), so *finished* is known, not guessed. Each
file of a run is judged, then the run:

- **finished**: the file ends with its close marker (one written after a marker, by a
  writer that reopened it, is not finished until it is closed again);
- **crashed**: the file ends in a torn record (a write cut short: the process died in it)
  and has not changed for longer than a running file would go quiet;
- **running**: the file changed within ``RUNNING_INTERVALS`` of the run's usual interval
  (at least ``RUNNING_MIN_SECONDS``);
- **stalled**: none of those: nothing new for much longer than usual, and no close;
- files without close markers (TensorBoard event files, VisualDL 2.x files, ours before
  1.7) are judged by age alone: running when recent, finished once older than
  ``OLD_SECONDS``, stalled in between.

A file left unclosed that stopped changing before a later file of the same rank started is
history, not the run's state, however recent: that worker was started again (an elastic
restart, a run resumed into its folder) and its new file speaks for it. The run is crashed
when any of its other files is (a process of it died), else running when any is, else
stalled when any is, else finished: several writers (processes) of one run are finished
only when every one closed its file. The run's usual interval is the mean gap
between the points of its most often logged scalar tag, and never less than
``FLUSH_SECONDS`` (the writer's default ``flush_secs``: points reach the disk that often).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

__all__ = ["FileFacts", "RunHealth", "NonFiniteScan", "assess", "file_state", "STATES",
           "CLOSE_MARKER_MINOR"]

STATES = ("running", "finished", "stalled", "crashed")
#: the first record format minor version whose writers end their files with a close marker
CLOSE_MARKER_MINOR = 7
#: the LogWriter's default flush_secs: the least interval between a run's writes to disk
FLUSH_SECONDS = 5.0
#: a file is running while it changed within this many usual intervals...
RUNNING_INTERVALS = 6
#: ...and at least this long (a reader's reload interval and a slow disk's delay)
RUNNING_MIN_SECONDS = 30.0
#: a file without close markers is taken as finished once this old
OLD_SECONDS = 3600.0


@dataclass(frozen=True)
class FileFacts:
    """What a reader knows of one file: whether its format has close markers (``marked``),
    whether it ends with one (``closed``), whether it ends in a torn record (``torn``) and
    when it last changed (``mtime``, None when unknown); when its writer started (from its
    name) and its rank (from its ``Worker`` record), where known."""

    path: str
    marked: bool
    closed: bool
    torn: bool
    mtime: float | None
    started: float | None = None
    rank: int | None = None  # None: a single-process writer


@dataclass(frozen=True)
class RunHealth:
    """A run's state, its first non-finite scalar value (``nan``: tag, step and value, or
    None), its last change (``last_update``) and the interval it was judged by."""

    state: str
    nan: dict[str, Any] | None
    last_update: float | None
    interval: float

    def as_json(self) -> dict[str, Any]:
        return {"state": self.state, "nan": self.nan, "last_update": self.last_update,
                "interval": self.interval}


def usual_interval(ends: Iterable[tuple[int, float, float, float]]) -> float:
    """The mean gap between points of the most often logged tag (``scalar_ends`` of each
    tag), at least ``FLUSH_SECONDS``."""
    gaps = [(last - first) / (n - 1) for n, first, last, _ in ends
            if n > 1 and math.isfinite(last - first) and last > first]
    return max(FLUSH_SECONDS, min(gaps)) if gaps else FLUSH_SECONDS


def file_state(facts: FileFacts, interval: float, now: float) -> str:
    """One file's state (see the module's docstring)."""
    if facts.closed:
        return "finished"
    age = now - facts.mtime if facts.mtime is not None else math.inf
    recent = age <= max(RUNNING_MIN_SECONDS, RUNNING_INTERVALS * interval)
    if facts.torn and not recent:
        return "crashed"
    if recent:
        return "running"
    if not facts.marked and age > OLD_SECONDS:
        return "finished"
    return "stalled"


def assess(files: list[FileFacts], ends: list[tuple[int, float, float, float]],
           nan: dict[str, Any] | None, now: float | None = None) -> RunHealth:
    """The run's health from its files and its scalars' ends (``scalar_ends`` per tag)."""
    now = time.time() if now is None else now
    interval = usual_interval(ends)
    judged = [(f, file_state(f, interval, now)) for f in files]
    states = {s for f, s in judged if s == "finished" or not _restarted(f, files)}
    state = next((s for s in ("crashed", "running", "stalled") if s in states), "finished")
    changes = [f.mtime for f in files if f.mtime is not None]
    return RunHealth(state, nan, max(changes) if changes else None, interval)


def _restarted(quiet: FileFacts, files: list[FileFacts]) -> bool:
    """Whether another file of the same rank started after ``quiet`` did, once it had
    stopped changing (in whole seconds: names give the start in seconds)."""
    if quiet.mtime is None:
        return False
    return any(f is not quiet and f.rank == quiet.rank and f.started is not None and
               f.started >= math.floor(quiet.mtime) and
               (quiet.started is None or f.started > quiet.started) for f in files)


class NonFiniteScan:
    """The first non-finite value of a run's scalars, remembered per series and looked for
    again only in a series that grew: a dashboard asks for every run's health at each
    refresh, and a long run's series do not change between most of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, str], tuple[int, tuple[int, str, str] | None]] = {}

    def forget(self, run: str) -> None:
        """Drop what was remembered of ``run`` (its files were removed: read again)."""
        with self._lock:
            for key in [k for k in self._seen if k[0] == run]:
                del self._seen[key]

    def first_nonfinite(self, run: str, tags: list[str], series: Callable[[str], Any],
                        sizes: dict[str, int]) -> dict[str, Any] | None:
        """``{"tag", "step", "value"}`` of the earliest (by step, then tag) non-finite
        point over ``tags`` (``series(tag)``: its ``Scalars``; ``sizes``: points each has
        now), or None."""
        found = []
        for tag in tags:
            hit = self._first_of(run, tag, series, sizes.get(tag, 0))
            if hit is not None:
                found.append(hit)
        if not found:
            return None
        step, tag, value = min(found)
        return {"tag": tag, "step": step, "value": value}

    def _first_of(self, run: str, tag: str, series: Callable[[str], Any],
                  size: int) -> tuple[int, str, str] | None:
        key = (run, tag)
        with self._lock:
            seen = self._seen.get(key)
        if seen is not None and seen[0] == size:
            return seen[1]
        try:
            data = series(tag)
        except KeyError:
            return None
        try:
            bad = np.flatnonzero(~np.isfinite(np.asarray(data.values)))
            hit = None
            if bad.shape[0]:
                steps = np.asarray(data.steps)[bad]
                at = int(bad[int(np.argmin(steps))])
                value = float(data.values[at])
                hit = (int(data.steps[at]), tag, "NaN" if math.isnan(value) else
                       ("Infinity" if value > 0 else "-Infinity"))
        finally:
            data.release()
        with self._lock:
            self._seen[key] = (int(data.steps.shape[0]), hit)
        return hit
