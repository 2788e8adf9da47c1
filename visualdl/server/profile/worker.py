"""Big traces are parsed in a process of their own, not in the server's.

Parsing a trace of a million events holds the interpreter lock for more than a second
(msgspec decoding, then the columns built from Python objects). In the server's process
that starves every other request meanwhile, the page's own scripts and the first timeline
window included: the tab opened while the trace is being parsed loaded a second later. So a
trace bigger than ``MIN_BYTES`` of JSON is parsed, and its model built, by ``python -m
visualdl.server.profile.worker``; it writes the model as the disk cache's files
(:mod:`visualdl.server.profile.store`: into the cache folder, or a private temporary one
with ``--no-cache``), and the server memory-maps them. The server never holds the trace's
JSON or the parse's temporaries either, so its memory stays lower.

The worker also computes the overview after saying the model is ready (the server answers
the first timeline window meanwhile); a restarted server reads that too.

When the worker cannot run (no interpreter to start, killed), the server parses in its own
process as before. ``VISUALDL_PROFILE_WORKER=0`` turns the worker off.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zlib
from pathlib import Path
from typing import Any

from visualdl.server.profile import store
from visualdl.server.profile.parse import TraceError

__all__ = ["MIN_BYTES", "enabled", "worth", "build", "main"]

#: JSON bytes from which a trace is parsed in the worker (about 100,000 events); smaller
#: ones parse in less time than a process takes to start.
MIN_BYTES = int(os.environ.get("VISUALDL_PROFILE_WORKER_BYTES") or 16 << 20)
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
    parses in its own process).

    The worker says "ready" once the model's files are written and goes on computing the
    overview (``overview.json`` beside them, see :func:`store.overview`): the first
    timeline window does not wait for it, and the overview is not computed under the
    server's lock."""
    folder = store.folder_for(ident)
    if folder is not None:
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            if not os.access(folder.parent, os.W_OK):
                folder = None
        except OSError:
            folder = None
    private = None
    if folder is None:  # caching off (or the cache folder read-only): a folder of our own,
        # removed once the worker is done
        try:
            private = Path(tempfile.mkdtemp(prefix="visualdl-profile-"))
        except OSError:
            return None
        folder = private / "model"
    cmd = [sys.executable, "-m", "visualdl.server.profile.worker", "--out", str(folder),
           "--identity", json.dumps(ident), "--source", source, path if path else "-"]
    proc = None
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if stored is not None else
                                subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=_env())
        if stored is not None:
            with proc.stdin:
                proc.stdin.write(stored)
        said = proc.stdout.readline()
        if said.strip() != b"ready":
            said += proc.stdout.read()
            if proc.wait() == _BAD_TRACE:
                raise TraceError(said.decode("utf-8", "replace").strip()
                                 or "the trace cannot be read")
            return None
        model = store.read_folder(folder, ident)
        if model is not None:
            model.worker = proc
        return model
    except OSError:  # no interpreter to start, or it died before reading its input
        return None
    finally:
        if proc is not None:  # reaped (and the private folder removed) once it is done
            threading.Thread(target=_reap, args=(proc, private), daemon=True,
                             name="visualdl-profile-worker-wait").start()
        elif private is not None:
            shutil.rmtree(private, ignore_errors=True)


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
    import visualdl

    root = os.path.dirname(os.path.dirname(os.path.abspath(visualdl.__file__)))
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}


def main(argv: list[str] | None = None) -> int:
    """Parse one trace (a path, or ``-``: gzip'd bytes on stdin) and write its model."""
    parser = argparse.ArgumentParser(prog="python -m visualdl.server.profile.worker",
                                     description=main.__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--identity", required=True, help="the model's identity (JSON)")
    parser.add_argument("--source", default="pytorch")
    parser.add_argument("trace")
    args = parser.parse_args(argv)
    from visualdl.server.profile.model import TraceModel
    from visualdl.server.profile.parse import parse_trace

    try:
        if args.trace == "-":
            try:
                raw = gzip.decompress(sys.stdin.buffer.read())
            except (OSError, EOFError, zlib.error) as exc:
                raise TraceError(f"the stored trace is not valid gzip ({exc})") from None
        else:
            from visualdl.sources import torchtrace

            raw = torchtrace.load(args.trace).json
        model = TraceModel(parse_trace(raw), args.source)
    except ValueError as err:  # TraceError, and the loader's empty file or bad gzip
        print(str(err))
        return _BAD_TRACE
    del raw
    if not store.write_folder(args.out, json.loads(args.identity), model):
        return 1
    print("ready", flush=True)
    from visualdl.server.profile import views

    store.write_overview(args.out, views.overview(model))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
