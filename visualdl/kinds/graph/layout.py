"""Layered layout of each group with igraph's Sugiyama layout, composed into one picture.

Each expanded group is laid out on its own: its members (nodes, collapsed groups and
already laid-out expanded groups as big boxes) plus one *port* per tensor entering or
leaving it, pinned to the first and last layer. igraph's C core orders the layers and
returns the dummy points of long edges; here those are turned into pixel positions with
each box's real size. Edges only run through the gaps between layers and through the
dummy slots, never through a box, and an edge into a nested group continues from the
group's port, so whole routes avoid nodes.

Two caches make it scale. Every group's result is cached by what is expanded inside it,
so expanding one group re-lays out only that group and its ancestors. And a result is
kept *by position* (boxes in member order, routes in local-edge order) under a key of the
group's shape (its local edges as index pairs, its members' sizes, its expanded members'
layouts): the 24 identical blocks of a transformer, or the thousands of a deep ResNet,
are laid out once and shared, which is what makes "expand all" on 100,000 nodes fast.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from statistics import median

from visualdl.kinds.graph.hierarchy import ROOT, Hierarchy, LocalEdge, Member
from visualdl.kinds.graph.igraph_lib import igraph
from visualdl.kinds.graph.measure import GROUP_HEADER, GROUP_PAD, Box, Options, group_box, node_box

__all__ = ["Layouter", "LocalLayout", "Placed", "Progress"]

NODE_GAP = 22.0  # between boxes in one layer
DUMMY_GAP = 10.0  # next to an edge passing through a layer
RANK_GAP = 34.0  # between layers (room for the shape labels)
ROOT_PAD = 20.0
CACHE_SIZE = 200_000  # group layouts kept per model (a 100,000-node model has ~40,000 groups)

#: ``progress(done, total)``: groups laid out so far of those the state needs.
Progress = Callable[[int, int], None]
_uids = itertools.count()


@dataclass
class LocalLayout:
    """One group's layout, relative to its own box, by position; sizes along (minor, major).

    Shared by every group of the same shape, so it names no node: ``boxes`` follow the
    group's members, ``ports`` its ports and ``routes`` its local edges
    (:meth:`Layouter.structure`), ``subs`` the layouts of its expanded members.
    """

    minor: float
    major: float
    boxes: list[tuple[float, float, float, float]]  # minor0, major0, minor, major
    ports: list[float]  # minor offset on the box border
    routes: list[list[tuple[float, float]]]
    subs: list[LocalLayout | None]
    uid: int = field(default_factory=lambda: next(_uids))


@dataclass
class Structure:
    """What of a group never changes with the collapse state: members, ports, local edges."""

    members: list[Member]  # nodes, then child groups
    ports: list[Member]  # ("in", key) ports, then ("out", key) ports
    edges: list[LocalEdge]
    n_in: int
    pairs: list[tuple[int, int]]  # edges as indices into members + ports
    port_index: dict[Member, int]
    shape: tuple  # what the layout depends on besides sizes


@dataclass
class Placed:
    """The composed picture in absolute (x, y) pixels."""

    width: float
    height: float
    items: dict[Member, tuple[float, float, float, float]]  # visible node / collapsed group
    frames: dict[str, tuple[float, float, float, float]]  # expanded groups (not the root)
    #: each laid-out group's origin (minor, major) and layout: its local routes, offset
    #: from there, are the pieces of the edges drawn (joined per edge by the view)
    origins: dict[str, tuple[float, float, LocalLayout]]
    boxes: dict[Member, Box]


class Layouter:
    """Lays out a hierarchy for any collapse state, caching each group's layout.

    Thread-safe, and no lock is held while a group is laid out: a long "expand all" in a
    background job never blocks a small expand asked for meanwhile.
    """

    def __init__(self, hierarchy: Hierarchy) -> None:
        self.h = hierarchy
        self.model = hierarchy.model
        self._cache: OrderedDict[tuple, LocalLayout] = OrderedDict()  # by group and state
        self._shared: OrderedDict[tuple, LocalLayout] = OrderedDict()  # by shape
        self._structures: dict[str, Structure] = {}
        self._boxes: dict[tuple[Member, Options], Box] = {}
        self._lock = threading.Lock()
        self._last_inside: tuple[frozenset[str], dict[str, frozenset[str]]] | None = None
        self.misses = 0  # groups laid out for a new state (their own or one inside changed)
        self.computed = 0  # of those, the ones whose shape had not been laid out before

    # -- public -------------------------------------------------------------------------------
    def normalize(self, expanded: set[str] | frozenset[str]) -> frozenset[str]:
        """Keep only known groups whose ancestors are all expanded (the effective state)."""
        groups = self.h.groups
        out = set()
        for path in expanded:
            if path in groups and path != ROOT:
                parent = groups[path].parent
                while parent and parent in expanded:
                    parent = groups[parent].parent
                if not parent:
                    out.add(path)
        return frozenset(out)

    def pending(self, expanded: frozenset[str], options: Options) -> int:
        """How many groups ``place`` would lay out (not cached for this state)."""
        inside = self._inside(expanded)
        with self._lock:
            return sum(1 for p in inside if (p, inside[p], options) not in self._cache)

    def place(self, expanded: frozenset[str], options: Options,
              progress: Progress | None = None) -> Placed:
        """Lay out (or fetch from cache) every visible group and compose absolute boxes."""
        inside = self._inside(expanded)
        counter = None
        if progress is not None:
            counter = [0, self.pending(expanded, options), progress]
            progress(0, counter[1])
        root = self._layout(ROOT, inside, options, counter)
        placed = Placed(0, 0, {}, {}, {}, {})
        self._compose(ROOT, root, 0.0, 0.0, options, placed)
        placed.width, placed.height = _xy(root.minor, root.major, options)
        return placed

    def warm(self, expanded: frozenset[str], options: Options) -> Iterator[None]:
        """Lay out the groups of state ``expanded`` one at a time, innermost first, yielding
        after each: a later ``place`` of that state finds every group cached and only
        composes (prepare warms "expand all" this way while the user looks)."""
        inside = self._inside(expanded)
        groups = self.h.groups
        for path in sorted(inside, key=lambda p: groups[p].depth, reverse=True):
            self._layout(path, inside, options, None)
            yield

    def box(self, member: Member, options: Options) -> Box:
        """The content and size of a node or a collapsed group."""
        key = (member, options)
        box = self._boxes.get(key)
        if box is None:
            member_type, ref = member
            if member_type == "n":
                box = node_box(self.model, self.model.nodes[ref], options)  # type: ignore[index]
            else:
                box = group_box(self.h.groups[ref])  # type: ignore[index]
            self._boxes[key] = box
        return box

    def structure(self, path: str) -> Structure:
        """The members, ports and local edges of group ``path`` (built once)."""
        found = self._structures.get(path)
        if found is None:
            found = self._structures[path] = _structure(self.h, path)
        return found

    # -- state ----------------------------------------------------------------------------
    def _inside(self, expanded: frozenset[str]) -> dict[str, frozenset[str]]:
        """For each expanded group (and the root), the expanded groups inside it; the last
        state's is kept (a big state asks up to three times: whether it is big, how many
        groups to lay out, and the layout; 0.05-0.15 s each for the 40,000 groups of "all")."""
        last = self._last_inside
        if last is not None and (last[0] is expanded or last[0] == expanded):
            return last[1]
        inside = self._inside_of(expanded)
        self._last_inside = (expanded, inside)
        return inside

    def _inside_of(self, expanded: frozenset[str]) -> dict[str, frozenset[str]]:
        acc: dict[str, set[str]] = {ROOT: set()}
        groups = self.h.groups
        for path in expanded:
            acc.setdefault(path, set())
            parent = groups[path].parent
            while parent is not None:
                acc.setdefault(parent, set()).add(path)
                parent = groups[parent].parent
        return {k: frozenset(v) for k, v in acc.items()}

    # -- one group ------------------------------------------------------------------------
    def _layout(self, path: str, inside: dict[str, frozenset[str]], options: Options,
                counter: list | None) -> LocalLayout:
        key = (path, inside.get(path, frozenset()), options)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        st = self.structure(path)
        subs: list[LocalLayout | None] = [
            self._layout(m[1], inside, options, counter)  # type: ignore[arg-type]
            if m[0] == "g" and m[1] in inside else None for m in st.members]
        sizes = [self._size(m, sub, options) for m, sub in zip(st.members, subs)]
        pad = _pad(path, options)
        least = 2 * GROUP_PAD + 60
        if path != ROOT:
            least = max(least, len(self.h.groups[path].label) * 7.0 + 60)
        shape = (st.shape, tuple(s if sub is None else sub.uid for s, sub in zip(sizes, subs)),
                 pad, least)
        with self._lock:
            result = self._shared.get(shape)
            if result is not None:
                self._shared.move_to_end(shape)
        if result is None:
            result = _GroupLayout(self, st, sizes, subs, pad, least, options).run()
            with self._lock:
                self.computed += 1
                self._shared[shape] = result
                _trim(self._shared)
        with self._lock:
            self.misses += 1
            self._cache[key] = result
            _trim(self._cache)
        if counter is not None:
            counter[0] += 1
            counter[2](counter[0], counter[1])
        return result

    def _size(self, member: Member, sub: LocalLayout | None, options: Options) -> tuple[float, float]:
        if sub is not None:
            return sub.minor, sub.major
        box = self.box(member, options)
        return (box.width, box.height) if options.direction == "TB" else (box.height, box.width)

    def _compose(self, path: str, lay: LocalLayout, m0: float, j0: float, options: Options,
                 placed: Placed) -> None:
        """Absolute boxes and frames; every coordinate is a multiple of 0.5 px
        (:func:`_half`), so sums of them are exact and need no rounding."""
        st = self.structure(path)
        tb = options.direction == "TB"
        placed.origins[path] = (m0, j0, lay)
        for member, (a, b, da, db), sub in zip(st.members, lay.boxes, lay.subs):
            rect = (m0 + a, j0 + b, da, db) if tb else (j0 + b, m0 + a, db, da)
            if sub is not None:
                placed.frames[member[1]] = rect  # type: ignore[index]
                self._compose(member[1], sub, m0 + a, j0 + b, options, placed)  # type: ignore[arg-type]
            else:
                placed.items[member] = rect
                placed.boxes[member] = self.box(member, options)


def _trim(cache: OrderedDict) -> None:
    while len(cache) > CACHE_SIZE:
        cache.popitem(last=False)


def _half(value: float) -> float:
    """``value`` to the nearest 0.5: layouts hold only such numbers, which binary floats
    add exactly, so composing 100,000 boxes needs no rounding per point."""
    return round(value * 2) / 2


def _xy(minor: float, major: float, options: Options) -> tuple[float, float]:
    return (minor, major) if options.direction == "TB" else (major, minor)


def _pad(path: str, options: Options) -> tuple[float, float, float, float]:
    """(minor start, minor end, major start, major end) inside a group's box."""
    if path == ROOT:
        return (ROOT_PAD, ROOT_PAD, ROOT_PAD, ROOT_PAD)
    if options.direction == "TB":
        return (GROUP_PAD, GROUP_PAD, GROUP_HEADER + 8, GROUP_PAD)
    return (GROUP_HEADER + 4, GROUP_PAD, GROUP_PAD, GROUP_PAD)


def _structure(h: Hierarchy, path: str) -> Structure:
    group = h.groups[path]
    members: list[Member] = [("n", n) for n in group.nodes] + [("g", g) for g in group.groups]
    edges: list[LocalEdge] = list(h.local_edges[path])
    ins = list(dict.fromkeys(a for a, _, _ in edges if a[0] == "in"))
    outs = list(dict.fromkeys(b for _, b, _ in edges if b[0] == "out"))
    ports = ins + outs
    index = {v: i for i, v in enumerate(members + ports)}
    pairs = [(index[a], index[b]) for a, b, _ in edges]
    return Structure(members, ports, edges, len(ins), pairs,
                     {p: i for i, p in enumerate(ports)},
                     (len(members), len(ins), len(outs), tuple(pairs)))


class _GroupLayout:
    """The computation for one group (a helper object so the steps stay short)."""

    def __init__(self, owner: Layouter, st: Structure, sizes: list[tuple[float, float]],
                 subs: list[LocalLayout | None], pad: tuple[float, float, float, float],
                 least: float, options: Options) -> None:
        self.owner, self.st, self.subs, self.options = owner, st, subs, options
        self.n_members = len(st.members)
        self.n_in = st.n_in
        self.sizes = sizes + [(0.0, 0.0)] * len(st.ports)  # ports have no size
        self.pad, self.least = pad, least

    # -- steps ------------------------------------------------------------------------------
    def run(self) -> LocalLayout:
        n = len(self.sizes)
        sizes = self.sizes
        pairs, flipped = _acyclic(n, self.st.pairs)
        layers = self._layers(n, pairs)
        chains, slot_layers = _split_long(n, pairs, layers)
        edges = [(u, v) for chain in chains for u, v in zip(chain, chain[1:])]
        if max(_row_counts(slot_layers), default=0) <= 1:
            xs = [0.0] * len(slot_layers)  # a plain chain: nothing to order
        else:
            graph = igraph.Graph(n=len(slot_layers), edges=edges, directed=True)
            maxiter = 100 if len(slot_layers) < 500 else (30 if len(slot_layers) < 3000 else 8)
            # igraph orders each layer (crossing reduction); long edges arrive already split
            # into one dummy slot per layer, so its coordinates cover every routing point.
            lay = graph.layout_sugiyama(layers=slot_layers, hgap=1, vgap=1, maxiter=maxiter)
            xs = [c[0] for c in lay.coords]
        widths = [sizes[v][0] for v in range(n)] + [0.0] * (len(slot_layers) - n)
        pos = self._place_minor(xs, slot_layers, widths, chains, n)
        bands = self._bands(sizes, layers)
        return self._finish(pairs, flipped, slot_layers, sizes, pos, bands, chains)

    def _layers(self, n: int, pairs: list[tuple[int, int]]) -> list[int]:
        """Longest-path layers; sources sit just above their first consumer; ports pinned."""
        succ: list[list[int]] = [[] for _ in range(n)]
        indeg = [0] * n
        for a, b in pairs:
            succ[a].append(b)
            indeg[b] += 1
        layer = [0] * n
        order = _topo(n, succ, indeg)
        for v in order:
            for w in succ[v]:
                layer[w] = max(layer[w], layer[v] + 1)
        for v in reversed(order):  # pull sources down next to their consumers
            if v < self.n_members and indeg[v] == 0 and succ[v]:
                layer[v] = max(layer[v], min(layer[w] for w in succ[v]) - 1)
        first_in = self.n_members
        if self.n_in:
            layer = [x + 1 for x in layer]
            for v in range(first_in, first_in + self.n_in):
                layer[v] = 0
        last = max((layer[v] for v in range(first_in)), default=0) + 1
        for v in range(first_in + self.n_in, n):
            layer[v] = last
        return layer

    @staticmethod
    def _place_minor(xs: list[float], layers: list[int], widths: list[float],
                     chains: list[list[int]], n: int) -> list[float]:
        """Pixel centers along each layer: igraph's order, real box widths, straight edges.

        Starting from igraph's coordinates, passes down and up move every slot (box or
        dummy) toward the mean of its neighbours in the previous (next) layer; in each
        layer the closest positions that keep the order and the minimum gaps are found
        exactly by isotonic regression (pool adjacent violators).
        """
        total = len(xs)
        up: list[list[int]] = [[] for _ in range(total)]
        down: list[list[int]] = [[] for _ in range(total)]
        for chain in chains:
            for u, v in zip(chain, chain[1:]):
                down[u].append(v)
                up[v].append(u)
        real = [w for w in widths[:n] if w > 0]
        unit = (median(real) if real else 60.0) + NODE_GAP
        rows: dict[int, list[int]] = {}
        for slot in range(total):
            rows.setdefault(layers[slot], []).append(slot)
        ordered = [sorted(rows[k], key=lambda s: (xs[s], s)) for k in sorted(rows)]
        seps = [[(widths[a] + widths[b]) / 2 + (NODE_GAP if a < n and b < n else DUMMY_GAP)
                 for a, b in zip(row, row[1:])] for row in ordered]
        pos = [x * unit for x in xs]
        for row, sep in zip(ordered, seps):
            _fit_row(row, sep, [pos[s] for s in row], pos)
        rounds = 4 if total < 4000 else 2
        for it in range(rounds * 2 + 1):
            down_pass = it % 2 == 0
            seq = list(zip(ordered, seps))
            if not down_pass:
                seq.reverse()
            final = it == rounds * 2
            for row, sep in seq:
                targets = []
                for slot in row:
                    nbrs = up[slot] + down[slot] if final else (up[slot] if down_pass else down[slot])
                    targets.append(sum(pos[t] for t in nbrs) / len(nbrs) if nbrs else pos[slot])
                _fit_row(row, sep, targets, pos)
        return pos

    def _bands(self, sizes, layers) -> list[tuple[float, float]]:
        """(start, end) along the major axis of each layer."""
        count = max(layers, default=0) + 1
        thick = [0.0] * count
        for v, layer in enumerate(layers):
            thick[layer] = max(thick[layer], sizes[v][1])
        bands, pos = [], 0.0
        for t in thick:
            bands.append((pos, pos + t))
            pos += t + RANK_GAP
        return bands

    def _finish(self, pairs, flipped, layers, sizes, pos, bands, chains):
        n = len(sizes)
        lo = min([pos[v] - sizes[v][0] / 2 for v in range(n)] + pos[n:], default=0.0)
        hi = max([pos[v] + sizes[v][0] / 2 for v in range(n)] + pos[n:], default=0.0)
        p0, p1, q0, q1 = self.pad
        shift = p0 - lo
        content_major = bands[-1][1] if bands else 0.0
        if self.n_in:  # layer 0 holds only ports: their band sits on the border
            content_major -= RANK_GAP
        major = _half(q0 + content_major + q1)
        minor = _half(max(p0 + (hi - lo) + p1, self.least))
        off = q0 - (RANK_GAP if self.n_in else 0.0)
        boxes = []
        for v in range(self.n_members):
            s0, s1 = sizes[v]
            b0, b1 = bands[layers[v]]
            boxes.append((_half(pos[v] + shift - s0 / 2), _half(off + b0 + (b1 - b0 - s1) / 2),
                          s0, s1))
        ports = [_half(pos[v] + shift) for v in range(self.n_members, n)]
        layout = LocalLayout(minor, major, boxes, ports, [], self.subs)
        geo = (layers, bands, pos, shift, off)
        for e, chain in enumerate(chains):
            pts = [(_half(m), _half(j)) for m, j in self._route(layout, e, chain, geo)]
            if e in flipped:
                pts.reverse()
            layout.routes.append(pts)
        return layout

    def _route(self, lay: LocalLayout, e: int, chain: list[int], geo: tuple) -> list[tuple[float, float]]:
        """Points of one local edge: out of its source, through its dummy slots, into its target."""
        layers, bands, pos, shift, off = geo
        a, b = chain[0], chain[-1]
        key = self.st.edges[e][2]
        pts: list[tuple[float, float]] = []
        nm = self.n_members
        if a >= nm:
            pts.append((lay.ports[a - nm], 0.0))
        else:
            m = self._anchor(lay, a, ("out", key))
            box = lay.boxes[a]
            pts.append((m, box[1] + box[3]))
            end = off + bands[layers[a]][1]
            if end > box[1] + box[3] + 0.5:
                pts.append((m, end))
        for slot in chain[1:-1]:
            m = pos[slot] + shift
            s, t = bands[layers[slot]]
            pts.append((m, off + s))
            if t > s:
                pts.append((m, off + t))
        if b >= nm:
            pts.append((lay.ports[b - nm], lay.major))
        else:
            m = self._anchor(lay, b, ("in", key))
            box = lay.boxes[b]
            start = off + bands[layers[b]][0]
            if start < box[1] - 0.5:
                pts.append((m, start))
            pts.append((m, box[1]))
        return pts

    def _anchor(self, lay: LocalLayout, v: int, port: Member) -> float:
        """Where an edge meets a box: its port for an expanded group, else its center."""
        box = lay.boxes[v]
        sub = self.subs[v]
        if sub is not None:
            inner = self.owner.structure(self.st.members[v][1]).port_index.get(port)  # type: ignore[arg-type]
            if inner is not None:
                return box[0] + sub.ports[inner]
        return box[0] + box[2] / 2


def _row_counts(layers: list[int]) -> list[int]:
    counts = [0] * (max(layers, default=-1) + 1)
    for layer in layers:
        counts[layer] += 1
    return counts


def _split_long(n: int, pairs: list[tuple[int, int]], layers: list[int]
                ) -> tuple[list[list[int]], list[int]]:
    """Split every edge spanning several layers into a chain through one dummy per layer."""
    slot_layers = list(layers)
    chains = []
    for a, b in pairs:
        chain = [a]
        for layer in range(layers[a] + 1, layers[b]):
            chain.append(len(slot_layers))
            slot_layers.append(layer)
        chain.append(b)
        chains.append(chain)
    return chains, slot_layers


def _acyclic(n: int, pairs: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], set[int]]:
    """Reverse a small feedback arc set so layering sees a DAG (scopes can form cycles)."""
    graph = igraph.Graph(n=n, edges=pairs, directed=True)
    if graph.is_dag():
        return pairs, set()
    flipped = set(graph.feedback_arc_set(method="eades"))
    return [(b, a) if i in flipped else (a, b) for i, (a, b) in enumerate(pairs)], flipped


def _fit_row(row: list[int], sep: list[float], targets: list[float], pos: list[float]) -> None:
    """Positions for one layer closest to ``targets`` (least squares) that keep the order
    and the minimum center distances ``sep``; written into ``pos``."""
    if len(row) == 1:
        pos[row[0]] = targets[0]
        return
    offsets = [0.0]
    for gap in sep:
        offsets.append(offsets[-1] + gap)
    blocks: list[list[float]] = []  # [sum, count]
    for t, off in zip(targets, offsets):
        blocks.append([t - off, 1.0])
        while len(blocks) > 1 and blocks[-2][0] * blocks[-1][1] > blocks[-1][0] * blocks[-2][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    i = 0
    for total, count in blocks:
        value = total / count
        for _ in range(int(count)):
            pos[row[i]] = value + offsets[i]
            i += 1


def _topo(n: int, succ: list[list[int]], indeg: list[int]) -> list[int]:
    remaining = list(indeg)
    order = [v for v in range(n) if remaining[v] == 0]
    i = 0
    while i < len(order):
        v = order[i]
        i += 1
        for w in succ[v]:
            remaining[w] -= 1
            if remaining[w] == 0:
                order.append(w)
    return order
