"""A value per node, for the graph view to colour and rank nodes by.

Four measures, one shape of answer (:class:`NodeValues`):

* ``params``: the elements of the initializers (weights) a node reads. A weight shared by
  several nodes counts once, at its first reader in model order, so that the values add up
  to the model's parameter count.
* ``flops``: floating-point operations estimated from shapes (the formulas are in
  :mod:`visualdl.kinds.graph.flops`; no formula or an unknown shape: no value).
* ``activations``: a statistic (mean, std, zero fraction) of a layer's output, as the
  ``VisualDL`` callback logs them (``activations/<layer>/<stat>``); the value sits on the
  layer's last op in model order, the op whose output the layer returns.
* ``profile``: profiler time mapped onto the nodes (:mod:`visualdl.kinds.graph.profile_map`).

A collapsed group shows the sum of its members (parameters, FLOPs, time); for activations,
where a sum means nothing, the value of its last member that has one (the group's output).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from visualdl.kinds.graph.flops import node_flops
from visualdl.kinds.graph.hierarchy import ROOT, Hierarchy
from visualdl.kinds.graph.layer_paths import nodes_by_layer
from visualdl.kinds.graph.parsed_model import GraphModel

__all__ = ["ACTIVATION_STATS", "MEASURES", "NodeValues", "activations", "flops", "parameters",
           "to_json"]

MEASURES = ("params", "flops", "activations", "profile")
ACTIVATION_STATS = ("mean", "std", "zero_fraction")
TOP = 50  # nodes in the ranked list


@dataclass
class NodeValues:
    """Values of some op nodes (by node id) and how to read them."""

    by: str
    unit: str
    label: str
    values: dict[int, float]
    aggregate: str = "sum"  # how a collapsed group combines its members: "sum" | "last"
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def parameters(model: GraphModel) -> NodeValues:
    """Initializer elements per node (a shared weight at its first reader)."""
    seen: set[tuple[int, str]] = set()
    values: dict[int, float] = {}
    for node in model.nodes:
        if node.role != "op":
            continue
        total = 0
        for name in node.inputs:
            init = model.initializer(node.scope, name) if name else None
            if init is None or (init.scope, init.name) in seen:
                continue
            seen.add((init.scope, init.name))
            total += int(init.summary["size"])
        values[node.id] = float(total)
    return NodeValues("params", "parameters", "Parameters", values)


def flops(model: GraphModel) -> NodeValues:
    """FLOPs per node from shapes; symbolic dimensions count as 1 and are named."""
    symbols: set[str] = set()
    values = {}
    for node in model.nodes:
        value = node_flops(model, node, symbols)
        if value is not None:
            values[node.id] = value
    label = "FLOPs"
    notes = []
    if symbols:
        names = sorted(symbols)
        label += " (" + ", ".join(f"{s}=1" for s in names) + ")"
        notes.append("symbolic dimensions are counted as 1: " + ", ".join(names))
    return NodeValues("flops", "FLOPs", label, values, notes=notes,
                      extra={"symbols": sorted(symbols)})


def activations(model: GraphModel, stats: dict[str, float], stat: str) -> NodeValues:
    """``stats``: dotted layer name -> the statistic's value. Each layer's value goes on its
    last op node; layers with no node in the graph are listed in ``extra["unmatched"]``."""
    layers = nodes_by_layer(model)
    values: dict[int, float] = {}
    unmatched = []
    for layer, value in sorted(stats.items()):
        members = layers.get(layer)
        if not members:
            unmatched.append(layer)
            continue
        values[members[-1]] = value
    label = {"mean": "Activation mean", "std": "Activation std",
             "zero_fraction": "Activation zero fraction"}[stat]
    notes = [f"no node in the graph for layer {name}" for name in unmatched]
    return NodeValues("activations", "" if stat != "zero_fraction" else "fraction", label,
                      values, aggregate="last", notes=notes,
                      extra={"stat": stat, "layers": len(stats), "unmatched": unmatched})


def group_values(h: Hierarchy, nv: NodeValues) -> dict[str, float]:
    """Group path -> its value (sum of members, or its last member's with "last")."""
    total: dict[str, float] = {}
    last: dict[str, int] = {}  # the member with the highest node id that has a value
    for path in _children_first(h):
        group = h.groups[path]
        own = [n for n in group.nodes if n in nv.values]
        s = float(sum(nv.values[n] for n in own))
        hi = max(own, default=-1)
        for child in group.groups:
            if child in last:
                s += total[child]
                hi = max(hi, last[child])
        if hi >= 0:
            total[path], last[path] = s, hi
    if nv.aggregate == "last":
        return {p: nv.values[n] for p, n in last.items() if p != ROOT}
    return {p: v for p, v in total.items() if p != ROOT}


def _children_first(h: Hierarchy) -> list[str]:
    order, stack = [], [ROOT]
    while stack:
        path = stack.pop()
        order.append(path)
        stack.extend(h.groups[path].groups)
    return order[::-1]


def to_json(h: Hierarchy, nv: NodeValues) -> dict[str, Any]:
    """The answer of ``/api/graph/values``: node and group values (ids as the view draws
    them), the op nodes without a value, the ``TOP`` nodes by value (highest first), the
    range, unit and notes."""
    model = h.model
    values = nv.values
    missing = [f"n{n.id}" for n in model.nodes if n.role == "op" and n.id not in values]
    numbers = list(values.values())
    groups = group_values(h, nv)
    ranked = sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]
    return {
        "by": nv.by, "unit": nv.unit, "label": nv.label, "aggregate": nv.aggregate,
        "nodes": {f"n{k}": v for k, v in sorted(values.items())},
        "groups": {f"g:{k}": v for k, v in sorted(groups.items())},
        "missing": missing,
        "top": [{"id": f"n{n}", "name": model.nodes[n].name, "op_type": model.nodes[n].op_type,
                 "value": v} for n, v in ranked],
        "count": len(values),
        "min": min(numbers) if numbers else None,
        "max": max(numbers) if numbers else None,
        "total": float(sum(numbers)) if nv.aggregate == "sum" else None,
        "notes": nv.notes,
        **nv.extra,
    }
