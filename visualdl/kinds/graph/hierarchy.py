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

import threading
from collections.abc import Iterator, Mapping

import numpy as np

from visualdl.kinds.graph.parsed_model import GraphModel

__all__ = ["ROOT", "Group", "Hierarchy", "LocalEdge", "LocalEdges", "Member", "PortKey", "Segment"]

ROOT = ""
Member = tuple[str, object]  # ("n", node id) | ("g", group path) | ("in"|"out", PortKey)
PortKey = tuple[int, str]  # (producer node id, tensor name): one port per tensor crossing
LocalEdge = tuple[Member, Member, PortKey]
Segment = tuple[str, int]  # (group, index of one of its local edges): a piece of a route


class Group:
    """One name scope (or subgraph body). A plain class with slots: a 100,000-node model
    has tens of thousands of groups, made while its first view waits."""

    __slots__ = ("path", "label", "parent", "depth", "groups", "nodes", "ops")

    def __init__(self, path: str, label: str, parent: str | None, depth: int,
                 groups: list[str] | None = None, nodes: list[int] | None = None,
                 ops: int = 0) -> None:
        self.path = path
        self.label = label
        self.parent = parent
        self.depth = depth
        self.groups: list[str] = [] if groups is None else groups  # child groups
        self.nodes: list[int] = [] if nodes is None else nodes  # nodes held directly
        self.ops = ops  # ops in the whole subtree

    def __repr__(self) -> str:
        return f"Group(path={self.path!r}, depth={self.depth}, ops={self.ops})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Group):
            return NotImplemented
        return all(getattr(self, a) == getattr(other, a) for a in Group.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it replaces


class Hierarchy:
    """The group tree of a GraphModel and its per-group local edges."""

    def __init__(self, model: GraphModel) -> None:
        self.model = model
        self.groups: dict[str, Group] = {}
        self.node_group: list[str] = [ROOT] * len(model.nodes)
        self._chains: dict[str, tuple[str, ...]] = {}
        self._port_links: dict[str, tuple[dict, dict]] = {}
        self._build()
        #: group -> its local edges (source member, target member, the tensor's port key),
        #: each group's split out of the model's edges when first asked
        self.local_edges: Mapping[str, dict[LocalEdge, None]] = LocalEdges(self)

    # -- tree -----------------------------------------------------------------------------
    def _build(self) -> None:
        raw_nodes: dict[str, list[int]] = {}  # name scope -> its nodes, in the model's order
        for nid, path in enumerate([n.group for n in self.model.nodes]):
            held = raw_nodes.get(path)
            if held is None:
                raw_nodes[path] = [nid]
            else:
                held.append(nid)
        parent_of: dict[str, str] = {}  # every scope and the scopes above it
        for path in raw_nodes:
            while path and path not in parent_of:
                parent_of[path] = parent = path.rpartition("/")[0]
                path = parent
        # Sorted, a scope comes before everything inside it: children lists come out
        # sorted, and the reverse order visits children before parents.
        paths = sorted(parent_of)
        children: dict[str, list[str]] = {p: [] for p in paths}
        children[ROOT] = []
        sizes = dict.fromkeys(children, 0)
        for p, held in raw_nodes.items():
            sizes[p] = len(held)
        for p in reversed(paths):
            sizes[parent_of[p]] += sizes[p]
        for p in paths:
            children[parent_of[p]].append(p)
        self._emit(children, raw_nodes, sizes)

    def _emit(self, children: dict[str, list[str]], raw_nodes: dict[str, list[int]],
              sizes: dict[str, int]) -> None:
        """Create the simplified groups top-down (iteratively: names can be deep)."""
        groups = self.groups
        groups[ROOT] = Group(ROOT, "", None, 0)
        node_group = self.node_group
        stack: list[tuple[str, str]] = [(ROOT, ROOT)]  # (raw path, simplified group it feeds)
        push, pop = stack.append, stack.pop
        while stack:
            raw, target = pop()
            group = groups[target]
            held = raw_nodes.get(raw)
            if held:
                group.nodes.extend(held)
                for nid in held:
                    node_group[nid] = target
            for child in children[raw]:
                if sizes[child] <= 1:  # dissolve: its single node joins this group
                    push((child, target))
                    continue
                label_parts = [child.rpartition("/")[2]]
                inner = child
                while inner not in raw_nodes and len(children[inner]) == 1:
                    only = children[inner][0]
                    if sizes[only] <= 1:
                        break
                    label_parts.append(only.rpartition("/")[2])
                    inner = only
                groups[inner] = Group(inner, "/".join(label_parts), target, group.depth + 1)
                group.groups.append(inner)
                push((inner, inner))
        self._count()

    def _count(self) -> None:
        """Ops in each group's subtree; a group is made after its parent, so children first."""
        groups, node_group = self.groups, self.node_group
        ops = {path: len(g.nodes) for path, g in groups.items()}
        for node in self.model.nodes:
            if node.role != "op":  # the input/output pseudo-nodes
                ops[node_group[node.id]] -= 1
        for path in reversed(list(groups)):
            g = groups[path]
            g.ops = ops[path]
            if g.parent is not None:
                ops[g.parent] += g.ops

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
    def visible_links(self, expanded: frozenset[str] | set[str]) -> dict[LocalEdge, list[Segment]]:
        """(visible source, visible target, port key) of every edge drawn for a state whose
        ancestors are all expanded (a normalized state), each with the local edges its
        route is made of, in route order: up and out of the source's groups, across their
        innermost common group, down into the target's.

        Found from the local edges of the visible groups, not from every edge of the model:
        the cost follows what is shown, so expanding one group of a 100,000-node model
        does not walk its 100,000 edges. An edge between two members of a visible group
        ends at the member itself when it is drawn as a box, or continues inside it when it
        is expanded: from the member that feeds its out-port, to those its in-port feeds.
        """
        out: dict[LocalEdge, list[Segment]] = {}
        ports = self.ports
        for path in (ROOT, *sorted(expanded)):  # sorted: the same answer in every process
            for index, (u, v, key) in enumerate(self.local_edges[path]):
                if u[0] in ("in", "out") or v[0] in ("in", "out"):
                    continue  # drawn where the edge crosses its innermost common group
                up: list[Segment] = [(path, index)]
                a = u
                while a[0] == "g" and a[1] in expanded:
                    inner = a[1]
                    a, i = ports(inner)[0][key]  # type: ignore[index]
                    up.append((inner, i))
                if len(up) > 1:
                    up.reverse()
                if v[0] != "g" or v[1] not in expanded:  # most edges: one box to another
                    out.setdefault((a, v, key), up)
                    continue
                for b, down in self._visible_targets(v, key, expanded):
                    out.setdefault((a, b, key), up + down)
        return out

    def _visible_targets(self, member: Member, key: PortKey, expanded: frozenset[str] | set[str]
                         ) -> list[tuple[Member, list[Segment]]]:
        """The boxes an edge arriving at ``member`` ends at, each with the local edges
        from ``member``'s in-port down to it."""
        if member[0] != "g" or member[1] not in expanded:
            return [(member, [])]
        path = member[1]
        return [(target, [(path, i), *down])  # type: ignore[list-item]
                for inner, i in self.ports(path)[1][key]  # type: ignore[index]
                for target, down in self._visible_targets(inner, key, expanded)]

    def ports(self, path: str) -> tuple[dict[PortKey, tuple[Member, int]],
                                        dict[PortKey, list[tuple[Member, int]]]]:
        """(member feeding each out-port, members fed by each in-port) of a group, each
        with the index of that local edge in the group's ``local_edges``."""
        found = self._port_links.get(path)
        if found is None:
            feeds: dict[PortKey, tuple[Member, int]] = {}
            fed: dict[PortKey, list[tuple[Member, int]]] = {}
            for index, (u, v, key) in enumerate(self.local_edges[path]):
                if v[0] == "out":
                    feeds[key] = (u, index)
                elif u[0] == "in":
                    fed.setdefault(key, []).append((v, index))
            found = self._port_links[path] = (feeds, fed)
        return found

    def edge_of(self, key: PortKey) -> int:
        """An edge of the model carrying this (producer, tensor): for the tensor's type
        (the first such edge in the model's order)."""
        return self.local_edges.edge_of(key)  # type: ignore[attr-defined]


class LocalEdges(Mapping):
    """``group -> {local edge: None}``: every model edge split into the groups it crosses,
    one group at a time on first use.

    Which groups an edge touches (those from its source's group up to the innermost group
    holding both ends, and down to its target's) is found for all edges at once with numpy;
    the Python tuples of a group's local edges are made only when that group is laid out or
    shown. The first view of a 100,000-node model shows a few groups, not its 40,000. A
    group's local edges are in the order of the model's edges, as if split one edge at a
    time (a local edge shared by several edges comes with the first).
    """

    def __init__(self, h: Hierarchy) -> None:
        self._h = h
        self._done: dict[str, dict[LocalEdge, None]] = {}
        self._lock = threading.Lock()
        edges = h.model.edges
        paths = list(h.groups)
        index = {p: i for i, p in enumerate(paths)}
        self._index = index
        parent = np.array([index[h.groups[p].parent] if p else 0 for p in paths], np.int64)
        depth = np.array([h.groups[p].depth for p in paths], np.int64)
        group = np.array([index[p] for p in h.node_group], np.int64)
        src = np.fromiter((e.src for e in edges), np.int64, len(edges))
        dst = np.fromiter((e.dst for e in edges), np.int64, len(edges))
        ga, gb = group[src], group[dst]
        lca = _common(ga, gb, parent, depth)
        at = [lca]  # (group, edge) pairs: the common group, then each side's way up to it
        ids = [np.arange(len(edges))]
        for start in (ga, gb):
            cur, which = start, np.arange(len(edges))
            while True:
                keep = cur != lca[which]
                cur, which = cur[keep], which[keep]
                if not len(cur):
                    break
                at.append(cur)
                ids.append(which)
                cur = parent[cur]
        groups_at, edge_ids = np.concatenate(at), np.concatenate(ids)
        order = np.lexsort((edge_ids, groups_at))
        self._edges = edge_ids[order]
        self._bounds: list[int] = np.searchsorted(groups_at[order],
                                                  np.arange(len(paths) + 1)).tolist()
        self._lca: list[int] = lca.tolist()  # read one edge at a time: Python ints
        self._chains: list[tuple[str, ...]] | None = None
        self._edge_of: dict[PortKey, int] | None = None

    def __getitem__(self, path: str) -> dict[LocalEdge, None]:
        found = self._done.get(path)
        if found is None:
            found = self._split(path)
            with self._lock:
                found = self._done.setdefault(path, found)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._h.groups)

    def __len__(self) -> int:
        return len(self._h.groups)

    def _split(self, path: str) -> dict[LocalEdge, None]:
        i = self._index[path]  # KeyError for an unknown group, as a dict would
        edges, lca, chains = self._h.model.edges, self._lca, self._node_chains()
        d = self._h.groups[path].depth
        inner = d + 1
        out: dict[LocalEdge, None] = {}
        for e in self._edges[self._bounds[i]:self._bounds[i + 1]].tolist():
            edge = edges[e]
            src = edge.src
            key = (src, edge.tensor)
            ca = chains[src]
            if lca[e] == i:
                cb = chains[edge.dst]
                a = ("g", ca[inner]) if len(ca) > inner else ("n", src)
                b = ("g", cb[inner]) if len(cb) > inner else ("n", edge.dst)
                out[(a, b, key)] = None
            elif len(ca) > d and ca[d] == path:  # on the way up from the source
                a = ("g", ca[inner]) if len(ca) > inner else ("n", src)
                out[(a, ("out", key), key)] = None
            else:  # on the way down to the target
                cb = chains[edge.dst]
                b = ("g", cb[inner]) if len(cb) > inner else ("n", edge.dst)
                out[(("in", key), b, key)] = None
        return out

    def _node_chains(self) -> list[tuple[str, ...]]:
        """Each node's groups from the root down (shared tuples, one per group)."""
        found = self._chains
        if found is None:
            chain = self._h._chain
            found = self._chains = [chain(g) for g in self._h.node_group]
        return found

    def edge_of(self, key: PortKey) -> int:
        """The first model edge from ``key[0]`` carrying tensor ``key[1]``."""
        index = self._edge_of
        if index is None:  # built in C loops: zips of the edges' fields, last wins, reversed
            edges = self._h.model.edges
            keys = zip([e.src for e in reversed(edges)], [e.tensor for e in reversed(edges)])
            index = self._edge_of = dict(zip(keys, range(len(edges) - 1, -1, -1)))
        return index[key]


def _common(a: np.ndarray, b: np.ndarray, parent: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """The innermost common group of each pair (a[i], b[i]) of group indices."""
    a, b = a.copy(), b.copy()
    for x, y in ((a, b), (b, a)):  # lift the deeper one to the other's depth
        while True:
            deeper = depth[x] > depth[y]
            if not deeper.any():
                break
            x[deeper] = parent[x[deeper]]
    while True:
        differ = a != b
        if not differ.any():
            return a
        a[differ] = parent[a[differ]]
        b[differ] = parent[b[differ]]
