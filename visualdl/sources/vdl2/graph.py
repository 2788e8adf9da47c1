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
``.pdmodel`` programs are read into the same JSON (:mod:`visualdl.sources.paddle`). Only
``json``, protobuf and ``onnx.helper`` are used: no Paddle, no VisualDL.

Each graph file is one blob of its run, indexed whole once it parses (or once it settles
broken, so that the graph view says why) and converted to ONNX when the view opens it.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, BinaryIO, Callable

from visualdl.sources.base import Source, WholeFile
from visualdl.sources.values import BlobRef

#: What names a VisualDL 2.x graph file (``vdlgraph.%010d.log`` + the writer's suffix).
GRAPH_MARK = "vdlgraph"
#: The tag a run's VisualDL graph is listed under.
GRAPH_TAG = "vdlgraph"
#: The ONNX domain of the converted ops (not an ONNX operator set).
DOMAIN = "paddle"
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


class GraphSource(Source):
    name = "vdl2graph"
    label = "VisualDL 2.x graph file"
    whole = True

    def claims(self, name: str) -> bool:
        return name.startswith(GRAPH_MARK + ".")

    def open(self, path: str) -> "GraphFile":
        return GraphFile(self, path)


class GraphFile(WholeFile):
    """One graph file: a ``graph`` blob of its run."""

    #: how the file's bytes become the graph JSON, and what the blob's meta calls it
    document: Callable[[bytes], dict[str, Any]]
    producer = "VisualDL 2.x add_graph"
    origin = "VisualDL 2.x"

    def tag(self, name: str) -> str:
        return GRAPH_TAG

    def wall_time(self, name: str, stat: Any) -> float:
        match = _TIME.search(name)
        return float(match.group(1)) if match else stat.mtime

    def index(self, stream: BinaryIO, stat: Any, settled: bool) -> tuple[Any, str] | None:
        error = ""
        if stat.size == 0:
            error = "the graph file is empty"
        elif stat.size > MAX_SIZE:
            error = f"the graph file is {stat.size} bytes, more than the {MAX_SIZE} read"
        else:
            try:
                self.document(stream.read())
            except ValueError as exc:
                error = str(exc)
        if error and not settled:
            return None
        name = os.path.basename(self.path)
        ref = BlobRef("graph", self.tag(name), 0, self.wall_time(name, stat), stat.size,
                      self.path, 0, {"source": self.origin, "error": error},
                      self.source.name)
        return ref, error

    def load(self, file: Any, ref: Any, field: str) -> Any:
        """The ``Graph`` message: the file's JSON or program converted now; ValueError when
        the file is not one."""
        from visualdl.format.record_pb2 import Graph

        if ref.size > MAX_SIZE:
            raise ValueError(f"{self.path}: more than {MAX_SIZE} bytes, not read")
        try:
            onnx = doc_to_onnx(self.document(file.whole(ref.size)), producer=self.producer)
        except ValueError as exc:
            raise ValueError(f"{os.path.basename(self.path)}: {exc}") from None
        return Graph(tag=ref.tag, step=ref.step, wall_time=ref.wall_time, onnx=onnx)


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


def doc_to_onnx(doc: dict[str, Any], producer: str = "VisualDL 2.x add_graph") -> bytes:
    """The serialized ONNX ``ModelProto`` of a graph JSON (checked by :func:`parse`, or
    made by :func:`visualdl.sources.paddle.program.program_doc`)."""
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
    if not graph_inputs:
        # no feed op (a program saved without them): the data read before anything writes
        # it enters the graph, in the order first read; weights (persistable) do not
        graph_inputs = list(dict.fromkeys(
            t for n in nodes for t in n.input if t not in produced and t in variables
            and not variables[t].get("persistable")))
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


GraphFile.document = staticmethod(parse)  # type: ignore[assignment]
SOURCE = GraphSource()
