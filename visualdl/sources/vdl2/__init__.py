"""VisualDL 2.x logs (PaddlePaddle's ``vdlrecords.*.log``), read with our own schema and code.

VisualDL 2.x names its files as we do but frames them differently (a length and no CRC, see
:mod:`.framing`), so a file is told apart by its first bytes, not its name: ``LogReader``
checks for our framing first and hands a file here when :func:`sniff` says so.
``vdl2_record.proto`` declares VisualDL's ``Record`` with its field numbers, and
:mod:`.decode` turns each record into the entries our own records give the reader. Every
file of a run is read and merged (VisualDL itself shows only the newest).

VisualDL's model graphs (``vdlgraph.*.log``, written by ``add_graph`` from a Paddle program)
are a JSON description of Paddle operators: :mod:`.graph` indexes each file as a ``graph``
blob of its run (tag ``vdlgraph``) and converts it to ONNX when the graph view opens it.
"""

from __future__ import annotations

from typing import Any

from visualdl.format.record_pb2 import FileHeader
from visualdl.sources.vdl2.decode import FileDecoder
from visualdl.sources.vdl2 import graph
from visualdl.sources.vdl2.framing import looks_like_vdl2, read_payload_at, scan_file, sniff

__all__ = ["FileDecoder", "graph", "looks_like_vdl2", "sniff", "scan_file", "adopt", "is_vdl2",
           "load"]

#: The writer_version given to a VisualDL 2.x file's header (its files have none).
WRITER = "VisualDL 2.x"


def adopt(state: Any) -> None:
    """Mark a reader's ``FileState`` as a VisualDL 2.x file: its own decoder, and a header
    (VisualDL writes none) so the reader takes every record as data."""
    state.decoder = FileDecoder()
    state.header = FileHeader(writer_version=WRITER)


def is_vdl2(state: Any) -> bool:
    return isinstance(getattr(state, "decoder", None), FileDecoder)


def load(state: Any, ref: Any, field: str, payload: bytes | None = None) -> Any:
    """One blob's message (``Image``, ``Audio``, ``Embedding``), read back by offset (or
    decoded from its record's ``payload``, when read already from object storage)."""
    if payload is None:
        payload = read_payload_at(ref.path, ref.offset)
    msg = state.decoder.entry_at(payload, field, ref.tag, ref.step)
    if msg is None:
        raise ValueError(f"{ref.path}: no {ref.kind} {ref.tag!r} at offset {ref.offset}")
    return msg
