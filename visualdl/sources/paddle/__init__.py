"""PaddlePaddle static programs (a serialized ``ProgramDesc``), shown as model graphs:
VisualDL 2.x shows one found in a logdir, and so do we (and with ``--model``). Paddle names
them ``__model__`` (fluid's ``save_inference_model``, and ``paddle.distributed.io``'s) or
``*.pdmodel`` (``inference.pdmodel`` of ``paddle.jit.save``, ``model.pdmodel`` of
``paddle.static.save_inference_model``); a file of such a name is told by its first bytes.

A program is read into the graph JSON VisualDL's ``add_graph`` writes (:mod:`.program`) and
converted to ONNX as those graphs are (:func:`visualdl.sources.vdl2.graph.doc_to_onnx`);
each file is one ``graph`` blob of its run, tagged with its file name.
"""

from __future__ import annotations

import os
from typing import Any

from visualdl.sources.base import Source
from visualdl.sources.vdl2.graph import GraphFile, doc_to_onnx

__all__ = ["SOURCE", "ProgramSource", "to_onnx", "PDMODEL_SUFFIX", "PROGRAM_NAMES",
           "is_program_name", "looks_like_program"]

#: Paddle's static program files.
PDMODEL_SUFFIX = ".pdmodel"
#: What Paddle calls them, for messages.
PROGRAM_NAMES = "__model__, *.pdmodel"
_FLUID_NAME = "__model__"
_HEAD = 16  # bytes that tell a program: the first block's field keys


def is_program_name(name: str) -> bool:
    """Whether Paddle names its programs so (a base name or a path)."""
    base = os.path.basename(name.replace("\\", "/"))
    return base.endswith(PDMODEL_SUFFIX) or base == _FLUID_NAME


def looks_like_program(head: bytes) -> bool | str | None:
    """Whether a file that starts with ``head`` is a ``ProgramDesc``: its first field is a
    block (field 1, length-delimited), whose first field is its index (field 1, a
    varint), as Paddle's C++ serializer writes them. None when ``head`` is too short to
    tell; why not otherwise."""
    if not head:
        return None
    if head[0] != 0x0A:
        return "its first bytes are not a ProgramDesc's block"
    pos = 1
    while pos < len(head) and head[pos] & 0x80:  # the block's length
        pos += 1
    if pos + 1 >= len(head):
        return None if len(head) < _HEAD else "its first block has no length"
    return True if head[pos + 1] == 0x08 else "its first block does not start with its index"


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
    sniffs = True  # ``__model__`` is a common name: its first bytes decide
    head_bytes = _HEAD

    def claims(self, name: str) -> bool:
        return is_program_name(name)

    def accepts(self, head: bytes) -> bool | str | None:
        return looks_like_program(head)

    def open(self, path: str) -> ProgramFile:
        return ProgramFile(self, path)


SOURCE = ProgramSource()
