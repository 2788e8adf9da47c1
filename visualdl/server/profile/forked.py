"""The second half of a big trace's events parsed by a forked child, at the same time as the
first half in the parent.

Building the columns of a million events is Python-bound (msgspec decoding, then ``map``
over the decoded structs): one core, about a second. The parse worker
(:mod:`visualdl.server.profile.worker`) is a single-threaded process of its own, so it can
``fork`` once the event array has been split into raw slices: the child inherits the
slices without a copy, builds the columns of events ``[first:]`` and hands them back
through anonymous shared memory (the small rest, names and the like, through a pipe).

The child adds only the events that need no context: metadata, ``B``/``E`` pairs (which
may straddle the halves) and anything odd are left to the parent, which adds them after
its own half, in file order. If the child fails in any way, the parent parses the second
half itself: same result, only slower.
"""

from __future__ import annotations

import mmap
import os
import pickle
import signal
import sys
import threading
from typing import Any

import numpy as np

from visualdl.server.profile.parse import Builder, add_events, add_one_by_one

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
    """A forked child parsing ``raws[first:]``; :meth:`join` adds its columns to a builder."""

    def __init__(self, first: int, pid: int | None, reader: int | None,
                 shared: mmap.mmap | None) -> None:
        self.first = first
        self.pid = pid
        self.reader = reader
        self.shared = shared

    def join(self, builder: Builder, raws: list) -> None:
        """Add the child's columns (then the events it left) to ``builder``, which holds
        the first half; without the child's answer, parse the second half here."""
        found = self._collect()
        if found is None:
            add_events(builder, raws, self.first, len(raws))
            return
        _merge(builder, found, self.shared)
        deferred = found["deferred"]
        if deferred:
            add_one_by_one(builder, [raws[i] for i in deferred])

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
        # a whole answer (the pipe closed after it): the child's exit, the unmapping of
        # hundreds of MB, is not waited for here
        threading.Thread(target=os.waitpid, args=(pid, 0), daemon=True,
                         name="visualdl-profile-fork-wait").start()
        return found


def start(raws: list, first: int, text_bytes: int) -> Half:
    """Fork a child parsing ``raws[first:]`` (slices of ``text_bytes`` of JSON); a
    :class:`Half` whose ``pid`` is None when no child could be started (then
    :meth:`Half.join` parses that half itself)."""
    if not available():
        return Half(first, None, None, None)
    # an upper bound on what the child writes: its columns, and the args, which are parts
    # of its events' JSON (pages are only allocated where written)
    capacity = (len(raws) - first) * 48 + text_bytes + (len(_COLUMNS) + 1) * _ALIGN
    try:
        shared = mmap.mmap(-1, capacity)
        reader, writer = os.pipe()
    except (OSError, ValueError):
        return Half(first, None, None, None)
    try:
        pid = os.fork()
    except OSError:
        os.close(reader)
        os.close(writer)
        shared.close()
        return Half(first, None, None, None)
    if pid == 0:  # the child: never returns
        status = 1
        try:
            os.close(reader)
            _child(raws, first, shared, writer)
            status = 0
        finally:
            os._exit(status)
    os.close(writer)
    return Half(first, pid, reader, shared)


def _child(raws: list, first: int, shared: mmap.mmap, writer: int) -> None:
    builder = Builder()
    builder.deferred = []
    add_events(builder, raws, first, len(raws))
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
    found = {"layout": layout, "args": (offset, len(args)), "names": list(builder.names),
             "cats": list(builder.cats), "tracks": list(builder.tracks),
             "no_dur": builder.no_dur, "bad": builder.bad, "deferred": builder.deferred}
    with os.fdopen(writer, "wb") as f:
        f.write(pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL))


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
