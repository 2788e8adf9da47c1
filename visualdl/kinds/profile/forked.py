"""The second half of a big trace's events parsed by a forked child, at the same time as the
first half in the parent.

Building the columns of a big trace is Python-bound (msgspec decoding, then ``map`` over
the decoded structs): one core. The runner (:mod:`visualdl.kinds.profile.runner`) is a
single-threaded process of its own, so it can ``fork`` (:func:`start` is what it hands
:func:`visualdl.kinds.profile.parse.halves_by`): the child inherits the trace's bytes (a
mapped file, or the raw slices of its events) without a copy, builds the columns of its
half and hands them back through anonymous shared memory (the small rest, names and the
like, through a pipe).

The child adds only the events that need no context: metadata, ``B``/``E`` pairs (which
may straddle the halves) and anything odd are handed back as they are, and the parent
adds them after its own half, in file order. If the child fails in any way, the parent
parses the second half itself: same result, only slower. If the child finds that the
trace is not cut where the parent thought (see ``parse.Misaligned``), the parent is told.
"""

from __future__ import annotations

import mmap
import os
import pickle
import signal
import sys
import threading
from typing import Any, Callable

import numpy as np

from visualdl.kinds.profile.parse import Builder, Misaligned

__all__ = ["Half", "start", "available"]

_COLUMNS = ("ts", "dur", "name", "cat", "track", "ph", "args_len")
_ALIGN = 64


def available() -> bool:
    """Whether a forked child can run beside this process: POSIX ``fork`` (Linux only:
    macOS's system libraries are not fork-safe) and at least two CPUs to run on."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except OSError:  # pragma: no cover - no affinity to ask about
        return (os.cpu_count() or 1) >= 2


class Half:
    """A forked child running ``fill(builder)``; :meth:`join` adds its columns to the
    parent's builder."""

    def __init__(self, pid: int | None, reader: int | None,
                 shared: mmap.mmap | None) -> None:
        self.pid = pid
        self.reader = reader
        self.shared = shared

    def join(self, builder: Builder, fill: Callable[[Builder], None]) -> None:
        """Add the child's columns (then the events it left) to ``builder``, which holds
        the first half; without the child's answer, ``fill(builder)`` here."""
        found = self._collect()
        if found is None:
            fill(builder)
            return
        if found.get("misaligned"):
            raise Misaligned()
        _merge(builder, found, self.shared)
        for event in found["deferred"]:
            builder.add(*event)

    def close(self) -> None:
        """End the child if it still runs (the parent's half failed), free the memory."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.pid = None
        if self.reader is not None:
            try:
                os.close(self.reader)
            except OSError:
                pass
            self.reader = None
        if self.shared is not None:
            self.shared.close()
            self.shared = None

    def _collect(self) -> dict[str, Any] | None:
        if self.pid is None:
            return None
        try:
            with os.fdopen(self.reader, "rb", closefd=False) as f:
                said = f.read()
            found = pickle.loads(said) if said else None
        except (OSError, pickle.UnpicklingError, EOFError, ValueError):
            found = None
        pid, self.pid = self.pid, None
        if not isinstance(found, dict):  # it failed: its status says nothing more
            os.waitpid(pid, 0)
            return None
        # a whole answer (the pipe closed after it): the child's exit (unmapping its half)
        # is not waited for here
        threading.Thread(target=os.waitpid, args=(pid, 0), daemon=True,
                         name="visualdl-profile-fork-wait").start()
        return found


def start(fill: Callable[[Builder], None], size: int) -> Half:
    """Fork a child that runs ``fill`` on a builder of its own (events of ``size`` bytes of
    JSON at most); a :class:`Half` whose ``pid`` is None when no child could be started
    (then :meth:`Half.join` runs ``fill`` itself)."""
    if not available():
        return Half(None, None, None)
    # an upper bound on what the child writes: a column entry is 33 bytes for an event of
    # at least 17 bytes of JSON (``{"ph":"X","ts":1}``), and the args are parts of that
    # JSON (pages are only allocated where written)
    capacity = 3 * size + (len(_COLUMNS) + 1) * _ALIGN
    try:
        shared = mmap.mmap(-1, capacity)
        reader, writer = os.pipe()
    except (OSError, ValueError):
        return Half(None, None, None)
    try:
        pid = os.fork()
    except OSError:
        os.close(reader)
        os.close(writer)
        shared.close()
        return Half(None, None, None)
    if pid == 0:  # the child: never returns
        status = 1
        try:
            os.close(reader)
            _child(fill, shared, writer)
            status = 0
        finally:
            os._exit(status)
    os.close(writer)
    return Half(pid, reader, shared)


def _child(fill: Callable[[Builder], None], shared: mmap.mmap, writer: int) -> None:
    builder = Builder()
    builder.deferred = []
    try:
        fill(builder)
    except Misaligned:
        found: dict[str, Any] = {"misaligned": True}
    else:
        found = _columns(builder, shared)
    with os.fdopen(writer, "wb") as f:
        f.write(pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL))


def _columns(builder: Builder, shared: mmap.mmap) -> dict[str, Any]:
    layout = {}
    offset = 0
    for key in _COLUMNS:
        array = builder.column(key)
        view = np.frombuffer(shared, array.dtype, len(array), offset)
        view[:] = array
        layout[key] = (array.dtype.str, offset, len(array))
        offset += -(-array.nbytes // _ALIGN) * _ALIGN
    args = b"".join(builder.args)
    shared[offset:offset + len(args)] = args
    return {"layout": layout, "args": (offset, len(args)), "names": list(builder.names),
            "cats": list(builder.cats), "tracks": list(builder.tracks),
            "no_dur": builder.no_dur, "bad": builder.bad, "deferred": builder.deferred}


def _merge(builder: Builder, found: dict[str, Any], shared: mmap.mmap) -> None:
    """The child's columns after the parent's, its ids turned into the parent's."""
    cols = {key: np.frombuffer(shared, np.dtype(dtype), n, offset)
            for key, (dtype, offset, n) in found["layout"].items()}
    names = np.fromiter(map(builder.names.__getitem__, found["names"]), np.int32,
                        len(found["names"]))
    cats = np.fromiter(map(builder.cats.__getitem__, found["cats"]), np.int32,
                       len(found["cats"]))
    tracks = builder.tracks
    track_ids = np.array([tracks.setdefault(tuple(k), len(tracks)) for k in found["tracks"]],
                         np.int32)
    out = builder.cols
    if len(cols["ts"]):
        out["ts"].append(cols["ts"].copy())
        out["dur"].append(cols["dur"].copy())
        out["ph"].append(cols["ph"].copy())
        out["args_len"].append(cols["args_len"].copy())
        out["name"].append(names[cols["name"]])
        out["cat"].append(cats[cols["cat"]])
        out["track"].append(track_ids[cols["track"]])
    start, size = found["args"]
    builder.args.append(shared[start:start + size])
    builder.no_dur += found["no_dur"]
    builder.bad += found["bad"]
