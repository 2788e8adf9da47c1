"""PaddlePaddle static programs, shown as model graphs: VisualDL 2.x shows one found in a
logdir, and so do we (and with ``--model``). Paddle < 3 saves a serialized ``ProgramDesc``
named ``__model__`` (fluid's ``save_inference_model``, and ``paddle.distributed.io``'s) or
``*.pdmodel`` (``inference.pdmodel`` of ``paddle.jit.save``, ``model.pdmodel`` of
``paddle.static.save_inference_model``); Paddle >= 3.0 saves its new IR (PIR) as JSON under
the same stems (``inference.json``, ``model.json``, any ``<stem>.json`` beside its
``<stem>.pdiparams``). A file of such a name is told by its first bytes: a ``ProgramDesc``'s
first block, or ``{"base_code":{"magic":"pir"``. Logdirs hold many other JSON files (traces,
settings, metrics), so a ``*.json`` is claimed only tentatively: it is ours once its first
bytes say so, and nothing is reported of the others.

A program is read into the graph JSON VisualDL's ``add_graph`` writes (:mod:`.program` for
the protobuf, :mod:`.pir_json` for PIR) and converted to ONNX as those graphs are
(:func:`visualdl.sources.vdl2.graph.doc_to_onnx`); each file is one ``graph`` blob of its
run, tagged with its file name.
"""

from __future__ import annotations

import os
import re
from typing import Any

from visualdl.sources.base import Source
from visualdl.sources.vdl2.graph import GraphFile, doc_to_onnx

__all__ = ["SOURCE", "ProgramSource", "to_onnx", "PDMODEL_SUFFIX", "PIR_SUFFIX",
           "PROGRAM_NAMES", "is_program_name", "is_pir_name", "looks_like_program"]

#: Paddle's static program files.
PDMODEL_SUFFIX = ".pdmodel"
#: Paddle >= 3.0's programs (PIR), as ``paddle.jit.save`` and ``save_inference_model`` name
#: them; a name other JSON shares: claimed only by content.
PIR_SUFFIX = ".json"
#: What Paddle calls them, for messages.
PROGRAM_NAMES = "__model__, *.pdmodel, PIR *.json"
_FLUID_NAME = "__model__"
_TRACE_SUFFIX = ".trace.json"  # PyTorch's and our framework's profiler traces
_HEAD = 16  # bytes that tell a ProgramDesc: the first block's field keys
#: bytes that tell either kind (PIR's opening, with room for the indentation of a
#: pretty-printed copy)
_SNIFF = 128
#: JSON's start: an object opening on a key. A ProgramDesc starts with 0x0A, then its
#: first block's length, which may be the byte ``{`` (123), then 0x08: never a ``"``.
_JSON_START = re.compile(rb'(\xef\xbb\xbf)?\s*\{\s*("|}|$)')


def is_program_name(name: str) -> bool:
    """Whether Paddle names its programs so (a base name or a path): ``__model__``,
    ``*.pdmodel``, and ``*.json`` (which only its first bytes make a program)."""
    base = os.path.basename(name.replace("\\", "/"))
    return base.endswith(PDMODEL_SUFFIX) or base == _FLUID_NAME or is_pir_name(base)


def is_pir_name(name: str) -> bool:
    """Whether a program of this name would be PIR JSON (``inference.json``). Profiler
    traces' names (``*.pt.trace.json``) are left to their source, so that a broken trace is
    refused as a trace, not first as "not a Paddle program"."""
    return name.endswith(PIR_SUFFIX) and not name.endswith(_TRACE_SUFFIX)


def looks_like_program(head: bytes, whole: bool = False) -> bool | str | None:
    """Whether a file that starts with ``head`` (``whole``: that is all of it) is a Paddle
    program. JSON (its first non-blank byte is ``{``) is PIR's when it opens as
    :func:`.pir_json.looks_like_pir` says. Otherwise a ``ProgramDesc``: its first field is a
    block (field 1, length-delimited), whose first field is its index (field 1, a varint),
    as Paddle's C++ serializer writes them. None when ``head`` is too short to tell; why
    not otherwise."""
    if not head:
        return None
    if _JSON_START.match(head):
        from visualdl.sources.paddle.pir_json import looks_like_pir

        return looks_like_pir(head, whole)
    if head[0] != 0x0A:
        return "its first bytes are not a ProgramDesc's block"
    pos = 1
    while pos < len(head) and head[pos] & 0x80:  # the block's length
        pos += 1
    if pos + 1 >= len(head):
        return None if len(head) < _HEAD else "its first block has no length"
    return True if head[pos + 1] == 0x08 else "its first block does not start with its index"


PRODUCER = "PaddlePaddle program (.pdmodel)"
PIR_PRODUCER = "PaddlePaddle PIR program (.json)"


def _is_json(data: bytes) -> bool:
    """Whether a program's bytes are JSON (PIR) rather than a protobuf: JSON opens an
    object on a key; a ``ProgramDesc`` opens with 0x0A (a newline), its first block's
    length and 0x08 (see ``_JSON_START``)."""
    return bool(data) and _JSON_START.match(data[:_SNIFF]) is not None


def _document(data: bytes) -> dict[str, Any]:
    """The graph JSON of a program's bytes, whichever kind they are (told by content)."""
    if _is_json(data):
        from visualdl.sources.paddle.pir_json import pir_doc

        return pir_doc(data)
    from visualdl.sources.paddle.program import program_doc

    return program_doc(data)


def to_onnx(data: bytes) -> bytes:
    """The serialized ONNX ``ModelProto`` of a Paddle program's bytes (a ``ProgramDesc`` or
    PIR JSON); ValueError saying what is wrong when they are not one."""
    return doc_to_onnx(_document(data), producer=PIR_PRODUCER if _is_json(data)
                       else PRODUCER)


class ProgramFile(GraphFile):
    document = staticmethod(_document)  # type: ignore[assignment]
    origin = "PaddlePaddle"

    @property
    def producer(self) -> str:  # type: ignore[override]
        """What the converted model says made it (a ``.json`` is taken only when PIR)."""
        return PIR_PRODUCER if is_pir_name(self.path) else PRODUCER

    def tag(self, name: str) -> str:
        return name

    def wall_time(self, name: str, stat: Any) -> float:
        return stat.mtime


class ProgramSource(Source):
    name = "paddle"
    label = "Paddle program"
    whole = True
    sniffs = True  # ``__model__`` is a common name: its first bytes decide
    head_bytes = _SNIFF

    def claims(self, name: str) -> bool:
        return is_program_name(name)

    def tentative(self, name: str) -> bool:
        return is_pir_name(name)  # other JSON is not refused, only left alone

    def accepts(self, head: bytes) -> bool | str | None:
        return looks_like_program(head, whole=len(head) < self.head_bytes)

    def open(self, path: str) -> ProgramFile:
        return ProgramFile(self, path)


SOURCE = ProgramSource()
