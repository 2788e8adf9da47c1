"""Big traces are parsed in a process of their own, not in the server's.

Parsing a big trace holds the interpreter lock for long stretches (msgspec decoding, then
the columns built from Python objects): in the server's process every other request, the
page's own scripts included, would wait meanwhile. So a trace of more than ``MIN_BYTES`` of
JSON is parsed, and its model built, by ``python -m visualdl.kinds.profile.runner``; it
writes the model as the disk cache's files (:mod:`visualdl.kinds.profile.store`: into the
cache folder, or a private temporary one with ``--no-cache``), and the server memory-maps
them. The server never holds the trace's JSON or the parse's temporaries either. Being
single-threaded, the runner can fork: with two CPUs, a child parses the second half of the
events meanwhile (:mod:`visualdl.kinds.profile.forked`).

When the runner cannot run (no interpreter to start, killed), the caller parses in its own
process (:func:`visualdl.kinds.profile.build.build_model`).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from visualdl.kinds.profile import store
from visualdl.kinds.profile.parse import TraceError

if TYPE_CHECKING:
    from visualdl.kinds.profile.build import Source
    from visualdl.kinds.profile.model import TraceModel

__all__ = ["MIN_BYTES", "worth", "run", "main"]

#: JSON bytes from which a trace is parsed by the runner; smaller ones parse in less time
#: than a process takes to start.
MIN_BYTES = 16 << 20
_GZIP_RATIO = 8  # a gzip'd trace's JSON, estimated from its compressed size
_BAD_TRACE = 3   # the runner's exit status for a trace that cannot be read (message: stdout)


def worth(source: "Source") -> bool:
    """Whether the trace is big enough for the runner."""
    try:
        if source.path is None:
            data = source.data or b""
            size = len(data) * (_GZIP_RATIO if data[:2] == b"\x1f\x8b" else 1)
        else:
            size = os.path.getsize(source.path)
            if source.path.endswith(".gz"):
                size *= _GZIP_RATIO
    except OSError:
        return False
    return size >= MIN_BYTES and bool(sys.executable)


def run(source: "Source") -> "TraceModel | None":
    """The model of ``source``, built by the runner (waited for). Raises
    :class:`TraceError` for a trace that cannot be read; None when the runner did not run
    or failed otherwise."""
    folder = _writable(store.folder_for(source.ident))
    private = None
    if folder is None:  # caching off (or the cache folder read-only): a folder of our own,
        try:            # removed once the model is mapped
            private = Path(tempfile.mkdtemp(prefix="visualdl-profile-"))
        except OSError:
            return None
        folder = private / "model"
    cmd = [sys.executable, "-m", "visualdl.kinds.profile.runner", "--out", str(folder),
           "--identity", json.dumps(source.ident), "--kind", source.kind,
           source.path if source.path is not None else "-"]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL if source.path else
                                subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=_env())
    except OSError:  # no interpreter to start
        proc = None
    try:
        return None if proc is None else _collect(proc, source, folder)
    finally:
        if private is not None:  # mapped files stay readable once unlinked (POSIX)
            shutil.rmtree(private, ignore_errors=True)


def _collect(proc: subprocess.Popen, source: "Source", folder: Path) -> "TraceModel | None":
    try:
        if not source.path:  # (read whole by the runner before it says anything)
            with proc.stdin:
                proc.stdin.write(source.data or b"")
        said = proc.stdout.readline()
    except OSError:  # it died before reading its input
        said = b""
    if said == b"ready\n":  # the model is written; the runner's exit (and its forked
        # child's) is not waited for
        threading.Thread(target=_reap, args=(proc,), daemon=True,
                         name="visualdl-profile-runner-wait").start()
        return store.read_folder(folder, source.ident)
    said += _reap(proc)
    if proc.returncode == _BAD_TRACE:
        raise TraceError(said.decode("utf-8", "replace").strip() or "the trace cannot be read")
    return None


def _reap(proc: subprocess.Popen) -> bytes:
    """What the runner says until it ends, once it has."""
    with proc.stdout:
        rest = proc.stdout.read()
    proc.wait()
    return rest


def _writable(folder: Path | None) -> Path | None:
    if folder is None:
        return None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder.parent, os.W_OK) else None


def _env() -> dict[str, str]:
    """The server's environment, with this very ``visualdl`` first on the path (a server
    started from a checkout must not have its runner import an installed copy)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))  # visualdl/kinds/profile/runner.py -> the checkout
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}


def main(argv: list[str] | None = None) -> int:
    """Parse one trace (a path, or ``-``: its bytes on stdin) and write its model into
    ``--out``."""
    parser = argparse.ArgumentParser(prog="python -m visualdl.kinds.profile.runner",
                                     description=main.__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--identity", required=True, help="the model's identity (JSON)")
    parser.add_argument("--kind", default="pytorch")
    parser.add_argument("trace")
    args = parser.parse_args(argv)
    # a short-lived process: the collector's passes over the parse's objects free nothing
    gc.disable()
    from visualdl.kinds.profile import forked, parse
    from visualdl.kinds.profile.build import Source, parse_model

    ident = json.loads(args.identity)
    if args.trace == "-":
        source = Source(ident, data=sys.stdin.buffer.read(), kind=args.kind)
    else:
        source = Source(ident, args.trace, kind=args.kind)
    try:
        with parse.halves_by(forked.start):  # (without fork or a second CPU: here, in turn)
            model = parse_model(source)
    except TraceError as err:
        print(str(err))
        return _BAD_TRACE
    if not store.write_folder(args.out, ident, model):
        return 1
    print("ready", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
