"""ONNX -> :class:`GraphModel`: nodes, edges with tensor types, initializers, subgraphs.

Shape inference runs beside the parse (its failure is a warning, not an error: many exported
models carry custom ops). External data is never loaded while parsing: the weights' shapes and
types are in the protobuf itself, and values are read on request from the model's folder.
"""

from __future__ import annotations

import os
from typing import Any

import onnx
from onnx import AttributeProto, GraphProto, ModelProto

from visualdl.kinds.graph.categories import category_of
from visualdl.kinds.graph.errors import ModelError, ModelRefused
from visualdl.kinds.graph.inference import CHECK_LIMIT, Inference
from visualdl.kinds.graph.late_parts import GraphSource, ModelTypes, SubgraphPath
from visualdl.kinds.graph.parsed_model import Edge, GraphModel, Initializer, Node

__all__ = ["CHECK_LIMIT", "MAX_EDGES", "MAX_FILE_BYTES", "MAX_NODES", "ModelError",
           "ModelRefused", "check_size", "load_model", "open_model", "parse_bytes", "parse_model",
           "parse_path", "read_model_file"]

_SUBGRAPH_TYPES = (AttributeProto.GRAPH, AttributeProto.GRAPHS)
#: The largest model the view opens: the page holding all of it expanded stays under
#: PAGE_MEMORY_GB (measured by bench/graph.py: see its table for the heap per node).
MAX_NODES = 200_000
MAX_EDGES = 600_000
PAGE_MEMORY_GB = 1
#: The largest model file read: protobuf decodes no message of 2 GiB or more, so a bigger
#: file can be no ONNX model (whose weights then lie in external data files) and is refused
#: unread instead of taking seconds and gigabytes to fail decoding. Uploads have a bound of
#: their own (``api.MAX_UPLOAD_BYTES``), smaller: they are held in memory as they arrive.
MAX_FILE_BYTES = 2**31 - 1


def load_model(source: bytes | str | os.PathLike) -> tuple[ModelProto, str | None]:
    """Decode a model from bytes or a path (external data is left on disk)."""
    model, base_dir, _ = _decode(source, infer=False)
    return model, base_dir


def open_model(source: bytes | str | os.PathLike) -> tuple[ModelProto, str | None, Inference]:
    """:func:`load_model`, with shape inference and the checker started on the bytes read
    (:mod:`.inference`) as soon as they are decoded, before the size check and the parse:
    for a big model, inference in its worker is what the first view waits for last.
    Hand the Inference to :func:`parse_model`."""
    model, base_dir, inference = _decode(source, infer=True)
    assert inference is not None
    return model, base_dir, inference


def _decode(source: bytes | str | os.PathLike,
            infer: bool) -> tuple[ModelProto, str | None, Inference | None]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw, base_dir = bytes(source), None
    else:
        path = os.fspath(source)
        raw = read_model_file(path)
        base_dir = os.path.dirname(os.path.abspath(path))
    if not raw:
        raise ModelError("the file is empty, not an ONNX model")
    try:
        model = onnx.load_model_from_string(raw)
    except Exception as err:  # noqa: BLE001 - protobuf raises DecodeError and friends
        raise ModelError(f"not an ONNX model: the protobuf could not be decoded ({err})") from None
    _check_ir(model)
    # (a main graph of more nodes is refused at once below: no worker is started for it)
    inference = Inference(model, raw=raw) if infer and len(model.graph.node) <= MAX_NODES else None
    try:
        check_size(model)
    except ModelError:
        if inference is not None:
            inference.close()
        raise
    return model, base_dir, inference


def read_model_file(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of a model file, its size checked before any is read (``limit``: default
    :data:`MAX_FILE_BYTES`). Why: a file is read whole and decoded in memory, so a huge one
    would take seconds and gigabytes only to fail decoding; it is refused at once instead,
    with what was found and what is allowed."""
    path = os.fspath(path)
    limit = MAX_FILE_BYTES if limit is None else limit
    if not os.path.isfile(path):
        raise ModelError(f"model file not found: {path}")
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise ModelRefused(_too_big(os.path.basename(path), size, limit))
        raw = f.read(limit + 1)  # the file may have grown since
    if len(raw) > limit:
        raise ModelRefused(_too_big(os.path.basename(path), len(raw), limit, "+"))
    return raw


def _too_big(name: str, size: int, limit: int, more: str = "") -> str:
    """What was found and what is allowed, and the way to a file the view reads."""
    return (f"{name}: the file is {size:,}{more} bytes ({size / 2**20:,.0f}{more} MiB), refused "
            f"unread: the graph view reads model files of at most {limit:,} bytes "
            f"({limit / 2**20:,.0f} MiB), protobuf's limit; an ONNX model saved with its "
            f"weights as external data (onnx.save_model(model, path, "
            f"save_as_external_data=True)) keeps the .onnx file small")


def _check_ir(model: ModelProto) -> None:
    """No graph: not an ONNX model (a Paddle program or another protobuf decodes so), and a
    ModelError lets the caller try another format. A graph with IR version 0 is an ONNX
    model all the same, refused as one (ModelRefused): no other format is tried."""
    if not model.HasField("graph"):
        raise ModelError("not an ONNX model: no graph in the file")
    if model.ir_version <= 0:
        raise ModelRefused(f"an ONNX model of IR version {model.ir_version}, refused: the "
                           "graph view opens IR version 1 and later (its writer left it unset)")


def check_size(model: ModelProto, max_nodes: int = MAX_NODES, max_edges: int = MAX_EDGES) -> None:
    """Refuse a model too large for the view's page (before it is parsed): a ModelRefused
    (an ONNX model all the same: no other format is tried) that says what was read and
    what is allowed."""
    nodes = edges = 0
    stack = [model.graph]
    while stack:
        graph = stack.pop()
        protos = list(graph.node)
        nodes += len(protos)
        edges += sum([len(node.input) for node in protos])
        for node in protos:
            if node.attribute:
                for attr in node.attribute:
                    if attr.type == AttributeProto.GRAPH:
                        stack.append(attr.g)
                    elif attr.type == AttributeProto.GRAPHS:
                        stack.extend(attr.graphs)
        if nodes > max_nodes or edges > max_edges:
            break
    if nodes > max_nodes or edges > max_edges:
        raise ModelRefused(
            f"model too large for the graph view: read {nodes:,}+ nodes and {edges:,}+ node "
            f"inputs, refused: it opens models of at most {max_nodes:,} nodes and "
            f"{max_edges:,} inputs (a page holding more would pass {PAGE_MEMORY_GB} GB of memory)")


def parse_bytes(raw: bytes) -> GraphModel:
    """Parse an uploaded model (no folder, so external data values are unavailable)."""
    model, _, inference = open_model(raw)
    return parse_model(model, None, inference)


def parse_path(path: str | os.PathLike) -> GraphModel:
    """Parse a model file; external data is read later from its folder."""
    model, base_dir, inference = open_model(path)
    return parse_model(model, base_dir, inference)


def parse_model(model: ModelProto, base_dir: str | None = None,
                inference: Inference | None = None) -> GraphModel:
    """Flatten the model (subgraphs included) into a GraphModel; shape inference and the
    checker run beside it (:mod:`.inference`: a big model's in a process of their own).
    ``inference``: the one :func:`open_model` started for this model, if any."""
    if inference is None:
        inference = Inference(model)
    if not inference.in_worker:
        model = inference.typed()  # a small model: inferred first, and parsed from that
    builder = _Builder()
    builder.graph(model.graph, scope=0, prefix="")
    late = ModelTypes(inference, model, builder.paths, builder.sources, builder.weights,
                      builder.initializers)
    return GraphModel(
        nodes=builder.nodes,
        edges=builder.edges,
        tensors=None,
        initializers=builder.initializers,
        metadata=_metadata(model),
        inputs=None,
        outputs=None,
        warnings=None,
        base_dir=base_dir,
        scope_parent=builder.scope_parent,
        late=late,
    )


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
    """Walks a graph and its subgraphs, assigning node ids and resolving tensor producers.

    The loop over a graph's nodes is the hot path of a big model's parse (100,000 nodes):
    it reads only what the structure needs (name, op type, inputs, outputs) and leaves the
    attributes, the doc string and every type to be read when asked (:mod:`.late_parts`).
    """

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.edges: list[Edge] = []
        self.initializers: dict[tuple[int, str], Initializer] = {}
        self.scope_parent: dict[int, int] = {}
        self.sources: dict[int, GraphSource] = {}
        self.paths: dict[int, SubgraphPath] = {}
        #: each scope's weights in the graph's order (dense, sparse), duplicates included
        self.weights: dict[int, tuple[list[Initializer], list[Initializer]]] = {}
        self._producers: dict[int, dict[str, int]] = {}  # scope -> tensor name -> node id
        self._weight_names: dict[int, dict[tuple[int, str], Initializer]] = {}
        self._categories: dict[str, str] = {}
        self._next_scope = 1

    # -- graphs -------------------------------------------------------------------------------
    def graph(self, g: GraphProto, scope: int, prefix: str, owner: int | None = None,
              owner_edges: set[tuple[int, str]] | None = None) -> None:
        """Add ``g``'s values, nodes and outputs; ``owner`` is the If/Loop/Scan node of a body
        and ``owner_edges`` the (source, tensor) of the edges into it so far."""
        source = self.sources[scope] = GraphSource(g)
        self._producers[scope] = producers = {}
        inits = self.initializers
        dense = [Initializer(t.name, scope, None, t) for t in g.initializer]
        sparse = [Initializer(sp.values.name, scope, None, sp.values)
                  for sp in g.sparse_initializer]
        self.weights[scope] = (dense, sparse)
        for init in dense:
            inits[(scope, init.name)] = init
        for init in sparse:
            inits[(scope, init.name)] = init
        for value in g.input:
            if (scope, value.name) in inits:
                continue  # IR < 4 lists weights as inputs too; they are weights
            producers[value.name] = self._pseudo("input", value.name, scope, prefix, [],
                                                 [value.name])
        self._ops(g, source, scope, prefix)
        for value in g.output:
            if owner is None:
                nid = self._pseudo("output", value.name, scope, prefix, [value.name], [])
                self._connect(scope, value.name, nid, None)
            else:
                self._connect(scope, value.name, owner, owner_edges)

    def _pseudo(self, role: str, name: str, scope: int, prefix: str, inputs: list[str],
                outputs: list[str]) -> int:
        nid = len(self.nodes)
        self.nodes.append(Node(nid, role, name, role.capitalize(), "", scope, prefix, name,
                               category_of(role.capitalize(), role), inputs, outputs))
        return nid

    # -- nodes --------------------------------------------------------------------------------
    def _ops(self, g: GraphProto, source: GraphSource, scope: int, prefix: str) -> None:
        """Every node of one graph: the fast path, with control-flow nodes aside."""
        nodes, edges, categories = self.nodes, self.edges, self._categories
        producers = self._producers[scope]
        nested = scope in self.scope_parent
        inits = self.initializers
        heads: dict[str, tuple[str, str | None]] = {}  # name head -> (group, its last part)
        for index, proto in enumerate(g.node):
            attrs = proto.attribute
            if attrs:  # a plain loop: any() over a generator took 2.5x as long here
                control = False
                for attr in attrs:
                    if attr.type in _SUBGRAPH_TYPES:
                        control = True
                        break
                if control:
                    self._control(proto, index, source, scope, prefix)
                    continue
            name, op = proto.name, proto.op_type
            head, _, last = name.rpartition("/")
            entry = heads.get(head)
            if entry is None:
                parts = _components(head)
                entry = heads[head] = (_join(prefix, parts), parts[-1] if parts else None)
            group, above = entry
            if not last:  # a name ending in "/" (or none): the general rule
                parts = _components(name)
                group, label = _join(prefix, parts[:-1]), _label(parts, op)
            elif above is not None and (last == op or last.startswith(op + "_")):
                label = above
            else:
                label = last
            category = categories.get(op)
            if category is None:
                category = categories[op] = category_of(op, "op")
            nid = len(nodes)
            inputs, outputs = proto.input[:], proto.output[:]  # a slice is a list, made faster
            nodes.append(Node(nid, "op", name, op, proto.domain, scope, group, label, category,
                              inputs, outputs, None, [], None, (source, index)))
            for tensor in (inputs if len(inputs) < 2 else dict.fromkeys(inputs)):
                if not tensor:
                    continue
                src = producers.get(tensor)
                if src is not None:
                    edges.append(Edge(src, nid, tensor, scope))
                elif nested and (scope, tensor) not in inits:
                    self._connect_outer(scope, tensor, nid, None)
            for tensor in outputs:
                if tensor:
                    producers[tensor] = nid

    def _control(self, proto: onnx.NodeProto, index: int, source: GraphSource, scope: int,
                 prefix: str) -> None:
        """An If/Loop/Scan (any node with graph attributes): a group of its own, holding
        itself and its bodies."""
        parts = _components(proto.name)
        own = _join(prefix, parts or [f"{proto.op_type}_{len(self.nodes)}"])
        nid = len(self.nodes)
        node = Node(nid, "op", proto.name, proto.op_type, proto.domain, scope, own,
                    parts[-1] if parts else "", category_of(proto.op_type, "op"),
                    list(proto.input), list(proto.output), None, [], None, (source, index))
        self.nodes.append(node)
        into: set[tuple[int, str]] = set()
        for name in dict.fromkeys(proto.input):
            if name:
                self._connect(scope, name, nid, into)
        for name in proto.output:
            if name:
                self._producers[scope][name] = nid
        for attr_index, attr in enumerate(proto.attribute):
            if attr.type not in _SUBGRAPH_TYPES:
                continue
            graphs = [attr.g] if attr.type == AttributeProto.GRAPH else list(attr.graphs)
            for i, body in enumerate(graphs):
                sub = self._next_scope
                self._next_scope += 1
                self.scope_parent[sub] = scope
                self.paths[sub] = (scope, index, attr_index,
                                   -1 if attr.type == AttributeProto.GRAPH else i)
                suffix = attr.name if len(graphs) == 1 else f"{attr.name}_{i}"
                path = _join(own, [suffix])
                node.subgraphs.append(path)
                self.graph(body, sub, path, owner=nid, owner_edges=into)

    def _connect(self, scope: int, name: str, dst: int, seen: set[tuple[int, str]] | None) -> None:
        """Add the edge producer(name) -> dst, looking the name up from inner to outer scope;
        ``seen``: the (source, tensor) of the edges into ``dst`` so far (none are repeated)."""
        src = self._producers[scope].get(name)
        if src is not None:
            self._edge(src, dst, name, scope, seen)
        elif (scope, name) not in self.initializers and scope in self.scope_parent:
            self._connect_outer(scope, name, dst, seen)

    def _connect_outer(self, scope: int, name: str, dst: int,
                       seen: set[tuple[int, str]] | None) -> None:
        """The edge from a tensor of an enclosing graph (a body reading an outer value)."""
        s = self.scope_parent[scope]
        while True:
            src = self._producers[s].get(name)
            if src is not None:
                self._edge(src, dst, name, s, seen)
                return
            if (s, name) in self.initializers or s not in self.scope_parent:
                return  # a weight (shown inside the node) or an unknown name
            s = self.scope_parent[s]

    def _edge(self, src: int, dst: int, name: str, scope: int,
              seen: set[tuple[int, str]] | None) -> None:
        if src == dst:
            return
        if seen is not None:
            if (src, name) in seen:
                return
            seen.add((src, name))
        self.edges.append(Edge(src, dst, name, scope))
