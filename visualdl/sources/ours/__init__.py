"""Our own record files (``vdlrecords.*.log``, and segment streams in object storage): the
format :mod:`visualdl.format` describes and :class:`visualdl.LogWriter` writes.

VisualDL 2.x names its files the same way, so a file is told ours by its first bytes: a
record framed with our CRCs (VisualDL 2.x writes none; :mod:`visualdl.sources.vdl2` is asked
next).
"""

from __future__ import annotations

from visualdl.format.framing import HEADER_SIZE, length_at
from visualdl.format.names import RECORD_MARK
from visualdl.sources.base import Source
from visualdl.sources.ours.records import RecordFile

__all__ = ["SOURCE", "RecordsSource", "RecordFile"]


class RecordsSource(Source):
    name = "visualdl"
    label = "visualdl record file"
    cacheable = True
    two_pass = True
    head_bytes = HEADER_SIZE

    def claims(self, name: str) -> bool:
        return RECORD_MARK in name

    def accepts(self, head: bytes) -> bool | str | None:
        if len(head) < HEADER_SIZE:
            return None  # too short to tell: wait for more
        return True if length_at(head) is not None else "bad framing at offset 0"

    def open(self, path: str) -> RecordFile:
        return RecordFile(self, path)


SOURCE = RecordsSource()
