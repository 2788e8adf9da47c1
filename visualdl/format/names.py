"""How record files and object-storage segments are named: the one place the writer, the
reader, run discovery and the storage listing learn it from.

A record file is ``vdlrecords.<unix seconds>.<host>.<pid>[.rank<N>][suffix].log`` (a worker of
a data-parallel run names its rank, so that each rank's file is its own); in object storage a
writer's records are a stream of immutable segments,
``vdlrecords.<start ns>.<host>.<pid>.<uuid8>[suffix].seg<NNNNNN>``, read in segment order.
"""

from __future__ import annotations

import os
import re
import socket
import time
import uuid

__all__ = ["RECORD_MARK", "SEGMENT_RE", "rank_suffix", "segment_key", "segment_name",
           "record_file_name", "stream_name", "file_start"]

#: The part of a file name that marks one of our record files (VisualDL 2.x uses it too).
RECORD_MARK = "vdlrecords"
#: A segment's name: the stream (one writer) and the segment number.
SEGMENT_RE = re.compile(r"^(?P<stream>.*vdlrecords\..*)\.seg(?P<n>\d+)$")
_START_RE = re.compile(rf"^{RECORD_MARK}\.(\d+)\.")


def segment_key(name: str) -> tuple[str, int] | None:
    """``(stream, number)`` of a segment's name or URL, None for any other file."""
    match = SEGMENT_RE.match(name)
    return (match.group("stream"), int(match.group("n"))) if match else None


def file_start(name: str) -> float | None:
    """When the writer of a record file or segment stream (name, path or URL) started, in
    unix seconds (a stream's nanoseconds converted); None for any other name."""
    match = _START_RE.match(_base(name))
    if match is None:
        return None
    start = int(match.group(1))
    return start / 1e9 if start > 10**12 else float(start)


def _base(name: str) -> str:
    return name.rsplit("/", 1)[-1].rsplit(os.sep, 1)[-1]


def segment_name(stream: str, n: int) -> str:
    """The name (or URL) of segment ``n`` of ``stream``."""
    return f"{stream}.seg{n:06d}"


def rank_suffix(rank: int) -> str:
    """The part of a ranked writer's file name that names its rank."""
    return f".rank{rank}"


def _host() -> str:
    return socket.gethostname().replace(os.sep, "_").replace("/", "_")


def record_file_name(suffix: str = "") -> str:
    """A new record file's name for this process."""
    return f"{RECORD_MARK}.{int(time.time())}.{_host()}.{os.getpid()}{suffix}.log"


def stream_name(suffix: str = "") -> str:
    """A new segment stream's name for this process (unique across machines: the start in
    nanoseconds, the host, the pid and 8 random hex digits)."""
    return (f"{RECORD_MARK}.{time.time_ns()}.{_host()}.{os.getpid()}"
            f".{uuid.uuid4().hex[:8]}{suffix}")
