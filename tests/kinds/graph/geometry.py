"""Checks on laid-out views shared by the tests: boxes do not overlap, edges avoid boxes."""

from __future__ import annotations


def _inside(px: float, py: float, box: dict, margin: float = 1.5) -> bool:
    return (box["x"] + margin < px < box["x"] + box["w"] - margin
            and box["y"] + margin < py < box["y"] + box["h"] - margin)


def pairs(points: list[float]) -> list[tuple[float, float]]:
    """An edge's route (flat: x0, y0, x1, y1, ...) as (x, y) points."""
    assert len(points) % 2 == 0, points
    return list(zip(points[::2], points[1::2]))


def overlapping_boxes(view: dict) -> list[tuple[str, str]]:
    """Pairs of visible boxes that overlap (there should be none)."""
    boxes = sorted(view["nodes"], key=lambda b: b["x"])
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if b["x"] >= a["x"] + a["w"]:
                break
            if a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]:
                out.append((a["id"], b["id"]))
    return out


def edges_through_boxes(view: dict, samples: int = 12) -> list[tuple[str, str]]:
    """(edge, box) pairs where an edge's route passes through a box it does not connect.

    Each straight piece of the route is sampled; the drawn curve stays inside the polyline's
    corners, so a clean polyline means a clean drawing."""
    hits = []
    boxes = view["nodes"]
    for edge in view["edges"]:
        pts = pairs(edge["points"])
        ends = {edge["from"], edge["to"]}
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            for k in range(samples + 1):
                t = k / samples
                px, py = x0 + (x1 - x0) * t, y0 + (y1 - y0) * t
                for box in boxes:
                    if box["id"] not in ends and _inside(px, py, box):
                        hits.append((f'{edge["from"]}->{edge["to"]}', box["id"]))
    return sorted(set(hits))
