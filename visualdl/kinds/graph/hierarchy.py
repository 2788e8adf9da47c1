"""Groups from name scopes, and what is visible for a given set of expanded groups.

``/layer1/layer1.0/conv1/Conv`` puts the node in group ``layer1/layer1.0/conv1``. Groups
holding a single node are dissolved (a box around one op adds nothing), and a group whose
only content is one child group is merged with it (``encoder/layers`` instead of two
nested frames). Subgraphs of If/Loop/Scan are groups under their control-flow node.

For routing, every edge is also split once, here, into *local* edges per group: an edge
from ``a/x`` to ``b/y`` is ``a -> b`` in the root, ``x -> out-port`` in ``a`` and
``in-port -> y`` in ``b``. Those never change with the collapse state, so the layout of a
group depends only on its own members and what is expanded inside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from visualdl.kinds.graph.parsed_model import GraphModel

__all__ = ["ROOT", "Group", "Hierarchy", "LocalEdge", "Member", "PortKey"]

ROOT = ""
Member = tuple[str, object]  # ("n", node id) | ("g", group path) | ("in"|"out", PortKey)
PortKey = tuple[int, str]  # (producer node id, tensor name): one port per tensor crossing
LocalEdge = tuple[Member, Member, PortKey]


@dataclass
class Group:
    """One name scope (or subgraph body)."""

    path: str
    label: str
    parent: str | None
    depth: int
    groups: list[str] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list)
    ops: int = 0  # ops in the whole subtree


class Hierarchy:
    """The group tree of a GraphModel and its per-group local edges."""

    def __init__(self, model: GraphModel) -> None:
        self.model = model
        self.groups: dict[str, Group] = {}
        self.node_group: list[str] = [ROOT] * len(model.nodes)
        self._chains: dict[str, tuple[str, ...]] = {}
        self._port_links: dict[str, tuple[dict, dict]] = {}
        self._edge_of: dict[PortKey, int] | None = None
        self._build()
        #: group -> its local edges (source member, target member, the tensor's port key)
        self.local_edges: dict[str, dict[LocalEdge, None]] = {p: {} for p in self.groups}
        self._split_edges()

    # -- tree -----------------------------------------------------------------------------
    def _build(self) -> None:
        raw_nodes: dict[str, list[int]] = {}
        for node in self.model.nodes:
            raw_nodes.setdefault(node.group, []).append(node.id)
        children: dict[str, set[str]] = {ROOT: set()}
        linked: set[str] = set()
        for path in list(raw_nodes):
            while path and path not in linked:
                linked.add(path)
                parent = path.rsplit("/", 1)[0] if "/" in path else ROOT
                children.setdefault(path, set())
                children.setdefault(parent, set()).add(path)
                path = parent
        sizes = self._raw_sizes(children, raw_nodes)
        self._emit(children, raw_nodes, sizes)

    @staticmethod
    def _raw_sizes(children: dict[str, set[str]], raw_nodes: dict[str, list[int]]) -> dict[str, int]:
        order = _post_order(children)
        sizes: dict[str, int] = {}
        for path in order:
            sizes[path] = len(raw_nodes.get(path, ())) + sum(sizes[c] for c in children[path])
        return sizes

    def _emit(self, children: dict[str, set[str]], raw_nodes: dict[str, list[int]],
              sizes: dict[str, int]) -> None:
        """Create the simplified groups top-down (iteratively: names can be deep)."""
        self.groups[ROOT] = Group(ROOT, "", None, 0)
        stack: list[tuple[str, str]] = [(ROOT, ROOT)]  # (raw path, simplified group it feeds)
        while stack:
            raw, target = stack.pop()
            group = self.groups[target]
            for nid in raw_nodes.get(raw, ()):
                group.nodes.append(nid)
                self.node_group[nid] = target
            for child in sorted(children.get(raw, ())):
                if sizes[child] <= 1:  # dissolve: its single node joins this group
                    stack.append((child, target))
                    continue
                label_parts = [child.rsplit("/", 1)[-1]]
                inner = child
                while not raw_nodes.get(inner) and len(children.get(inner, ())) == 1:
                    only = next(iter(children[inner]))
                    if sizes[only] <= 1:
                        break
                    label_parts.append(only.rsplit("/", 1)[-1])
                    inner = only
                self.groups[inner] = Group(inner, "/".join(label_parts), target, group.depth + 1)
                group.groups.append(inner)
                stack.append((inner, inner))
        self._count()

    def _count(self) -> None:
        kids = {p: set(g.groups) for p, g in self.groups.items()}
        for path in _post_order(kids):
            g = self.groups[path]
            g.ops = sum(1 for n in g.nodes if self.model.nodes[n].role == "op") + sum(
                self.groups[c].ops for c in g.groups)

    # -- queries --------------------------------------------------------------------------
    def chain(self, group: str) -> list[str]:
        """Groups from the root down to ``group`` (both included); a fresh list."""
        return list(self._chain(group))

    def _chain(self, group: str) -> tuple[str, ...]:
        """``chain`` remembered: routing asks it twice per edge of a 100,000-node view."""
        found = self._chains.get(group)
        if found is not None:
            return found
        missing: list[str] = []  # walked up iteratively: names can be deep
        path: str | None = group
        while path is not None and path not in self._chains:
            missing.append(path)
            path = self.groups[path].parent
        found = () if path is None else self._chains[path]
        for p in reversed(missing):
            found = found + (p,)
            self._chains[p] = found
        return found

    def ancestors(self, node_id: int) -> list[str]:
        """The groups holding a node, outermost first, without the root."""
        return list(self._chain(self.node_group[node_id])[1:])

    def descendants(self, path: str) -> list[str]:
        """All groups inside ``path`` (not itself)."""
        out, stack = [], list(self.groups[path].groups)
        while stack:
            p = stack.pop()
            out.append(p)
            stack.extend(self.groups[p].groups)
        return out

    def depth(self) -> int:
        """The deepest group level (0 when there are no groups)."""
        return max(g.depth for g in self.groups.values())

    def expanded_to(self, level: int) -> set[str]:
        """Every group shallower than or at ``level`` expanded (root is level 0)."""
        return {p for p, g in self.groups.items() if p != ROOT and g.depth <= level}

    def visible_count(self, level: int) -> int:
        """How many boxes ``expanded_to(level)`` shows (nodes plus collapsed groups)."""
        nodes = sum(len(g.nodes) for g in self.groups.values() if g.depth <= level)
        boxes = sum(1 for g in self.groups.values() if g.depth == level + 1)
        return nodes + boxes

    def initial_expanded(self, limit: int) -> set[str]:
        """The deepest uniform level whose visible count stays within ``limit``."""
        best = 0
        for level in range(1, self.depth() + 1):
            if self.visible_count(level) > limit:
                break
            best = level
        return self.expanded_to(best)

    # -- routing --------------------------------------------------------------------------
    def segments(self, a: Member, group_a: str, b: Member, group_b: str,
                 key: PortKey) -> list[tuple[str, LocalEdge]]:
        """The local edges (group, edge) that an edge from ``a`` (held by ``group_a``) to
        ``b`` (held by ``group_b``) is split into, in route order: up and out of ``a``'s
        groups, across their innermost common group, down into ``b``'s."""
        ca, cb = self._chain(group_a), self._chain(group_b)
        common = 0
        while common < min(len(ca), len(cb)) and ca[common] == cb[common]:
            common += 1
        out: list[tuple[str, LocalEdge]] = []
        for i in range(len(ca) - 1, common - 1, -1):
            inner = ("g", ca[i + 1]) if i + 1 < len(ca) else a
            out.append((ca[i], (inner, ("out", key), key)))
        mid_a = ("g", ca[common]) if len(ca) > common else a
        mid_b = ("g", cb[common]) if len(cb) > common else b
        out.append((ca[common - 1], (mid_a, mid_b, key)))
        for i in range(common, len(cb)):
            inner = ("g", cb[i + 1]) if i + 1 < len(cb) else b
            out.append((cb[i], (("in", key), inner, key)))
        return out

    def visible_links(self, expanded: frozenset[str] | set[str]) -> dict[LocalEdge, None]:
        """(visible source, visible target, port key) of every edge drawn for a state whose
        ancestors are all expanded (a normalized state).

        Found from the local edges of the visible groups, not from every edge of the model:
        the cost follows what is shown, so expanding one group of a 100,000-node model
        does not walk its 100,000 edges. An edge between two members of a visible group
        ends at the member itself when it is drawn as a box, or continues inside it when it
        is expanded: from the member that feeds its out-port, to those its in-port feeds.
        """
        out: dict[LocalEdge, None] = {}
        for path in (ROOT, *expanded):
            for u, v, key in self.local_edges[path]:
                if u[0] in ("in", "out") or v[0] in ("in", "out"):
                    continue  # drawn where the edge crosses its innermost common group
                a = self._visible_source(u, key, expanded)
                for b in self._visible_targets(v, key, expanded):
                    out[(a, b, key)] = None
        return out

    def _visible_source(self, member: Member, key: PortKey, expanded: frozenset[str] | set[str]) -> Member:
        while member[0] == "g" and member[1] in expanded:
            member = self._ports(member[1])[0][key]  # type: ignore[index]
        return member

    def _visible_targets(self, member: Member, key: PortKey,
                         expanded: frozenset[str] | set[str]) -> list[Member]:
        if member[0] != "g" or member[1] not in expanded:
            return [member]
        return [t for inner in self._ports(member[1])[1][key]  # type: ignore[index]
                for t in self._visible_targets(inner, key, expanded)]

    def _ports(self, path: str) -> tuple[dict[PortKey, Member], dict[PortKey, list[Member]]]:
        """(member feeding each out-port, members fed by each in-port) of a group."""
        found = self._port_links.get(path)
        if found is None:
            feeds: dict[PortKey, Member] = {}
            fed: dict[PortKey, list[Member]] = {}
            for u, v, key in self.local_edges[path]:
                if v[0] == "out":
                    feeds[key] = u
                elif u[0] == "in":
                    fed.setdefault(key, []).append(v)
            found = self._port_links[path] = (feeds, fed)
        return found

    def edge_of(self, key: PortKey) -> int:
        """An edge of the model carrying this (producer, tensor): for the tensor's type."""
        if self._edge_of is None:
            index: dict[PortKey, int] = {}
            for i, edge in enumerate(self.model.edges):
                index.setdefault((edge.src, edge.tensor), i)
            self._edge_of = index
        return self._edge_of[key]

    def _split_edges(self) -> None:
        for edge in self.model.edges:
            for group, local in self.segments(("n", edge.src), self.node_group[edge.src],
                                              ("n", edge.dst), self.node_group[edge.dst],
                                              (edge.src, edge.tensor)):
                self.local_edges[group][local] = None


def _post_order(children: dict[str, set[str]] | dict[str, list[str]]) -> list[str]:
    """Children before parents, iteratively."""
    order: list[str] = []
    stack: list[tuple[str, bool]] = [(ROOT, False)]
    while stack:
        path, done = stack.pop()
        if done:
            order.append(path)
            continue
        stack.append((path, True))
        for child in children.get(path, ()):
            stack.append((child, False))
    return order
