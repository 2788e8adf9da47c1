"""``on_trace_ready`` handlers: where a finished window's trace goes.

``export_chrome_tracing(dir)`` writes ``<worker>.<ms>.vf.trace.json`` (the naming of
``torch.profiler.tensorboard_trace_handler``, with ``vf`` for the framework), which Perfetto
and chrome://tracing open; ``export_visualdl(writer_or_logdir)`` stores it as the profile
kind of a run, beside its curves, for the dashboard.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import time
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .profiler import Profiler


def default_worker_name() -> str:
    return f"{socket.gethostname()}_{os.getpid()}"


def write_chrome_trace(trace: dict[str, Any], path: str) -> str:
    """Write ``trace`` as JSON (gzip-compressed when ``path`` ends in .gz); returns path."""
    data = json.dumps(trace, separators=(",", ":")).encode("utf-8")
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(gzip.compress(data, compresslevel=6) if path.endswith(".gz") else data)
    os.replace(tmp, path)  # a viewer polling the directory never sees half a file
    return path


def export_chrome_tracing(dir_name: str | os.PathLike, worker_name: str | None = None,
                          use_gzip: bool = False) -> Callable[[Profiler], str]:
    """A handler writing each window to ``dir_name/<worker>.<epoch ms>.vf.trace.json[.gz]``;
    ``worker_name`` defaults to ``<hostname>_<pid>``. The path written is also kept in
    ``prof.last_trace_path``."""
    if not isinstance(dir_name, (str, os.PathLike)) or not os.fspath(dir_name):
        raise ValueError(f"export_chrome_tracing: dir_name must be a directory path, got "
                         f"{dir_name!r}")
    directory = os.fspath(dir_name)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise ValueError(f"export_chrome_tracing: dir_name {directory!r} is a file, not a "
                         "directory")

    def handler(prof: Profiler) -> str:
        worker = worker_name or default_worker_name()
        suffix = ".vf.trace.json" + (".gz" if use_gzip else "")
        stamp = time.time_ns() // 1_000_000
        while os.path.exists(os.path.join(directory, f"{worker}.{stamp}{suffix}")):
            stamp += 1  # two windows within a millisecond: never overwrite the first
        path = write_chrome_trace(prof.trace(worker=worker),
                                  os.path.join(directory, f"{worker}.{stamp}{suffix}"))
        prof.last_trace_path = path
        return path

    return handler


def export_visualdl(writer_or_logdir: Any, tag: str = "worker0") -> Callable[[Profiler], None]:
    """A handler storing each window as the profile kind: ``writer.add_profile(tag, trace,
    step=first profiled step, end_step=last)``. Give a ``LogWriter`` (kept open, e.g. the
    one logging the run's scalars) or a logdir (a writer is opened and closed per window)."""
    from visualdl.writer.log_writer import LogWriter

    if not isinstance(writer_or_logdir, (LogWriter, str, os.PathLike)):
        raise TypeError("export_visualdl: writer_or_logdir must be a visualdl.LogWriter or a "
                        f"logdir path, got {type(writer_or_logdir).__name__}")
    if not isinstance(tag, str) or not tag:
        raise ValueError(f"export_visualdl: tag must be a non-empty str, got {tag!r}")

    def handler(prof: Profiler) -> None:
        first, last = prof.profiled_steps or (prof.step_num, prof.step_num)
        trace = prof.trace(worker=tag)
        if isinstance(writer_or_logdir, LogWriter):
            writer_or_logdir.add_profile(tag, trace, first, end_step=last)
            return
        with LogWriter(logdir=os.fspath(writer_or_logdir)) as writer:
            writer.add_profile(tag, trace, first, end_step=last)

    return handler
