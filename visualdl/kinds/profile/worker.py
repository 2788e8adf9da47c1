"""Big traces are parsed in a process of their own, not in the server's.

Parsing a trace of a million events holds the interpreter lock for more than a second
(msgspec decoding, then the columns built from Python objects). In the server's process
that starves every other request meanwhile, the page's own scripts and the first timeline
window included: the tab opened while the trace is being parsed loaded a second later. So a
trace bigger than ``MIN_BYTES`` of JSON is parsed, and its model built, by ``python -m
visualdl.kinds.profile.worker``; it writes the model as the disk cache's files
(:mod:`visualdl.kinds.profile.store`: into the cache folder, or a private temporary one
with ``--no-cache``), and the server memory-maps them. The model is built straight into
those files, and a big trace's second half is parsed by a forked child of the worker
meanwhile (:mod:`visualdl.kinds.profile.forked`). The server never holds the trace's JSON
or the parse's temporaries either, so its memory stays lower. The server can start a worker
before it finds a trace (``--standby``: imports done, then told its job), so that a trace
listed at start-up is parsed at once (see :func:`visualdl.kinds.profile.warm.prefetch`).

The worker also computes the overview after saying the model is ready (the server answers
the first timeline window meanwhile); a restarted server reads that too.

When the worker cannot run (no interpreter to start, killed), the server parses in its own
process as before. ``VISUALDL_PROFILE_WORKER=0`` turns the worker off.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import mmap
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zlib
from pathlib import Path
from typing import Any

from visualdl.kinds.profile import store
from visualdl.kinds.profile.parse import TraceError

__all__ = ["MIN_BYTES", "enabled", "worth", "build", "start", "discard", "standby",
           "release_standby", "main"]

#: JSON bytes from which a trace is parsed in the worker (about 100,000 events); smaller
#: ones parse in less time than a process takes to start.
MIN_BYTES = int(os.environ.get("VISUALDL_PROFILE_WORKER_BYTES") or 16 << 20)
#: JSON bytes from which the worker parses the second half of the events in a forked child
#: at the same time (:mod:`visualdl.kinds.profile.forked`); 0 turns that off.
FORK_BYTES = int(os.environ.get("VISUALDL_PROFILE_FORK_BYTES") or 16 << 20)
#: The worker allocates and drops a few hundred MB of arrays in a second: glibc's default
#: gives each big array fresh pages from the kernel and hands them back when freed, and the
#: page faults alone took longer than the model's sorting and nesting (0.4 vs 0.2 s for a
#: million events). The worker lives seconds, so it keeps what it got. Ignored by other C
#: libraries; a value the user set wins.
_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 40),
           "MALLOC_TOP_PAD_": str(64 << 20), "OPENBLAS_NUM_THREADS": "1"}
_GZIP_RATIO = 8  # a gzip'd trace's JSON, estimated from its compressed size
_BAD_TRACE = 3   # the worker's exit status for a trace that cannot be read (message: stdout)


def enabled() -> bool:
    return os.environ.get("VISUALDL_PROFILE_WORKER", "").strip().lower() not in (
        "0", "false", "no", "off") and bool(sys.executable)


def worth(path: str | None, stored: bytes | None = None) -> bool:
    """Whether the trace (a file of its own at ``path``, or ``stored`` gzip'd bytes from a
    record file) is big enough for the worker."""
    if not enabled():
        return False
    try:
        if stored is not None:
            size = len(stored) * _GZIP_RATIO
        else:
            size = os.path.getsize(path)
            if path.endswith(".gz"):
                size *= _GZIP_RATIO
    except OSError:
        return False
    return size >= MIN_BYTES


def build(ident: dict[str, Any] | None, path: str | None, stored: bytes | None = None,
          source: str = "pytorch"):
    """The trace's model, built by the worker: from the file at ``path`` or from a record
    file's ``stored`` (gzip'd) bytes. Raises :class:`TraceError` for a trace that cannot be
    read; returns None when the worker did not run or failed otherwise (the caller then
    parses in its own process). A worker already started for ``ident`` (:func:`start`) is
    waited for, not started again.

    The worker says "ready" once the model's files are written and goes on computing the
    overview (``overview.json`` beside them, see :func:`store.overview`): the first
    timeline window does not wait for it, and the overview is not computed under the
    server's lock."""
    job = start(ident, path, stored, source)
    return None if job is None else job.result()


def start(ident: dict[str, Any] | None, path: str | None, stored: bytes | None = None,
          source: str = "pytorch") -> "_Job | None":
    """Start the worker for this trace, unless one runs for it already (then that one);
    None when it cannot start. :func:`build` (with the same ``ident``) collects it."""
    key = json.dumps(ident, sort_keys=True)
    with _jobs_lock:
        job = _jobs.get(key)
        if job is None:
            job = _Job.spawn(ident, path, stored, source)
            if job is not None:
                _jobs[key] = job
    return job


def discard(ident: dict[str, Any] | None) -> None:
    """Forget the worker started for ``ident``, whose model was found saved meanwhile (it
    is reaped once it ends)."""
    with _jobs_lock:
        job = _jobs.get(json.dumps(ident, sort_keys=True))
    if job is not None:  # collected (then reaped) aside, as a request would
        threading.Thread(target=job.settle, daemon=True,
                         name="visualdl-profile-worker-settle").start()


_jobs: dict[str, "_Job"] = {}
_jobs_lock = threading.Lock()
_standby: list[subprocess.Popen] = []  # at most one
_standby_lock = threading.Lock()


def standby() -> bool:
    """Start a worker that imports what it needs and then waits for a job (the next
    :func:`start` hands it its trace): the server starts one while its first load looks
    for profiles, so that a trace found then is parsed a tenth of a second sooner (no
    interpreter start and imports after it is found). False when none was started."""
    if not enabled():
        return False
    with _standby_lock:
        if _standby:
            return True
        try:
            _standby.append(subprocess.Popen(
                [sys.executable, "-m", "visualdl.kinds.profile.worker", "--standby"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env=_env()))
        except OSError:
            return False
    return True


def release_standby() -> None:
    """End the waiting worker, if any (no profile to parse after all)."""
    proc = _take_standby()
    if proc is not None:
        try:
            proc.stdin.close()
        except OSError:
            pass
        threading.Thread(target=_reap, args=(proc, None), daemon=True,
                         name="visualdl-profile-worker-wait").start()


def _take_standby() -> subprocess.Popen | None:
    with _standby_lock:
        while _standby:
            proc = _standby.pop()
            if proc.poll() is None:
                return proc
            _reap(proc, None)
    return None


class _Job:
    """One worker process and what it said, read once (by whichever caller comes first)."""

    def __init__(self, key: str, ident: dict[str, Any] | None, folder: Path,
                 private: Path | None, proc: subprocess.Popen) -> None:
        self.key, self.ident, self.folder, self.private, self.proc = (key, ident, folder,
                                                                      private, proc)
        self._lock = threading.Lock()
        self._done = False
        self._model = None
        self._error: TraceError | None = None

    @classmethod
    def spawn(cls, ident: dict[str, Any] | None, path: str | None, stored: bytes | None,
              source: str) -> "_Job | None":
        folder = store.folder_for(ident)
        if folder is not None:
            try:
                folder.parent.mkdir(parents=True, exist_ok=True)
                if not os.access(folder.parent, os.W_OK):
                    folder = None
            except OSError:
                folder = None
        private = None
        if folder is None:  # caching off (or the cache folder read-only): a folder of our
            # own, removed once the worker is done
            try:
                private = Path(tempfile.mkdtemp(prefix="visualdl-profile-"))
            except OSError:
                return None
            folder = private / "model"
        order = {"out": str(folder), "identity": ident, "source": source,
                 "trace": path if path else "-"}
        proc = _take_standby()
        if proc is None:
            cmd = [sys.executable, "-m", "visualdl.kinds.profile.worker", "--out",
                   str(folder), "--identity", json.dumps(ident), "--source", source,
                   order["trace"]]
            try:
                proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if stored is not None else
                                        subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=_env())
            except OSError:  # no interpreter to start
                if private is not None:
                    shutil.rmtree(private, ignore_errors=True)
                return None
            said = b""
        else:  # the standby worker is told its job first
            said = json.dumps(order).encode() + b"\n"
        job = cls(json.dumps(ident, sort_keys=True), ident, folder, private, proc)
        if said or stored is not None:  # (a big blob: written by a thread, the caller
            # goes on)
            threading.Thread(target=job._feed, args=(said, stored), daemon=True,
                             name="visualdl-profile-worker-feed").start()
        return job

    def _feed(self, said: bytes, stored: bytes | None) -> None:
        try:
            with self.proc.stdin:
                self.proc.stdin.write(said)
                if stored is not None:
                    self.proc.stdin.write(stored)
        except OSError:  # it died before reading its input: result() says so
            pass

    def result(self):
        """The model the worker wrote (None when it failed); raises :class:`TraceError`
        when the trace cannot be read."""
        with self._lock:
            if not self._done:
                try:
                    self._model = self._collect()
                except TraceError as err:
                    self._error = err
                finally:
                    self._done = True
                    with _jobs_lock:
                        if _jobs.get(self.key) is self:
                            del _jobs[self.key]
                    threading.Thread(target=_reap, args=(self.proc, self.private),
                                     daemon=True, name="visualdl-profile-worker-wait").start()
        if self._error is not None:
            raise self._error
        return self._model

    def settle(self) -> None:
        """:meth:`result`, for nobody."""
        try:
            self.result()
        except TraceError:
            pass

    def _collect(self):
        proc = self.proc
        try:
            said = proc.stdout.readline()
        except OSError:
            return None
        if said.strip() != b"ready":
            said += proc.stdout.read()
            if proc.wait() == _BAD_TRACE:
                raise TraceError(said.decode("utf-8", "replace").strip()
                                 or "the trace cannot be read")
            return None
        model = store.read_folder(self.folder, self.ident)
        if model is not None:
            model.worker = proc
        return model


def _reap(proc: subprocess.Popen, private: Path | None) -> None:
    try:
        proc.stdout.read()
        proc.stdout.close()
        proc.wait()
    finally:
        if private is not None:  # mapped files stay readable once unlinked (POSIX)
            shutil.rmtree(private, ignore_errors=True)


def _env() -> dict[str, str]:
    """The server's environment, with this very ``visualdl`` first on the path (a server
    started from a checkout must not have its worker import an installed copy)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))  # visualdl/kinds/profile/worker.py -> the checkout
    path = os.environ.get("PYTHONPATH")
    return {**_MALLOC, **os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}


def _mapped(path: str) -> mmap.mmap | None:
    """A plain (not gzip'd, not empty) trace file mapped into memory: parsed without
    reading a copy of it first (a tenth of a second for 150 MB). None otherwise: the
    loader reads it, and says what is wrong with it."""
    try:
        with open(path, "rb") as f:
            if f.read(2) in (b"", b"\x1f\x8b"):
                return None
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


def main(argv: list[str] | None = None) -> int:
    """Parse one trace (a path, or ``-``: gzip'd bytes on stdin) and write its model.

    ``--standby``: import everything first, then read the job from stdin (one JSON line:
    ``out``, ``identity``, ``source``, ``trace``; a stored trace's bytes follow it), or
    exit at once when stdin closes without one."""
    parser = argparse.ArgumentParser(prog="python -m visualdl.kinds.profile.worker",
                                     description=main.__doc__)
    parser.add_argument("--standby", action="store_true")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--identity", help="the model's identity (JSON)")
    parser.add_argument("--source", default="pytorch")
    parser.add_argument("trace", nargs="?")
    args = parser.parse_args(argv)
    # a process that lives seconds: the collector's full passes over a million new objects
    # (run while the model is built) cost a tenth of a second and would free nothing
    gc.disable()
    from visualdl.kinds.profile.model import TraceModel
    from visualdl.kinds.profile.parse import parse_trace
    from visualdl.sources import torchtrace

    tmp = None
    if args.standby:
        try:
            job = json.loads(sys.stdin.buffer.readline() or b"null")
            if job is None:
                return 0
            args.out, args.source, args.trace = Path(job["out"]), job["source"], job["trace"]
            args.identity = json.dumps(job["identity"])
        except (ValueError, KeyError, TypeError):
            return 1
    elif args.out is None or args.identity is None or args.trace is None:
        parser.error("--out, --identity and the trace are required (or --standby)")
    try:
        if args.trace == "-":
            try:
                raw = gzip.decompress(sys.stdin.buffer.read())
            except (OSError, EOFError, zlib.error) as exc:
                raise TraceError(f"the stored trace is not valid gzip ({exc})") from None
        else:
            raw = _mapped(args.trace) or torchtrace.load(args.trace).json
        tmp = store.begin(args.out)  # the model is built in its files
        columns = parse_trace(raw, FORK_BYTES or None,
                              store.args_file(tmp) if tmp is not None else None)
    except ValueError as err:  # TraceError, and the loader's empty file or bad gzip
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        print(str(err))
        return _BAD_TRACE
    del raw
    model = TraceModel(columns, args.source,
                       new=store.columns_in(tmp) if tmp is not None else None)
    if not store.write_folder(args.out, json.loads(args.identity), model, tmp):
        return 1
    print("ready", flush=True)
    from visualdl.kinds.profile import views

    store.write_overview(args.out, views.overview(model))
    store.prune()  # (the models of traces that are gone: after the work, off the server)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
