"""The parsed graph: plain data the hierarchy, layout, search and API work on.

Every node of the main graph and of every If/Loop/Scan subgraph is one :class:`Node` with a
stable integer id; graph inputs and outputs are pseudo-nodes (``role`` ``input``/``output``)
so they can be drawn and connected like any op. Tensors are keyed by ``(scope, name)``
because a subgraph may reuse a name of its parent graph.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from onnx import TensorProto

from visualdl.kinds.graph.tensor_values import tensor_summary

__all__ = ["Edge", "GraphModel", "Initializer", "LateParts", "Node", "NodeDetails", "TensorInfo"]

TensorKey = tuple[int, str]  # (scope id, tensor name)


@dataclass(frozen=True)
class TensorInfo:
    """Type of one value, after shape inference; either part may be unknown (None)."""

    dtype: str | None
    shape: list[int | str] | None


class Initializer:
    """A weight: its summary is made on first use; its values are decoded only on request."""

    __slots__ = ("name", "scope", "proto", "_summary")

    def __init__(self, name: str, scope: int, summary: dict[str, Any] | None,
                 proto: TensorProto) -> None:
        self.name = name
        self.scope = scope
        self.proto = proto
        self._summary = summary

    @property
    def summary(self) -> dict[str, Any]:
        """Shape, dtype, element count and byte size (no values decoded)."""
        if self._summary is None:
            self._summary = tensor_summary(self.proto)
        return self._summary

    def __repr__(self) -> str:
        return f"Initializer(name={self.name!r}, scope={self.scope})"


class NodeDetails(Protocol):
    """Where a node's attributes and doc string are read from when first asked."""

    def details(self, index: int) -> tuple[list[tuple[str, str, str]], str]:
        """(attributes as (name, type, value), doc) of the ``index``-th node of a graph."""


class Node:
    """One op (or an input/output pseudo-node).

    ``attributes`` and ``doc`` are read from the model on first use (``source``): the first
    view of a big model needs neither, and formatting every attribute of 100,000 nodes was a
    tenth of its parse.
    """

    __slots__ = ("id", "role", "name", "op_type", "domain", "scope", "group", "label",
                 "category", "inputs", "outputs", "subgraphs", "_attributes", "_doc", "_source")

    def __init__(self, id: int, role: str, name: str, op_type: str, domain: str,  # noqa: A002
                 scope: int, group: str, label: str, category: str,
                 inputs: list[str] | None = None, outputs: list[str] | None = None,
                 attributes: list[tuple[str, str, str]] | None = None,
                 subgraphs: list[str] | None = None, doc: str | None = None,
                 source: tuple[NodeDetails, int] | None = None) -> None:
        self.id = id
        self.role = role  # "op" | "input" | "output"
        self.name = name
        self.op_type = op_type
        self.domain = domain
        self.scope = scope
        self.group = group  # the hierarchy path of the group that holds it ("" is the root)
        self.label = label  # the short name shown under the op type (last name component)
        self.category = category
        self.inputs = [] if inputs is None else inputs
        self.outputs = [] if outputs is None else outputs
        self.subgraphs = [] if subgraphs is None else subgraphs  # group paths of its subgraphs
        self._attributes = attributes  # (name, type, value)
        self._doc = doc
        self._source = source
        if source is None:
            self._attributes = [] if attributes is None else attributes
            self._doc = "" if doc is None else doc

    def _read_details(self) -> None:
        source, index = self._source  # type: ignore[misc]
        attributes, doc = source.details(index)
        if self._attributes is None:
            self._attributes = attributes
        if self._doc is None:
            self._doc = doc

    @property
    def attributes(self) -> list[tuple[str, str, str]]:
        """(name, type, readable value) of each attribute, in the model's order."""
        if self._attributes is None:
            self._read_details()
        return self._attributes  # type: ignore[return-value]

    @attributes.setter
    def attributes(self, value: list[tuple[str, str, str]]) -> None:
        self._attributes = value

    @property
    def doc(self) -> str:
        """The node's doc string (cut to 2,000 characters)."""
        if self._doc is None:
            self._read_details()
        return self._doc  # type: ignore[return-value]

    @doc.setter
    def doc(self, value: str) -> None:
        self._doc = value

    def __repr__(self) -> str:
        return f"Node(id={self.id}, role={self.role!r}, name={self.name!r}, op_type={self.op_type!r})"


class Edge(NamedTuple):
    """A tensor going from the node that produces it to one node that consumes it."""

    src: int
    dst: int
    tensor: str
    scope: int  # the scope where the tensor is defined (for its type)


class LateParts(Protocol):
    """What a model learns from shape inference and the checker, which may still run."""

    def tensors(self) -> Mapping[TensorKey, TensorInfo]:
        """Every value's type by (scope, name)."""

    def inputs(self) -> list[dict[str, Any]]:
        """The graph's inputs (weights excluded) with dtype and shape."""

    def outputs(self) -> list[dict[str, Any]]:
        """The graph's outputs with dtype and shape."""

    def warnings(self) -> list[str]:
        """What inference and the checker said."""


class GraphModel:
    """A whole parsed model.

    ``tensors``, ``inputs``, ``outputs`` and ``warnings`` come from shape inference and the
    checker: given, or from ``late``, which the first use of each waits for (the parse of a
    big model returns while they run in another process).
    """

    def __init__(self, nodes: list[Node], edges: list[Edge],
                 tensors: Mapping[TensorKey, TensorInfo] | None,
                 initializers: dict[TensorKey, Initializer], metadata: dict[str, Any],
                 inputs: list[dict[str, Any]] | None, outputs: list[dict[str, Any]] | None,
                 warnings: list[str] | None, base_dir: str | None,
                 scope_parent: dict[int, int], late: LateParts | None = None) -> None:
        self.nodes = nodes
        self.edges = edges
        self.initializers = initializers
        self.metadata = metadata
        self.base_dir = base_dir  # where external data may be read from (None: not available)
        self.scope_parent = scope_parent  # subgraph scope -> enclosing scope (root has none)
        self._tensors = tensors
        self._inputs = inputs
        self._outputs = outputs
        self._warnings = warnings
        self._late = late

    @property
    def tensors(self) -> Mapping[TensorKey, TensorInfo]:
        """Types of values by (scope, name), after shape inference."""
        if self._tensors is None:
            self._tensors = self._late.tensors()  # type: ignore[union-attr]
        return self._tensors

    @property
    def inputs(self) -> list[dict[str, Any]]:
        """The graph's inputs (weights excluded): name, dtype, shape."""
        if self._inputs is None:
            self._inputs = self._late.inputs()  # type: ignore[union-attr]
        return self._inputs

    @property
    def outputs(self) -> list[dict[str, Any]]:
        """The graph's outputs: name, dtype, shape."""
        if self._outputs is None:
            self._outputs = self._late.outputs()  # type: ignore[union-attr]
        return self._outputs

    @property
    def warnings(self) -> list[str]:
        """What shape inference and onnx.checker said (empty when all is well)."""
        if self._warnings is None:
            self._warnings = self._late.warnings()  # type: ignore[union-attr]
        return self._warnings

    def tensor(self, scope: int, name: str) -> TensorInfo | None:
        """The type of ``name`` as seen from ``scope`` (inner scopes shadow outer ones)."""
        return self._visible(self.tensors, scope, name)

    def initializer(self, scope: int, name: str) -> Initializer | None:
        """The initializer ``name`` visible from ``scope``, if any."""
        return self._visible(self.initializers, scope, name)

    def _visible(self, table: Mapping[TensorKey, Any], scope: int, name: str) -> Any:
        """``table[(scope, name)]``, looked up from ``scope`` out to the root scope."""
        while True:
            found = table.get((scope, name))
            if found is not None or scope not in self.scope_parent:
                return found
            scope = self.scope_parent[scope]

    @property
    def op_count(self) -> int:
        """Ops only (the input/output pseudo-nodes are not counted)."""
        return sum(1 for n in self.nodes if n.role == "op")
