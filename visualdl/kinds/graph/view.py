"""The visible graph for one collapse state, as the JSON the browser draws.

Boxes are visible nodes and collapsed groups; frames are expanded groups; edges are the
tensors between visible boxes (several original edges hidden inside one collapsed group
become one), each with its tensor's dtype/shape and a route composed from the per-group
routes of the layout.
"""

from __future__ import annotations

import time
from itertools import islice
from typing import Any

from visualdl.kinds.graph.hierarchy import Hierarchy, Member
from visualdl.kinds.graph.layout import Layouter, Placed, Progress
from visualdl.kinds.graph.measure import Options
from visualdl.kinds.graph.tensor_values import format_shape

__all__ = ["item_id", "visible_edges", "visible_graph"]


def item_id(member: Member) -> str:
    """``n12`` for node 12, ``g:<path>`` for a group."""
    return f"n{member[1]}" if member[0] == "n" else f"g:{member[1]}"


def visible_edges(h: Hierarchy, expanded: frozenset[str]) -> dict[tuple[Member, Member, tuple[int, str]], int]:
    """(visible source, visible target, port key) -> one original edge index standing for it."""
    return {link: h.edge_of(link[2]) for link in h.visible_links(expanded)}


def _group_of(h: Hierarchy, member: Member) -> str:
    if member[0] == "n":
        return h.node_group[member[1]]  # type: ignore[index]
    return h.groups[member[1]].parent or ""  # type: ignore[index]


def _route(h: Hierarchy, placed: Placed, a: Member, b: Member, key: tuple[int, str]) -> list:
    """Join the local routes: up and out of ``a``'s groups, across, down into ``b``'s (the
    point lists are the layout's, shared: never changed after)."""
    segments = h.segments(a, _group_of(h, a), b, _group_of(h, b), key)
    points: list[list[float]] = []
    for seg in segments:
        pts = placed.routes.get(seg)
        if not pts:
            continue
        if points and _close(points[-1], pts[0]):
            points.extend(islice(pts, 1, None))
        else:
            points.extend(pts)
    return points


def _close(p: list[float], q: list[float]) -> bool:
    return abs(p[0] - q[0]) < 0.5 and abs(p[1] - q[1]) < 0.5


def visible_graph(h: Hierarchy, layouter: Layouter, expanded: frozenset[str],
                  options: Options, progress: Progress | None = None) -> dict[str, Any]:
    """Everything the browser needs to draw one state."""
    started = time.perf_counter()
    misses = layouter.misses
    placed = layouter.place(expanded, options, progress)
    layout_s = time.perf_counter() - started
    model = h.model
    nodes = []
    for member, (x, y, w, hgt) in placed.items.items():
        box = placed.boxes[member]
        item: dict[str, Any] = {
            "id": item_id(member), "x": round(x, 1), "y": round(y, 1), "w": w, "h": hgt,
            "title": box.title, "subtitle": box.subtitle,
            "lines": list(map(list, box.lines)) if box.lines else [],
        }
        if member[0] == "n":
            node = model.nodes[member[1]]  # type: ignore[index]
            item.update(type=node.role, category=node.category, name=node.name)
        else:
            group = h.groups[member[1]]  # type: ignore[index]
            item.update(type="group", category="group", path=group.path, ops=group.ops,
                        expandable=True)
        nodes.append(item)
    frames = []
    for path, (x, y, w, hgt) in placed.frames.items():
        group = h.groups[path]
        frames.append({"id": f"g:{path}", "path": path, "label": group.label, "ops": group.ops,
                       "depth": group.depth, "x": round(x, 1), "y": round(y, 1), "w": w, "h": hgt})
    frames.sort(key=lambda f: f["depth"])
    edges = []
    labels: dict[int, str] = {}  # by id(TensorInfo): many edges carry one tensor
    for (a, b, key), index in visible_edges(h, expanded).items():
        edge = model.edges[index]
        info = model.tensor(edge.scope, edge.tensor)
        label = ""
        if info:
            label = labels.get(id(info))
            if label is None:
                label = labels[id(info)] = format_shape(info.shape)
        edges.append({
            "from": item_id(a), "to": item_id(b), "tensor": edge.tensor,
            "dtype": info.dtype if info else None,
            "shape": info.shape if info else None,
            "label": label,
            "points": _route(h, placed, a, b, key),
        })
    return {
        "width": round(placed.width, 1), "height": round(placed.height, 1),
        "direction": options.direction,
        "expanded": sorted(expanded),
        "nodes": nodes, "frames": frames, "edges": edges,
        "stats": {"layout_seconds": round(layout_s, 4),
                  "groups_laid_out": layouter.misses - misses,
                  "total_seconds": round(time.perf_counter() - started, 4)},
    }
