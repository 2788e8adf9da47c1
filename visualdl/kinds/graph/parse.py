"""ONNX -> :class:`GraphModel`: nodes, edges with tensor types, initializers, subgraphs.

Shape inference runs first (its failure is a warning, not an error: many exported models
carry custom ops). External data is never loaded while parsing: the weights' shapes and
types are in the protobuf itself, and values are read on request from the model's folder.
"""

from __future__ import annotations

import os
from typing import Any

import onnx
from onnx import AttributeProto, GraphProto, ModelProto

from visualdl.kinds.graph.categories import category_of
from visualdl.kinds.graph.errors import ModelError
from visualdl.kinds.graph.parsed_model import Edge, GraphModel, Initializer, Node, TensorInfo
from visualdl.kinds.graph.tensor_values import (
    attribute_value,
    dtype_name,
    shape_of_type,
    tensor_summary,
)

__all__ = ["MAX_EDGES", "MAX_NODES", "ModelError", "check_size", "load_model", "parse_bytes",
           "parse_model", "parse_path"]

_SUBGRAPH_TYPES = (AttributeProto.GRAPH, AttributeProto.GRAPHS)
#: The largest model the view opens: the page holding all of it expanded stays under
#: PAGE_MEMORY_GB (measured by bench/graph.py: see its table for the heap per node).
MAX_NODES = 200_000
MAX_EDGES = 600_000
PAGE_MEMORY_GB = 1
CHECK_LIMIT = 50_000  # onnx.checker takes about half a second per 100,000 nodes


def load_model(source: bytes | str | os.PathLike) -> tuple[ModelProto, str | None]:
    """Decode a model from bytes or a path (external data is left on disk)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw, base_dir = bytes(source), None
    else:
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise ModelError(f"model file not found: {path}")
        with open(path, "rb") as f:
            raw = f.read()
        base_dir = os.path.dirname(os.path.abspath(path))
    if not raw:
        raise ModelError("the file is empty, not an ONNX model")
    try:
        model = onnx.load_model_from_string(raw)
    except Exception as err:  # noqa: BLE001 - protobuf raises DecodeError and friends
        raise ModelError(f"not an ONNX model: the protobuf could not be decoded ({err})") from None
    if not model.HasField("graph") or model.ir_version <= 0:
        raise ModelError("not an ONNX model: no graph or IR version in the file")
    check_size(model)
    return model, base_dir


def check_size(model: ModelProto, max_nodes: int = MAX_NODES, max_edges: int = MAX_EDGES) -> None:
    """Refuse a model too large for the view's page (before it is parsed): a ModelError
    that says what was read and what is allowed."""
    nodes = edges = 0
    stack = [model.graph]
    while stack:
        graph = stack.pop()
        nodes += len(graph.node)
        for node in graph.node:
            edges += len(node.input)
            for attr in node.attribute:
                if attr.type == AttributeProto.GRAPH:
                    stack.append(attr.g)
                elif attr.type == AttributeProto.GRAPHS:
                    stack.extend(attr.graphs)
        if nodes > max_nodes or edges > max_edges:
            break
    if nodes > max_nodes or edges > max_edges:
        raise ModelError(
            f"model too large for the graph view: read {nodes:,}+ nodes and {edges:,}+ node "
            f"inputs, refused: it opens models of at most {max_nodes:,} nodes and "
            f"{max_edges:,} inputs (a page holding more would pass {PAGE_MEMORY_GB} GB of memory)")


def parse_bytes(raw: bytes) -> GraphModel:
    """Parse an uploaded model (no folder, so external data values are unavailable)."""
    return parse_model(*load_model(raw))


def parse_path(path: str | os.PathLike) -> GraphModel:
    """Parse a model file; external data is read later from its folder."""
    return parse_model(*load_model(path))


def parse_model(model: ModelProto, base_dir: str | None = None) -> GraphModel:
    """Run shape inference and flatten the model (subgraphs included) into a GraphModel."""
    warnings: list[str] = []
    model = _infer(model, warnings)
    _check(model, warnings)
    builder = _Builder()
    builder.graph(model.graph, scope=0, prefix="")
    graph = model.graph
    return GraphModel(
        nodes=builder.nodes,
        edges=builder.edges,
        tensors=builder.tensors,
        initializers=builder.initializers,
        metadata=_metadata(model),
        inputs=[_io(builder, 0, v.name) for v in graph.input
                if (0, v.name) not in builder.initializers],
        outputs=[_io(builder, 0, v.name) for v in graph.output],
        warnings=warnings,
        base_dir=base_dir,
        scope_parent=builder.scope_parent,
    )


def _infer(model: ModelProto, warnings: list[str]) -> ModelProto:
    try:
        return onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False,
                                                 data_prop=True)
    except Exception as err:  # noqa: BLE001 - inference is best effort
        warnings.append(f"shape inference failed: {_first_line(err)}")
        return model


def _check(model: ModelProto, warnings: list[str]) -> None:
    if len(model.graph.node) > CHECK_LIMIT:  # its time goes to the first view; say so
        warnings.append(f"onnx.checker not run: the model has over {CHECK_LIMIT:,} nodes")
        return
    try:
        onnx.checker.check_model(_without_external_weights(model))
    except Exception as err:  # noqa: BLE001 - show what we can, say what is wrong
        warnings.append(f"onnx.checker: {_first_line(err)}")


def _without_external_weights(model: ModelProto) -> ModelProto:
    """The model as the checker should see it: weights kept outside the file (a model
    saved with external data, or converted from a graph file that holds shapes but no
    values: VisualDL's, Paddle's .pdmodel) become typed graph inputs. The view draws a
    model's structure; whether a weight file sits beside an upload is not its concern."""
    external = [t for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    if not external:
        return model
    copy = ModelProto()
    copy.CopyFrom(model)
    names = {t.name for t in external}
    kept = [t for t in copy.graph.initializer if t.name not in names]
    del copy.graph.initializer[:]
    copy.graph.initializer.extend(kept)
    inputs = {i.name for i in copy.graph.input}
    for t in external:
        if t.name not in inputs:
            copy.graph.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type,
                                                                       list(t.dims)))
    return copy


def _first_line(err: Exception) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]


def _metadata(model: ModelProto) -> dict[str, Any]:
    return {
        "producer": model.producer_name,
        "producer_version": model.producer_version,
        "ir_version": int(model.ir_version),
        "opsets": [{"domain": o.domain or "ai.onnx", "version": int(o.version)}
                   for o in model.opset_import],
        "domain": model.domain,
        "model_version": int(model.model_version),
        "graph_name": model.graph.name,
        "doc": model.doc_string[:2000],
        "properties": {p.key: p.value[:500] for p in model.metadata_props},
        "functions": len(model.functions),
    }


def _io(builder: _Builder, scope: int, name: str) -> dict[str, Any]:
    info = builder.tensors.get((scope, name))
    return {"name": name, "dtype": info.dtype if info else None,
            "shape": info.shape if info else None}


def _join(prefix: str, parts: list[str]) -> str:
    return "/".join(([prefix] if prefix else []) + parts)


def _label(parts: list[str], op_type: str) -> str:
    """The short name under the op type: ``/layer1/conv1/Conv`` -> ``conv1`` (the last part
    only repeats the op type, as PyTorch's exporter names nodes)."""
    if not parts:
        return ""
    last = parts[-1]
    if len(parts) > 1 and (last == op_type or last.startswith(op_type + "_")):
        return parts[-2]
    return last


def _components(name: str) -> list[str]:
    return [c for c in name.split("/") if c]


class _Builder:
    """Walks a graph and its subgraphs, assigning node ids and resolving tensor producers."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.edges: list[Edge] = []
        self.tensors: dict[tuple[int, str], TensorInfo] = {}
        self.initializers: dict[tuple[int, str], Initializer] = {}
        self.scope_parent: dict[int, int] = {}
        self._producers: dict[tuple[int, str], int] = {}
        self._edge_keys: set[tuple[int, int, str]] = set()
        self._next_scope = 1

    # -- graphs -------------------------------------------------------------------------------
    def graph(self, g: GraphProto, scope: int, prefix: str, owner: int | None = None) -> None:
        """Add ``g``'s values, nodes and outputs; ``owner`` is the If/Loop/Scan node of a body."""
        self._types(g, scope)
        for init in g.initializer:
            self.initializers[(scope, init.name)] = Initializer(
                init.name, scope, tensor_summary(init), init)
        for sparse in g.sparse_initializer:
            self.initializers[(scope, sparse.values.name)] = Initializer(
                sparse.values.name, scope, tensor_summary(sparse.values), sparse.values)
        for value in g.input:
            if (scope, value.name) in self.initializers:
                continue  # IR < 4 lists weights as inputs too; they are weights
            node = self._add(role="input", name=value.name, op_type="Input", domain="",
                             scope=scope, group=prefix, label=value.name, outputs=[value.name])
            self._producers[(scope, value.name)] = node.id
        for proto in g.node:
            self._op(proto, scope, prefix)
        for value in g.output:
            if owner is None:
                node = self._add(role="output", name=value.name, op_type="Output", domain="",
                                 scope=scope, group=prefix, label=value.name,
                                 inputs=[value.name])
                self._connect(scope, value.name, node.id)
            else:
                self._connect(scope, value.name, owner)

    def _types(self, g: GraphProto, scope: int) -> None:
        for value in list(g.input) + list(g.value_info) + list(g.output):
            dtype, shape = shape_of_type(value.type)
            if dtype is not None or shape is not None:
                self.tensors[(scope, value.name)] = TensorInfo(dtype, shape)
        for init in g.initializer:
            key = (scope, init.name)
            if key not in self.tensors:
                self.tensors[key] = TensorInfo(dtype_name(init.data_type),
                                               [int(d) for d in init.dims])

    # -- nodes --------------------------------------------------------------------------------
    def _op(self, proto: onnx.NodeProto, scope: int, prefix: str) -> None:
        parts = _components(proto.name)
        bodies = [a for a in proto.attribute if a.type in _SUBGRAPH_TYPES]
        if bodies:  # a control-flow node is a group of its own, holding itself and its bodies
            own = _join(prefix, parts or [f"{proto.op_type}_{len(self.nodes)}"])
            group, label = own, (parts[-1] if parts else "")
        else:
            group, label = _join(prefix, parts[:-1]), _label(parts, proto.op_type)
        node = self._add(
            role="op", name=proto.name, op_type=proto.op_type, domain=proto.domain,
            scope=scope, group=group, label=label, inputs=list(proto.input),
            outputs=list(proto.output),
            attributes=[(a.name, *attribute_value(a)) for a in proto.attribute],
            doc=proto.doc_string[:2000],
        )
        for name in dict.fromkeys(proto.input):
            if name:
                self._connect(scope, name, node.id)
        for name in proto.output:
            if name:
                self._producers[(scope, name)] = node.id
        for attr in bodies:
            graphs = [attr.g] if attr.type == AttributeProto.GRAPH else list(attr.graphs)
            for i, body in enumerate(graphs):
                sub = self._next_scope
                self._next_scope += 1
                self.scope_parent[sub] = scope
                suffix = attr.name if len(graphs) == 1 else f"{attr.name}_{i}"
                path = _join(group, [suffix])
                node.subgraphs.append(path)
                self.graph(body, sub, path, owner=node.id)

    def _add(self, **fields: Any) -> Node:
        node = Node(id=len(self.nodes), category=category_of(fields["op_type"], fields["role"]),
                    **fields)
        self.nodes.append(node)
        return node

    def _connect(self, scope: int, name: str, dst: int) -> None:
        """Add the edge producer(name) -> dst, looking the name up from inner to outer scope."""
        s = scope
        while True:
            src = self._producers.get((s, name))
            if src is not None:
                break
            if (s, name) in self.initializers or s not in self.scope_parent:
                return  # a weight (shown inside the node) or an unknown name
            s = self.scope_parent[s]
        key = (src, dst, name)
        if src != dst and key not in self._edge_keys:
            self._edge_keys.add(key)
            self.edges.append(Edge(src, dst, name, s))
