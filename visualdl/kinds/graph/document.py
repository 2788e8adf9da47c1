"""One opened model: parsed graph, hierarchy and layout cache, and the queries on them.

Everything the API answers about a model goes through here, so the API module only
translates HTTP parameters; tests can exercise the same queries without a server.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from functools import cached_property, partial
from typing import Any

from visualdl.kinds.graph.collector import paused
from visualdl.kinds.graph.hierarchy import ROOT, Hierarchy
from visualdl.kinds.graph.jobs import ViewJobs
from visualdl.kinds.graph.layout import Layouter, Progress
from visualdl.kinds.graph.measure import Options
from visualdl.kinds.graph.parsed_model import GraphModel, Node
from visualdl.kinds.graph.tensor_values import format_shape, tensor_values
from visualdl.kinds.graph.view import ViewItems, visible_graph

__all__ = ["INITIAL_VISIBLE_LIMIT", "GraphDocument", "parse_node_id"]

#: Large graphs open collapsed to the deepest level that shows at most this many boxes.
INITIAL_VISIBLE_LIMIT = 600
#: A state with more boxes than this, or more groups to lay out, goes to a background job
#: (about half a second of work on this machine's slow cores).
BIG_BOXES = 8000
BIG_GROUPS = 1500
JOB_WAIT = 0.5  # a request waits this long for its job before answering with progress
MAX_SEARCH = 200
PREPARE_SLICE = 0.005  # seconds of prepare() between two looks at whether requests wait


class GraphDocument:
    """Queries on one parsed model (thread-safe: the layout cache has its own lock)."""

    def __init__(self, model: GraphModel) -> None:
        self.model = model
        self.hierarchy = Hierarchy(model)
        self.layouter = Layouter(self.hierarchy)
        self.items = ViewItems(self.hierarchy)
        self.jobs = ViewJobs()
        self.initial = self.layouter.normalize(
            self.hierarchy.initial_expanded(INITIAL_VISIBLE_LIMIT))
        self.parse_seconds = 0.0
        self.prepared = threading.Event()  # set once prepare() has ended: done, failed or closed

    def prepare(self, options: Options | None = None) -> Iterator[None]:
        """Build what any view needs and no collapse state changes, yielding every few
        milliseconds: every group's local edges, members and ports, every box at
        ``options`` (the page's default) and its id, every edge's tensor fields; then the
        layout of every group with all expanded, so that "expand all" only composes (a
        quarter of its view's time). The caller (kinds/graph/warmup.py) runs the steps
        between requests. A view made after finds them built; one made meanwhile builds
        what it needs itself (the caches are thread-safe)."""
        options = Options() if options is None else options
        h, layouter, model = self.hierarchy, self.layouter, self.model
        try:
            due = time.perf_counter() + PREPARE_SLICE
            ids = self.items.ids
            for path in list(h.groups):
                for member in layouter.structure(path).members:
                    layouter.box(member, options)
                    ids[member]  # noqa: B018 - made on first lookup
                h.ports(path)
                if time.perf_counter() > due:
                    yield
                    due = time.perf_counter() + PREPARE_SLICE
            yield
            tensors = self.items.tensors
            for i, edge in enumerate(model.edges):
                tensors[(edge.src, edge.tensor)]  # noqa: B018 - made on first lookup
                if not i % 64 and time.perf_counter() > due:
                    yield
                    due = time.perf_counter() + PREPARE_SLICE
            for _ in layouter.warm(self.everything, options):
                if time.perf_counter() > due:
                    yield
                    due = time.perf_counter() + PREPARE_SLICE
        finally:
            self.prepared.set()

    # -- summary ------------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """Metadata, counts, inputs/outputs and the initial collapse state."""
        m, h = self.model, self.hierarchy
        ops = Counter(n.op_type for n in m.nodes if n.role == "op")
        return {
            "metadata": m.metadata,
            "counts": {
                "nodes": m.op_count,
                "edges": len(m.edges),
                "inputs": len(m.inputs),
                "outputs": len(m.outputs),
                "initializers": len(m.initializers),
                "groups": len(h.groups) - 1,
                "subgraphs": sum(len(n.subgraphs) for n in m.nodes),
                "parameters": sum(i.summary["size"] for i in m.initializers.values()),
            },
            "inputs": m.inputs,
            "outputs": m.outputs,
            "op_types": dict(ops.most_common()),
            "depth": h.depth(),
            "initial_expanded": sorted(self.initial),
            "warnings": m.warnings,
        }

    def hierarchy_tree(self) -> dict[str, Any]:
        """Every group: label, parent, depth, op count, children (for an outline/expand all)."""
        return {
            "groups": [
                {"path": g.path, "label": g.label, "parent": g.parent, "depth": g.depth,
                 "ops": g.ops, "groups": list(g.groups), "nodes": len(g.nodes)}
                for p, g in self.hierarchy.groups.items() if p != ROOT
            ]
        }

    # -- view ---------------------------------------------------------------------------------
    def expanded_set(self, spec: str | list[str] | None) -> frozenset[str]:
        """``"initial"`` (default), ``"all"``, ``"none"``, or a list of group paths."""
        if spec is None or spec == "initial":
            return self.initial
        if spec == "all":
            return self.everything
        if spec == "none":
            return frozenset()
        return self.layouter.normalize(set(spec))

    @cached_property
    def everything(self) -> frozenset[str]:
        """The state with every group expanded: one object, so that the polls of an
        "expand all" job find it by a hash computed once."""
        return self.layouter.normalize(set(self.hierarchy.groups))

    def view(self, expanded: frozenset[str], options: Options,
             progress: Progress | None = None) -> dict[str, Any]:
        """The visible graph with coordinates for a collapse state."""
        with paused():
            return visible_graph(self.hierarchy, self.layouter, self.items, expanded, options,
                                 progress)

    def view_or_progress(self, expanded: frozenset[str], options: Options,
                         wait: float = JOB_WAIT) -> dict[str, Any]:
        """The view, laid out here when it is small, else by a background job: then the
        answer once the job is done (waiting up to ``wait`` seconds for it), or meanwhile
        ``{"pending": True, "progress": ...}``. Raises what the job raised.

        A poll costs no more than a lookup: it competes for the interpreter with the job
        it asks about (an "expand all" of 100,000 nodes ran a third slower while polled)."""
        key = (expanded, options)
        job = self.jobs.get(key)
        if job is None:
            if not self.is_big(expanded, options):
                return self.view(expanded, options)
            job = self.jobs.start(key, partial(self.view, expanded, options))
        if not job.finished.wait(wait):
            return {"pending": True, "progress": job.progress()}
        self.jobs.drop(key)  # handed out once: a big answer is not kept
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[return-value]

    def is_big(self, expanded: frozenset[str], options: Options) -> bool:
        """Whether a state is laid out by a background job: many boxes to answer, or many
        groups not laid out yet."""
        groups = self.hierarchy.groups
        boxes = sum(len(groups[p].nodes) + len(groups[p].groups) for p in expanded)
        boxes += len(groups[ROOT].nodes) + len(groups[ROOT].groups) - len(expanded)
        return boxes > BIG_BOXES or self.layouter.pending(expanded, options) > BIG_GROUPS

    # -- details ------------------------------------------------------------------------------
    def node(self, node_id: int) -> dict[str, Any]:
        """Everything about one node: attributes, inputs/outputs with types and weights."""
        node = self.model.nodes[node_id]
        return {
            "id": f"n{node.id}",
            "role": node.role,
            "name": node.name,
            "op_type": node.op_type,
            "domain": node.domain or "ai.onnx",
            "category": node.category,
            "group": self.hierarchy.node_group[node.id],
            "ancestors": self.hierarchy.ancestors(node.id),
            "doc": node.doc,
            "attributes": [{"name": a, "type": t, "value": v} for a, t, v in node.attributes],
            "inputs": [self._value(node, name, "in") for name in node.inputs],
            "outputs": [self._value(node, name, "out") for name in node.outputs],
            "subgraphs": node.subgraphs,
        }

    @cached_property
    def _links(self) -> tuple[dict[tuple[int, str], list[int]], dict[tuple[int, str], int]]:
        """(consumers of (producer, tensor), producer of (consumer, tensor)): built on the
        first node asked about, not while the first view of a big model waits."""
        consumers: dict[tuple[int, str], list[int]] = {}
        producer: dict[tuple[int, str], int] = {}
        for edge in self.model.edges:
            consumers.setdefault((edge.src, edge.tensor), []).append(edge.dst)
            producer[(edge.dst, edge.tensor)] = edge.src
        return consumers, producer

    def _value(self, node: Node, name: str, side: str) -> dict[str, Any]:
        if not name:
            return {"name": "", "optional": True}
        info = self.model.tensor(node.scope, name)
        out: dict[str, Any] = {
            "name": name,
            "dtype": info.dtype if info else None,
            "shape": info.shape if info else None,
            "shape_text": format_shape(info.shape) if info else "",
        }
        init = self.model.initializer(node.scope, name)
        if init is not None:
            out["initializer"] = init.summary
        if side == "in":
            src = self._links[1].get((node.id, name))
            if src is not None:
                out["producer"] = f"n{src}"
        else:
            out["consumers"] = [f"n{d}" for d in self._links[0].get((node.id, name), [])]
        return out

    def group(self, path: str) -> dict[str, Any]:
        """A group's label, op histogram and children."""
        h, nodes = self.hierarchy, self.model.nodes
        g = h.groups[path]
        ops = Counter(nodes[n].op_type for p in [path, *h.descendants(path)]
                      for n in h.groups[p].nodes if nodes[n].role == "op")
        return {
            "id": f"g:{path}", "path": path, "label": g.label, "depth": g.depth,
            "ops": g.ops, "op_types": dict(ops.most_common()),
            "ancestors": self.hierarchy.chain(path)[1:-1],
            "groups": list(g.groups), "nodes": [f"n{n}" for n in g.nodes],
        }

    def tensor(self, name: str, scope: int = 0, limit: int = 64) -> dict[str, Any]:
        """An initializer's summary, statistics and first values (KeyError if unknown)."""
        init = self.model.initializer(scope, name)
        if init is None:
            init = next((i for i in self.model.initializers.values() if i.name == name), None)
        if init is None:
            raise KeyError(name)
        return tensor_values(init.proto, self.model.base_dir, limit)

    # -- search -------------------------------------------------------------------------------
    def search(self, query: str, limit: int = MAX_SEARCH) -> dict[str, Any]:
        """Nodes whose name, op type or tensor names contain ``query`` (case-insensitive).

        Each match names the groups to expand to reveal it; exact op-type matches and
        name matches come before tensor matches.
        """
        q = query.strip().lower()
        hits: list[tuple[int, int, dict[str, Any]]] = []
        total = 0
        if q:
            for node in self.model.nodes:
                found = self._match(node, q)
                if found is None:
                    continue
                total += 1
                if len(hits) < limit:
                    rank, field, text = found
                    hits.append((rank, node.id, {
                        "id": f"n{node.id}", "name": node.name, "op_type": node.op_type,
                        "role": node.role, "match": field, "text": text,
                        "ancestors": self.hierarchy.ancestors(node.id),
                    }))
        hits.sort(key=lambda t: (t[0], t[1]))
        return {"query": query, "total": total, "matches": [h[2] for h in hits]}

    @staticmethod
    def _match(node: Node, q: str) -> tuple[int, str, str] | None:
        if node.op_type.lower() == q:
            return 0, "op_type", node.op_type
        if q in node.name.lower():
            return 1, "name", node.name
        if q in node.op_type.lower():
            return 2, "op_type", node.op_type
        for name in node.inputs + node.outputs:
            if name and q in name.lower():
                return 3, "tensor", name
        return None


def parse_node_id(text: str) -> int | None:
    """``"n12"`` -> 12; None for anything else."""
    m = re.fullmatch(r"n(\d{1,9})", text or "")
    return int(m.group(1)) if m else None
