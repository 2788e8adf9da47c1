"""PaddlePaddle static programs (``*.pdmodel``, a serialized ``ProgramDesc``), shown as
model graphs: VisualDL 2.x shows one found in a logdir, and so do we (and with ``--model``).

A program is read into the graph JSON VisualDL's ``add_graph`` writes (:mod:`.program`) and
converted to ONNX as those graphs are (:func:`visualdl.sources.vdl2.graph.doc_to_onnx`);
each file is one ``graph`` blob of its run, tagged with its file name.
"""

from __future__ import annotations

from typing import Any

from visualdl.sources.base import Source
from visualdl.sources.vdl2.graph import GraphFile, doc_to_onnx

__all__ = ["SOURCE", "ProgramSource", "to_onnx", "PDMODEL_SUFFIX"]

#: Paddle's static program files.
PDMODEL_SUFFIX = ".pdmodel"
PRODUCER = "PaddlePaddle program (.pdmodel)"


def _document(data: bytes) -> dict[str, Any]:
    from visualdl.sources.paddle.program import program_doc

    return program_doc(data)


def to_onnx(data: bytes) -> bytes:
    """The serialized ONNX ``ModelProto`` of a Paddle program's bytes; ValueError saying what
    is wrong when they are not one."""
    return doc_to_onnx(_document(data), producer=PRODUCER)


class ProgramFile(GraphFile):
    document = staticmethod(_document)  # type: ignore[assignment]
    producer = PRODUCER
    origin = "PaddlePaddle"

    def tag(self, name: str) -> str:
        return name

    def wall_time(self, name: str, stat: Any) -> float:
        return stat.mtime


class ProgramSource(Source):
    name = "paddle"
    label = "Paddle program"
    whole = True

    def claims(self, name: str) -> bool:
        return name.endswith(PDMODEL_SUFFIX)

    def open(self, path: str) -> ProgramFile:
        return ProgramFile(self, path)


SOURCE = ProgramSource()
