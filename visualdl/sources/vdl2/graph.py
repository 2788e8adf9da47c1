"""VisualDL 2.x model graphs (``vdlgraph.<time>.log``), shown in our graph view as ONNX.

VisualDL 2.5's ``LogWriter.add_graph(model, input_spec)`` traces a Paddle ``Layer`` to a
static program and writes VisualDL's own analysis of it as plain JSON (indented, no framing,
one file per call, never appended to): ``{"version": "1.0.0", "nodes": [...], "vars": [...],
"edges": [...]}``. Each leaf node is one Paddle operator, named by the layer scopes it ran in
(``/Net[model]/Sequential[features]/Conv2D[0]/conv2d_1``), with its inputs and outputs by
slot (``{"Input": ["image"], "Filter": ["conv2d_0.w_0"]}``) and its attributes; non-leaf
nodes are those layers; ``vars`` carries every variable's shape and dtype.

As with TensorBoard's GraphDef (:mod:`visualdl.sources.tfevents.graphdef`), the graph view is
not taught a second format: each operator becomes an ONNX node of the same name (the leading
``/`` dropped), so the layer scopes become the view's groups. Paddle ops keep their names in
a domain of their own (``paddle``), so ONNX's checker and shape inference leave them alone.
Paddle's ``feed``/``fetch`` ops become the graph's inputs and outputs, variables written in
place (batch norm's running mean) are renamed per write so the graph stays single-assignment,
and each variable's shape and dtype become the shape of its edge. Weights become
initializers with their shapes and dtypes but no values (VisualDL's JSON holds none; the
ONNX checker then notes, in the view's warnings, that their data is not stored). Paddle's
``.pdmodel`` programs are read into the same JSON by :mod:`.pdmodel`. Only ``json``,
protobuf and ``onnx.helper`` are used: no Paddle, no VisualDL.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from typing import Any

#: What names a VisualDL 2.x graph file (``vdlgraph.%010d.log`` + the writer's suffix).
GRAPH_MARK = "vdlgraph"
#: The tag a run's VisualDL graph is listed under.
GRAPH_TAG = "vdlgraph"
#: Paddle's static program files (see :mod:`.pdmodel`).
PDMODEL_SUFFIX = ".pdmodel"
#: The ONNX domain of the converted ops (not an ONNX operator set).
DOMAIN = "paddle"
#: A file that does not parse yet is taken as still being written until it is this old.
SETTLE_SECONDS = 10.0
#: Larger files are refused (VisualDL's JSON of a large model is a few MB).
MAX_SIZE = 256 << 20

_TIME = re.compile(r"vdlgraph\.(\d+)\.log")
#: Paddle's bookkeeping attributes, on every op: not shown (op_callstack is a stack trace).
_SKIP_ATTRS = frozenset({"op_callstack", "op_namescope", "op_role", "op_role_var",
                         "op_device", "with_quant_attr"})
_FEED_FETCH = frozenset({"feed", "fetch"})
# Paddle dtypes as VisualDL writes them: ``paddle.float32`` (2.5+) or ``VarType.FP32``.
_DTYPES = {
    "float32": 1, "fp32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6,
    "int64": 7, "bool": 9, "float16": 10, "fp16": 10, "float64": 11, "fp64": 11,
    "complex64": 14, "complex128": 15, "bfloat16": 16, "bf16": 16,
}


def is_graph_file(name: str) -> bool:
    """A VisualDL 2.x graph file's name (``vdlgraph.1700000000.log``, as VisualDL's writer
    names it: the name starts with the mark), or a Paddle program (``*.pdmodel``), which
    VisualDL 2.x also shows when it finds one in a logdir."""
    return name.startswith(GRAPH_MARK + ".") or is_pdmodel(name)


def is_pdmodel(name: str) -> bool:
    """A Paddle static program file (``inference.pdmodel``)."""
    return name.endswith(PDMODEL_SUFFIX) and not name.startswith(".")


@dataclass(frozen=True)
class GraphInfo:
    """What indexing a graph file found (its contents are converted when it is opened)."""

    tag: str
    wall_time: float
    size: int
    error: str  # why it cannot be shown, "" when it can


def scan(path: str, now: float | None = None, data: bytes | None = None,
         stat: Any = None) -> GraphInfo | None:
    """Index one graph file; None while it is empty or does not parse yet and may still be
    being written (younger than ``SETTLE_SECONDS``). A file that settles broken is indexed
    with its ``error``, so the graph view can say what is wrong with it. An object in
    storage comes as its ``data``, with ``stat`` (``st_size``, ``st_mtime``) from the
    listing (see :mod:`visualdl.storage.objects`)."""
    st = stat if stat is not None else os.stat(path)
    settled = (time.time() if now is None else now) - st.st_mtime >= SETTLE_SECONDS
    error = ""
    if st.st_size == 0:
        error = "the graph file is empty"
    elif st.st_size > MAX_SIZE:
        error = f"the graph file is {st.st_size} bytes, more than the {MAX_SIZE} read"
    else:
        if data is None:
            with open(path, "rb") as f:
                data = f.read()
        try:
            _document(os.path.basename(path), data)
        except ValueError as exc:
            error = str(exc)
    if error and not settled:
        return None
    name = os.path.basename(path)
    match = _TIME.search(name)
    wall = float(match.group(1)) if match else st.st_mtime
    return GraphInfo(name if is_pdmodel(name) else GRAPH_TAG, wall, st.st_size, error)


def _document(name: str, data: bytes) -> dict[str, Any]:
    """The graph JSON of a file's bytes: VisualDL's own, or made from a ``.pdmodel``."""
    if is_pdmodel(name):
        from visualdl.sources.vdl2.pdmodel import program_doc

        return program_doc(data)
    return parse(data)


def parse(data: bytes) -> dict[str, Any]:
    """VisualDL's graph JSON, checked for the parts the conversion reads; ValueError (saying
    what is wrong) for anything else."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not a VisualDL graph file: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a VisualDL graph file: bad JSON at line {exc.lineno} column "
                         f"{exc.colno} ({exc.msg})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list):
        raise ValueError("not a VisualDL graph file: no list of nodes in the JSON")
    if not isinstance(doc.get("vars", []), list):
        raise ValueError("not a VisualDL graph file: 'vars' is not a list")
    for i, node in enumerate(doc["nodes"]):
        if not isinstance(node, dict) or not isinstance(node.get("name"), str):
            raise ValueError(f"not a VisualDL graph file: node {i} has no name")
        for key in ("input_vars", "output_vars"):
            slots = node.get(key, {})
            if not isinstance(slots, dict) or not all(
                    isinstance(v, list) and all(isinstance(s, str) for s in v)
                    for v in slots.values()):
                raise ValueError(f"not a VisualDL graph file: node {node['name']!r} has a bad "
                                 f"{key!r} (a map of slot to variable names is expected)")
    if not any(_is_op(n) for n in doc["nodes"]):
        raise ValueError("not a VisualDL graph file: it holds no operators")
    return doc


def _is_op(node: dict[str, Any]) -> bool:
    return bool(node.get("is_leaf_node", not node.get("children_node")))


def _dtype(name: Any) -> int:
    key = str(name or "").rsplit(".", 1)[-1].lower()
    return _DTYPES.get(key, 0)


def _dims(shape: Any) -> list | None:
    if not isinstance(shape, list) or not all(isinstance(d, int) for d in shape):
        return None
    return [d if d >= 0 else None for d in shape]


def _attribute(helper: Any, key: str, value: Any) -> Any:
    """One Paddle attribute as an ONNX attribute (None for what ONNX cannot hold)."""
    if isinstance(value, bool):
        return helper.make_attribute(key, int(value))
    if isinstance(value, (int, float, str)):
        return helper.make_attribute(key, value)
    if isinstance(value, list) and value:
        if all(isinstance(v, bool) for v in value):
            return helper.make_attribute(key, [int(v) for v in value])
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return helper.make_attribute(key, value)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return helper.make_attribute(key, [float(v) for v in value])
        if all(isinstance(v, str) for v in value):
            return helper.make_attribute(key, value)
    if isinstance(value, list):
        return None  # empty: no type to give it
    return helper.make_attribute(key, json.dumps(value, default=str)[:1000])


def to_onnx(data: bytes) -> bytes:
    """The serialized ONNX ``ModelProto`` of a VisualDL graph file's bytes; ValueError (saying
    what is wrong) when they are not one."""
    return doc_to_onnx(parse(data))


def pdmodel_to_onnx(data: bytes) -> bytes:
    """The serialized ONNX ``ModelProto`` of a Paddle program's bytes (a ``.pdmodel``)."""
    from visualdl.sources.vdl2.pdmodel import program_doc

    return doc_to_onnx(program_doc(data), producer="PaddlePaddle program (.pdmodel)")


def doc_to_onnx(doc: dict[str, Any], producer: str = "VisualDL 2.x add_graph") -> bytes:
    """The serialized ONNX ``ModelProto`` of a graph JSON (checked by :func:`parse`, or
    made by :func:`.pdmodel.program_doc`)."""
    from onnx import TensorProto, helper

    variables = {v["name"]: v for v in doc.get("vars", [])
                 if isinstance(v, dict) and isinstance(v.get("name"), str)}
    current: dict[str, str] = {}  # variable -> the tensor name of its latest write
    writes: dict[str, int] = {}
    read: set[str] = set()  # variables read so far
    graph_inputs: list[str] = []
    graph_outputs: list[str] = []
    nodes, seen = [], set()
    for node in doc["nodes"]:
        if not _is_op(node):
            continue
        op_type = str(node.get("type") or "Unknown")
        ins = [v for slot in sorted(node.get("input_vars", {}))
               for v in node["input_vars"][slot]]
        # data before weights, as ONNX ops list them (Paddle's slots come sorted by name)
        ins.sort(key=lambda v: v not in current and v not in graph_inputs
                 and bool(variables.get(v, {}).get("persistable")))
        outs = [v for slot in sorted(node.get("output_vars", {}))
                for v in node["output_vars"][slot]]
        if op_type == "feed":  # the program's inputs: their variables enter the graph
            graph_inputs += [v for v in outs if v not in graph_inputs]
            continue
        if op_type == "fetch":
            graph_outputs += [current.get(v, v) for v in ins if current.get(v, v) not in
                              graph_outputs]
            continue
        name = node["name"].lstrip("/") or op_type
        if name in seen:
            continue  # ONNX names must be unique; VisualDL keys its nodes by name too
        seen.add(name)
        inputs = [current.get(v, v) for v in ins]
        read.update(ins)
        outputs = []
        for v in outs:
            k = writes.get(v, 0)
            # written before, or read first (in place, or a weight that is updated):
            # a new tensor name, so that each tensor has one producer
            tensor = v if k == 0 and v not in read else f"{v}@{k + 1}"
            writes[v] = k + 1
            current[v] = tensor
            outputs.append(tensor)
        made = helper.make_node(op_type, inputs, outputs, name=name, domain=DOMAIN)
        types = node.get("attr_types", {}) if isinstance(node.get("attr_types"), dict) else {}
        for key in sorted(node.get("attrs", {}) if isinstance(node.get("attrs"), dict) else {}):
            if key in _SKIP_ATTRS or types.get(key) in ("BLOCK", "BLOCKS"):
                continue
            attr = _attribute(helper, key, node["attrs"][key])
            if attr is not None:
                made.attribute.append(attr)
        nodes.append(made)
    if not nodes:
        raise ValueError("the graph holds no operators but feed and fetch")

    def info(tensor: str) -> Any:
        var = variables.get(tensor.split("@", 1)[0], {})
        return helper.make_tensor_value_info(tensor, _dtype(var.get("dtype")) or
                                             TensorProto.UNDEFINED, _dims(var.get("shape")))

    produced = {t for n in nodes for t in n.output}
    consumed = {t for n in nodes for t in n.input}
    if not graph_outputs:  # no fetch op: what nothing reads leaves the graph
        graph_outputs = [t for n in nodes for t in n.output[:1] if t not in consumed]
    outputs = set(graph_outputs)
    value_info = [info(t) for n in nodes for t in n.output if t not in outputs]
    weights = []
    for t in sorted(consumed - produced - set(graph_inputs)):
        var = variables.get(t)
        if var is None:
            continue
        dims, dtype = _dims(var.get("shape")), _dtype(var.get("dtype"))
        if var.get("persistable") and dims is not None and None not in dims and dtype:
            weights.append(_weight(t, dtype, dims))
        else:
            value_info.append(info(t))
    graph = helper.make_graph(nodes, "vdlgraph", [info(t) for t in graph_inputs],
                              [info(t) for t in graph_outputs], initializer=weights,
                              value_info=value_info)
    model = helper.make_model(graph, producer_name=producer,
                              producer_version=str(doc.get("version", "")),
                              opset_imports=[helper.make_opsetid(DOMAIN, 1),
                                             helper.make_opsetid("", 17)])
    return model.SerializeToString()


def _weight(name: str, dtype: int, dims: list) -> Any:
    """A parameter as an ONNX initializer with its shape and dtype but no values: VisualDL's
    JSON holds none (a ``.pdmodel``'s are in its ``.pdiparams``), so its data is "external"
    at a location that says so (the graph view answers a request for its values with that)."""
    from onnx import TensorProto

    tensor = TensorProto(name=name, data_type=dtype, dims=dims)
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "(weights not stored in the graph file)"
    return tensor


def load(path: str, tag: str, step: int, wall_time: float, data: bytes | None = None) -> Any:
    """The ``Graph`` message of one graph file (its JSON or program converted now), for
    ``LogReader.load``; ValueError when the file is not a VisualDL graph. ``data``: the
    file's bytes, when read already (from object storage)."""
    from visualdl.format.record_pb2 import Graph

    if data is None:
        if os.path.getsize(path) > MAX_SIZE:
            raise ValueError(f"{path}: more than {MAX_SIZE} bytes, not read")
        with open(path, "rb") as f:
            data = f.read()
    try:
        onnx = pdmodel_to_onnx(data) if is_pdmodel(os.path.basename(path)) else to_onnx(data)
    except ValueError as exc:
        raise ValueError(f"{os.path.basename(path)}: {exc}") from None
    return Graph(tag=tag, step=step, wall_time=wall_time, onnx=onnx)
