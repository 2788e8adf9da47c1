"""The visible graph for one collapse state, as the JSON the browser draws.

Boxes are visible nodes and collapsed groups; frames are expanded groups; edges are the
tensors between visible boxes (several original edges hidden inside one collapsed group
become one), each with its tensor's dtype/shape and a route composed from the per-group
routes of the layout.
"""

from __future__ import annotations

import time
from typing import Any

from visualdl.kinds.graph.hierarchy import Hierarchy, Member, PortKey, Segment
from visualdl.kinds.graph.layout import Layouter, LocalLayout, Placed, Progress
from visualdl.kinds.graph.measure import Options
from visualdl.kinds.graph.tensor_values import format_shape

__all__ = ["ViewItems", "item_id", "visible_graph"]

TensorFields = tuple[str, "str | None", "list[int | str] | None", str]  # name, dtype, shape, label


def item_id(member: Member) -> str:
    """``n12`` for node 12, ``g:<path>`` for a group."""
    return f"n{member[1]}" if member[0] == "n" else f"g:{member[1]}"


class _Ids(dict):
    """member -> its id, made on first lookup."""

    def __missing__(self, member: Member) -> str:
        found = self[member] = item_id(member)
        return found


class _Tensors(dict):
    """(producer, tensor) -> the fields every drawn edge of that tensor carries, made on
    first lookup; a type's shape list and label are made once per distinct type."""

    def __init__(self, h: Hierarchy) -> None:
        super().__init__()
        self._h = h
        self._types: dict[tuple, tuple] = {}  # (dtype, shape as a tuple) -> (dtype, shape, label)

    def __missing__(self, key: PortKey) -> TensorFields:
        model = self._h.model
        edge = model.edges[self._h.edge_of(key)]
        info = model.tensor(edge.scope, edge.tensor)
        typed: tuple = (None, None, "")
        if info is not None:
            kind = (info.dtype, None if info.shape is None else tuple(info.shape))
            typed = self._types.get(kind) or self._types.setdefault(
                kind, (info.dtype, info.shape, format_shape(info.shape)))
        found = self[key] = (edge.tensor, *typed)
        return found


class ViewItems:
    """What the views of one model repeat for each item, made once: each box's id and each
    drawn tensor's name and type. An "expand all" of 100,000 nodes formats 340,000 ids and
    looks up 120,000 types; cached, each is one dict lookup (prepare() fills them while
    the user looks). Lookups from several threads are safe: a race makes equal values."""

    def __init__(self, h: Hierarchy) -> None:
        self.ids: dict[Member, str] = _Ids()
        self.tensors: dict[PortKey, TensorFields] = _Tensors(h)


def _route(origins: dict[str, tuple[float, float, LocalLayout]], segments: list[Segment],
           tb: bool) -> list[float]:
    """An edge's points, flat (``[x0, y0, x1, y1, ...]``): the local routes of its segments,
    each offset to where its group is, joined (a piece that starts where the last ended
    drops that point). Flat, an "expand all" of 100,000 nodes sends half a million fewer
    arrays for the page to parse and the server to make and free."""
    points: list[float] = []
    for path, index in segments:
        m0, j0, lay = origins[path]
        local = lay.routes[index]
        if not local:
            continue
        p, q = local[0]
        x, y = (m0 + p, j0 + q) if tb else (j0 + q, m0 + p)
        if not points or abs(points[-2] - x) >= 0.5 or abs(points[-1] - y) >= 0.5:
            points += (x, y)
        if tb:
            for p, q in local[1:]:
                points += (m0 + p, j0 + q)
        else:
            for p, q in local[1:]:
                points += (j0 + q, m0 + p)
    return points


def _boxes(h: Hierarchy, items: ViewItems, placed: Placed) -> list[dict[str, Any]]:
    """Visible nodes and collapsed groups (one dict literal per kind: 100,000 of them)."""
    model_nodes, groups, boxes, ids = h.model.nodes, h.groups, placed.boxes, items.ids
    out = []
    for member, (x, y, w, hgt) in placed.items.items():
        box = boxes[member]
        lines = [list(line) for line in box.lines] if box.lines else []
        kind, ref = member
        if kind == "n":
            node = model_nodes[ref]  # type: ignore[index]
            out.append({"id": ids[member], "x": x, "y": y, "w": w, "h": hgt, "title": box.title,
                        "subtitle": box.subtitle, "lines": lines, "type": node.role,
                        "category": node.category, "name": node.name})
        else:
            group = groups[ref]  # type: ignore[index]
            out.append({"id": ids[member], "x": x, "y": y, "w": w, "h": hgt, "title": box.title,
                        "subtitle": box.subtitle, "lines": lines, "type": "group",
                        "category": "group", "path": group.path, "ops": group.ops,
                        "expandable": True})
    return out


def _edges(h: Hierarchy, items: ViewItems, placed: Placed, expanded: frozenset[str],
           direction: str) -> list[dict[str, Any]]:
    """The tensors between visible boxes, with their types and joined routes."""
    ids, tensors = items.ids, items.tensors
    origins, tb = placed.origins, direction == "TB"
    out = []
    for (a, b, key), segments in h.visible_links(expanded).items():
        tensor, dtype, shape, label = tensors[key]
        out.append({
            "from": ids[a], "to": ids[b],
            "tensor": tensor, "dtype": dtype, "shape": shape, "label": label,
            "points": _route(origins, segments, tb),
        })
    return out


def visible_graph(h: Hierarchy, layouter: Layouter, items: ViewItems, expanded: frozenset[str],
                  options: Options, progress: Progress | None = None) -> dict[str, Any]:
    """Everything the browser needs to draw one state."""
    started = time.perf_counter()
    misses = layouter.misses
    placed = layouter.place(expanded, options, progress)
    layout_s = time.perf_counter() - started
    nodes = _boxes(h, items, placed)
    frames = [{"id": f"g:{path}", "path": path, "label": g.label, "ops": g.ops, "depth": g.depth,
               "x": x, "y": y, "w": w, "h": hgt}
              for path, (x, y, w, hgt) in placed.frames.items() for g in (h.groups[path],)]
    frames.sort(key=lambda f: f["depth"])
    edges = _edges(h, items, placed, expanded, options.direction)
    return {
        "width": placed.width, "height": placed.height,
        "direction": options.direction,
        "expanded": sorted(expanded),
        "nodes": nodes, "frames": frames, "edges": edges,
        "stats": {"layout_seconds": round(layout_s, 4),
                  "groups_laid_out": layouter.misses - misses,
                  "total_seconds": round(time.perf_counter() - started, 4)},
    }
