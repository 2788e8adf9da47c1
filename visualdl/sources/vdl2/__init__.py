"""VisualDL 2.x logs (PaddlePaddle's ``vdlrecords.*.log``), read with our own schema and code.

VisualDL 2.x names its files as we do but frames them differently (a length and no CRC, see
:mod:`.framing`), so a file is told apart by its first bytes, not its name: the registry
asks our own source first, then this one (:func:`.framing.sniff`). ``vdl2_record.proto``
declares VisualDL's ``Record`` with its field numbers, and :mod:`.decode` turns each record
into the entries our own records give the reader. Every file of a run is read and merged
(VisualDL itself shows only the newest).

VisualDL's model graphs (``vdlgraph.*.log``, written by ``add_graph`` from a Paddle program)
are a source of their own: :mod:`.graph`.
"""

from __future__ import annotations

from visualdl.format.names import RECORD_MARK
from visualdl.sources.base import Source
from visualdl.sources.vdl2.framing import SNIFF_SIZE, sniff

__all__ = ["SOURCE", "Vdl2Source", "WRITER"]

#: The writer_version given to a VisualDL 2.x file's header (its files have none).
WRITER = "VisualDL 2.x"


class Vdl2Source(Source):
    name = "vdl2"
    label = "VisualDL 2.x log"
    cacheable = True
    head_bytes = SNIFF_SIZE

    def claims(self, name: str) -> bool:
        return RECORD_MARK in name

    def accepts(self, head: bytes) -> bool | str | None:
        return True if sniff(head) else "no VisualDL 2.x record at its start"

    def open(self, path: str):  # noqa: ANN201 - a Vdl2File
        from visualdl.sources.vdl2.records import Vdl2File

        return Vdl2File(self, path)


SOURCE = Vdl2Source()
