"""What a parsed model reads from its protobuf only when asked.

* :class:`GraphSource`: a node's attributes and doc string (the drawing of a big model
  needs neither; its details panel and diff do).
* :class:`TensorTable`: a value's type, decoded from the inferred model's ``value_info``
  on first lookup (a view needs the types of the edges it shows, not of all 100,000).
* :class:`ModelTypes`: the types, inputs, outputs and warnings, once shape inference and
  the checker (:mod:`.inference`) are done; the nodes and weights then point into the
  inferred model, so that one decoded model is kept, not two.

The answers are those of decoding everything at once: a name listed twice takes its last
typed listing (inputs, then value_info, then outputs), a weight's type comes from its
first listing when no value names it, as the parse did before.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

from onnx import GraphProto, ModelProto

from visualdl.kinds.graph.inference import Inference
from visualdl.kinds.graph.parsed_model import Initializer, TensorInfo, TensorKey
from visualdl.kinds.graph.tensor_values import attribute_value, dtype_name, shape_of_type

__all__ = ["GraphSource", "ModelTypes", "SubgraphPath", "TensorTable"]

#: Where a subgraph sits: (enclosing scope, node index, attribute index, index in
#: ``graphs``, or -1 for ``g``).
SubgraphPath = tuple[int, int, int, int]
_MISSING = object()


class GraphSource:
    """The graph a scope's nodes were read from (re-pointed to the inferred one later)."""

    __slots__ = ("graph",)

    def __init__(self, graph: GraphProto) -> None:
        self.graph = graph

    def details(self, index: int) -> tuple[list[tuple[str, str, str]], str]:
        """(attributes as (name, type, value), doc cut to 2,000) of the index-th node."""
        proto = self.graph.node[index]
        return [(a.name, *attribute_value(a)) for a in proto.attribute], proto.doc_string[:2000]


def scope_graphs(model: ModelProto, paths: dict[int, SubgraphPath]) -> dict[int, GraphProto]:
    """Every scope's graph in ``model`` (scope 0 is the main graph)."""
    graphs = {0: model.graph}
    for scope in sorted(paths):  # a body's scope is numbered after its enclosing one
        parent, node, attr, which = paths[scope]
        a = graphs[parent].node[node].attribute[attr]
        graphs[scope] = a.g if which < 0 else a.graphs[which]
    return graphs


class TensorTable(Mapping):
    """``(scope, name) -> TensorInfo`` decoded on first lookup; one object per key."""

    def __init__(self, graphs: dict[int, GraphProto]) -> None:
        self._graphs = graphs
        self._indexes: dict[int, tuple[dict[str, Any], list[Any] | None, dict[str, Any]]] = {}
        self._found: dict[TensorKey, Any] = {}
        self._types: dict[bytes, tuple] = {}  # a type's bytes -> (dtype, shape as a tuple)
        self._lock = threading.Lock()

    def _index(self, scope: int) -> tuple[dict[str, Any], list[Any] | None, dict[str, Any]]:
        """(last listing by name, all listings when a name repeats, first weight by name)."""
        found = self._indexes.get(scope)
        if found is None:
            g = self._graphs[scope]
            values = [*g.input, *g.value_info, *g.output]
            by_name = {v.name: v for v in values}
            weights: dict[str, Any] = {}
            for t in g.initializer:
                weights.setdefault(t.name, t)
            found = (by_name, values if len(by_name) < len(values) else None, weights)
            with self._lock:
                found = self._indexes.setdefault(scope, found)
        return found

    def get(self, key: TensorKey, default: Any = None) -> Any:  # noqa: D102 - Mapping's
        found = self._found.get(key, _MISSING)
        if found is _MISSING:
            found = self._decode(*key)
            with self._lock:  # one object per key: views cache labels by its id
                found = self._found.setdefault(key, found)
        return default if found is None else found

    def _decode(self, scope: int, name: str) -> TensorInfo | None:
        if scope not in self._graphs:
            return None
        by_name, repeated, weights = self._index(scope)
        value = by_name.get(name)
        info = self._typed(value) if value is not None else None
        if info is None and repeated is not None:
            info = next((i for v in reversed(repeated) if v.name == name
                         for i in [self._typed(v)] if i is not None), None)
        if info is None:
            weight = weights.get(name)
            if weight is not None:
                info = TensorInfo(dtype_name(weight.data_type), [int(d) for d in weight.dims])
        return info

    def _typed(self, value: Any) -> TensorInfo | None:
        """``value``'s TensorInfo; a type met before (by its bytes) is not decoded again:
        most of a model's values share a few types, and the decode walks protobuf fields
        one by one (0.8 s for 100,000 values, against 0.15 s serializing their types)."""
        raw = value.type.SerializeToString()
        known = self._types.get(raw)
        if known is None:
            dtype, shape = shape_of_type(value.type)
            known = self._types[raw] = (dtype, None if shape is None else tuple(shape))
        dtype, shape = known
        if dtype is None and shape is None:
            return None
        return TensorInfo(dtype, None if shape is None else list(shape))

    def __getitem__(self, key: TensorKey) -> TensorInfo:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def _keys(self) -> list[TensorKey]:
        keys: dict[TensorKey, None] = {}
        for scope in self._graphs:
            by_name, _, weights = self._index(scope)
            for name in [*by_name, *weights]:
                if self.get((scope, name)) is not None:
                    keys[(scope, name)] = None
        return list(keys)

    def __iter__(self) -> Iterator[TensorKey]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and len(key) == 2 and self.get(key) is not None  # type: ignore[arg-type]


class ModelTypes:
    """The :class:`~.parsed_model.LateParts` of a parsed model, from its :class:`Inference`.

    ``sources`` and ``weights`` are what the parse read from the model it was given, by
    scope; once the inferred model is decoded they are pointed at it instead.
    """

    def __init__(self, inference: Inference, source: ModelProto, paths: dict[int, SubgraphPath],
                 sources: dict[int, GraphSource],
                 weights: dict[int, tuple[list[Initializer], list[Initializer]]],
                 initializers: dict[TensorKey, Initializer]) -> None:
        self._inference = inference
        self._source = source
        self._paths = paths
        self._sources = sources
        self._weights = weights
        self._initializers = initializers
        self._lock = threading.Lock()
        self._graphs: dict[int, GraphProto] | None = None
        self._table: TensorTable | None = None

    def _typed_graphs(self) -> dict[int, GraphProto]:
        with self._lock:
            if self._graphs is None:
                typed = self._inference.typed()
                graphs = scope_graphs(typed, self._paths)
                if typed is not self._source:
                    self._repoint(graphs)
                self._source = None  # type: ignore[assignment]
                self._table = TensorTable(graphs)
                self._graphs = graphs
            return self._graphs

    def _repoint(self, graphs: dict[int, GraphProto]) -> None:
        """Read nodes' details and weights' values from the inferred model from now on."""
        for scope, g in graphs.items():
            source = self._sources.get(scope)
            if source is None or len(g.node) != len(source.graph.node):
                return  # not the model that was parsed: keep reading the given one
        for scope, g in graphs.items():
            self._sources[scope].graph = g
            dense, sparse = self._weights.get(scope, ([], []))
            for init, proto in zip(dense, g.initializer):
                init.proto = proto
            for init, sp in zip(sparse, g.sparse_initializer):
                init.proto = sp.values

    def tensors(self) -> TensorTable:
        """Every value's type by (scope, name), decoded on lookup."""
        self._typed_graphs()
        return self._table  # type: ignore[return-value]

    def _io(self, name: str) -> dict[str, Any]:
        info = self.tensors().get((0, name))
        return {"name": name, "dtype": info.dtype if info else None,
                "shape": info.shape if info else None}

    def inputs(self) -> list[dict[str, Any]]:
        """The main graph's inputs that are not weights."""
        g = self._typed_graphs()[0]
        return [self._io(v.name) for v in g.input if (0, v.name) not in self._initializers]

    def outputs(self) -> list[dict[str, Any]]:
        """The main graph's outputs."""
        return [self._io(v.name) for v in self._typed_graphs()[0].output]

    def warnings(self) -> list[str]:
        """Inference's and the checker's warnings."""
        return self._inference.warnings()
