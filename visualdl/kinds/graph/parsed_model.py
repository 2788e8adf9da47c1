"""The parsed graph: plain data the hierarchy, layout, search and API work on.

Every node of the main graph and of every If/Loop/Scan subgraph is one :class:`Node` with a
stable integer id; graph inputs and outputs are pseudo-nodes (``role`` ``input``/``output``)
so they can be drawn and connected like any op. Tensors are keyed by ``(scope, name)``
because a subgraph may reuse a name of its parent graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from onnx import TensorProto

__all__ = ["Edge", "GraphModel", "Initializer", "Node", "TensorInfo"]

TensorKey = tuple[int, str]  # (scope id, tensor name)


@dataclass(frozen=True)
class TensorInfo:
    """Type of one value, after shape inference; either part may be unknown (None)."""

    dtype: str | None
    shape: list[int | str] | None


@dataclass
class Initializer:
    """A weight: its summary is cheap; its values are decoded only on request."""

    name: str
    scope: int
    summary: dict[str, Any]
    proto: TensorProto = field(repr=False)


@dataclass
class Node:
    """One op (or an input/output pseudo-node)."""

    id: int
    role: str  # "op" | "input" | "output"
    name: str
    op_type: str
    domain: str
    scope: int
    group: str  # the hierarchy path of the group that holds it ("" is the root)
    label: str  # the short name shown under the op type (last name component)
    category: str
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    attributes: list[tuple[str, str, str]] = field(default_factory=list)  # (name, type, value)
    subgraphs: list[str] = field(default_factory=list)  # group paths of its subgraphs
    doc: str = ""


@dataclass(frozen=True)
class Edge:
    """A tensor going from the node that produces it to one node that consumes it."""

    src: int
    dst: int
    tensor: str
    scope: int  # the scope where the tensor is defined (for its type)


@dataclass
class GraphModel:
    """A whole parsed model."""

    nodes: list[Node]
    edges: list[Edge]
    tensors: dict[TensorKey, TensorInfo]
    initializers: dict[TensorKey, Initializer]
    metadata: dict[str, Any]
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    warnings: list[str]
    base_dir: str | None  # where external data may be read from (None: not available)
    scope_parent: dict[int, int]  # subgraph scope -> enclosing scope (root scope 0 has none)

    def tensor(self, scope: int, name: str) -> TensorInfo | None:
        """The type of ``name`` as seen from ``scope`` (inner scopes shadow outer ones)."""
        return self._visible(self.tensors, scope, name)

    def initializer(self, scope: int, name: str) -> Initializer | None:
        """The initializer ``name`` visible from ``scope``, if any."""
        return self._visible(self.initializers, scope, name)

    def _visible(self, table: dict[TensorKey, Any], scope: int, name: str) -> Any:
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
