"""A diff of two parsed models: which ops were added, removed, changed or kept.

Ops are matched by name first (names are what exporters keep stable), then by structure for
the rest: from every matched pair, an unmatched op fed by the same output of both, at the
same input slot and with the same op type, is the same op (and likewise for the producers of
a matched pair's inputs). The propagation is a worklist over matched pairs, so a renamed
chain is matched in one pass; where a step is ambiguous (several candidates on a side that
differ in number) nothing is guessed. A matched pair is *changed* when its op type,
attributes, input/output types or initializer values differ.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict, deque
from typing import Any

import numpy as np
from onnx import TensorProto, numpy_helper

from visualdl.kinds.graph.parsed_model import GraphModel, Initializer, Node

__all__ = ["diff_models"]

#: Cap on the listed nodes of each status, so that a diff of unrelated 100k-node models
#: stays a reasonable answer; the counts are always complete.
MAX_LISTED = 20_000

_Tensor = tuple[int, str]  # (scope, name)


class _Side:
    """One model's ops with the indexes the matcher needs (who produces / consumes what)."""

    def __init__(self, model: GraphModel) -> None:
        self.model = model
        self.nodes = model.nodes
        self.producer: dict[_Tensor, tuple[int, int]] = {}  # tensor -> (node, output slot)
        self.consumers: dict[_Tensor, list[tuple[int, int]]] = defaultdict(list)
        for node in model.nodes:
            for slot, name in enumerate(node.outputs):
                if name:
                    self.producer[(node.scope, name)] = (node.id, slot)
            for slot, name in enumerate(node.inputs):
                if name:
                    self.consumers[(node.scope, name)].append((node.id, slot))
        self._hashes: dict[int, str | None] = {}

    def input_producer(self, node: Node, slot: int) -> tuple[int, int] | None:
        name = node.inputs[slot]
        return self.producer.get((node.scope, name)) if name else None

    def output_consumers(self, node: Node, slot: int) -> list[tuple[int, int]]:
        name = node.outputs[slot]
        return self.consumers.get((node.scope, name), []) if name else []

    def digest(self, init: Initializer) -> str | None:
        """A hash of an initializer's values (None when they are in an external file or of a
        type numpy cannot decode)."""
        key = id(init)
        if key not in self._hashes:
            values = _values(init)
            if values is None:
                self._hashes[key] = None
            else:  # object arrays (strings) hash their items, not their pointers
                raw = (repr(values.ravel().tolist()).encode() if values.dtype.kind == "O"
                       else np.ascontiguousarray(values).tobytes())
                self._hashes[key] = hashlib.blake2b(raw, digest_size=12).hexdigest()
        return self._hashes[key]


def _values(init: Initializer) -> np.ndarray | None:
    if init.proto.data_location == TensorProto.EXTERNAL:
        return None
    try:
        return numpy_helper.to_array(init.proto)
    except Exception:  # noqa: BLE001 - exotic or malformed tensors: values "unknown"
        return None


def _name_matches(a: _Side, b: _Side) -> dict[int, int]:
    """Pairs of nodes with the same role and name (the n-th of a repeated name with the n-th)."""
    by_name: dict[tuple[str, str], list[int]] = defaultdict(list)
    for node in b.nodes:
        if node.name:
            by_name[(node.role, node.name)].append(node.id)
    seen: Counter[tuple[str, str]] = Counter()
    pairs: dict[int, int] = {}
    for node in a.nodes:
        if not node.name:
            continue
        key = (node.role, node.name)
        ids = by_name.get(key)
        if ids and seen[key] < len(ids):
            pairs[node.id] = ids[seen[key]]
            seen[key] += 1
    return pairs


class _Matcher:
    """Name matches, then structural propagation from every matched pair."""

    def __init__(self, a: _Side, b: _Side) -> None:
        self.a, self.b = a, b
        self.fwd = _name_matches(a, b)
        self.back = {v: k for k, v in self.fwd.items()}
        self.by_name = set(self.fwd)
        self.any_type = False  # True: candidates are grouped without their op type

    def run(self) -> None:
        """Propagate with equal op types; when that is done, pair the one unmatched op on
        each side of a matched pair's slot whatever their op types (a replaced op), and go on."""
        queue = deque(sorted(self.fwd.items()))
        while queue:
            while queue:
                self._extend(*queue.popleft(), queue)
            self.any_type = True
            for x, y in self._next_to_unmatched():
                self._extend(x, y, queue)
            self.any_type = False

    def _extend(self, x: int, y: int, queue: deque[tuple[int, int]]) -> None:
        """Pair the neighbours of the matched pair (x, y); an op already paired (by an
        earlier slot or pair) keeps its partner."""
        for nx, ny in self._downstream(x, y) + self._upstream(x, y):
            if nx not in self.fwd and ny not in self.back:
                self._pair(nx, ny)
                queue.append((nx, ny))

    def _next_to_unmatched(self) -> list[tuple[int, int]]:
        """Matched pairs that feed or are fed by an unmatched op of the first model."""
        a, found = self.a, set()
        for node in a.nodes:
            if node.id in self.fwd:
                continue
            refs = [a.input_producer(node, i) for i in range(len(node.inputs))]
            refs += [r for i in range(len(node.outputs)) for r in a.output_consumers(node, i)]
            found.update(r[0] for r in refs if r is not None and r[0] in self.fwd)
        return [(x, self.fwd[x]) for x in sorted(found)]

    def _pair(self, x: int, y: int) -> None:
        self.fwd[x] = y
        self.back[y] = x

    def _downstream(self, x: int, y: int) -> list[tuple[int, int]]:
        na, nb = self.a.nodes[x], self.b.nodes[y]
        found = []
        for slot in range(min(len(na.outputs), len(nb.outputs))):
            left = self._free(self.a.output_consumers(na, slot), self.a, self.fwd)
            right = self._free(self.b.output_consumers(nb, slot), self.b, self.back)
            if self.any_type:
                left, right = _singletons(left), _singletons(right)
            found += _pair_groups(left, right)
        return found

    def _upstream(self, x: int, y: int) -> list[tuple[int, int]]:
        na, nb = self.a.nodes[x], self.b.nodes[y]
        found = []
        for slot in range(min(len(na.inputs), len(nb.inputs))):
            pa, pb = self.a.input_producer(na, slot), self.b.input_producer(nb, slot)
            if pa is None or pb is None or pa[1] != pb[1]:
                continue
            left = self._free([pa], self.a, self.fwd)
            right = self._free([pb], self.b, self.back)
            if self.any_type:
                left, right = _singletons(left), _singletons(right)
            found += _pair_groups(left, right)
        return found

    @staticmethod
    def _free(refs: list[tuple[int, int]], side: _Side,
              matched: dict[int, int]) -> dict[tuple[str, str, int], list[int]]:
        """Unmatched nodes among ``refs``, grouped by (role, op type, slot)."""
        groups: dict[tuple[str, str, int], list[int]] = defaultdict(list)
        for nid, slot in refs:
            if nid not in matched:
                node = side.nodes[nid]
                groups[(node.role, node.op_type, slot)].append(nid)
        return groups


def _singletons(groups: dict[tuple[str, str, int], list[int]]) -> dict[Any, list[int]]:
    """The groups keyed by (role, slot) only, kept where one op is left for a slot."""
    merged: dict[tuple[str, int], list[int]] = defaultdict(list)
    for (role, _, slot), ids in groups.items():
        merged[(role, slot)] += ids
    return {key: ids for key, ids in merged.items() if len(set(ids)) == 1}


def _pair_groups(left: dict[Any, list[int]], right: dict[Any, list[int]]) -> list[tuple[int, int]]:
    """Same-key groups of equal size, paired in id order (unequal sizes: no guess)."""
    out = []
    for key, ids in left.items():
        other = right.get(key)
        if other and len(other) == len(ids):
            out += list(zip(sorted(set(ids)), sorted(set(other))))
    return out


# -- what changed -------------------------------------------------------------------------------
def _types(side: _Side, node: Node, names: list[str]) -> list[dict[str, Any] | None]:
    out: list[dict[str, Any] | None] = []
    for name in names:
        info = side.model.tensor(node.scope, name) if name else None
        out.append({"dtype": info.dtype, "shape": info.shape} if info else None)
    return out


def _attr_changes(na: Node, nb: Node) -> list[dict[str, Any]]:
    left = {name: value for name, _, value in na.attributes}
    right = {name: value for name, _, value in nb.attributes}
    return [{"name": k, "before": left.get(k), "after": right.get(k)}
            for k in sorted(left.keys() | right.keys()) if left.get(k) != right.get(k)]


def _type_changes(a: _Side, b: _Side, na: Node, nb: Node, which: str) -> list[dict[str, Any]]:
    ta = _types(a, na, getattr(na, which))
    tb = _types(b, nb, getattr(nb, which))
    out = []
    for slot in range(max(len(ta), len(tb))):
        before = ta[slot] if slot < len(ta) else None
        after = tb[slot] if slot < len(tb) else None
        if before != after:
            out.append({"slot": slot, "before": before, "after": after})
    return out


def _init_changes(a: _Side, b: _Side, na: Node, nb: Node) -> list[dict[str, Any]]:
    out = []
    for slot in range(max(len(na.inputs), len(nb.inputs))):
        ia = a.model.initializer(na.scope, na.inputs[slot]) if slot < len(na.inputs) else None
        ib = b.model.initializer(nb.scope, nb.inputs[slot]) if slot < len(nb.inputs) else None
        if ia is None and ib is None:
            continue
        change = _init_change(a, b, ia, ib)
        if change is not None:
            out.append({"slot": slot, **change})
    return out


def _init_change(a: _Side, b: _Side, ia: Initializer | None,
                 ib: Initializer | None) -> dict[str, Any] | None:
    def brief(init: Initializer | None) -> dict[str, Any] | None:
        if init is None:
            return None
        s = init.summary
        return {"name": init.name, "dtype": s["dtype"], "shape": s["shape"]}

    before, after = brief(ia), brief(ib)
    if ia is None or ib is None:
        return {"before": before, "after": after, "values": "differ"}
    same_type = (before["dtype"], before["shape"]) == (after["dtype"], after["shape"])
    da, db = a.digest(ia), b.digest(ib)
    if same_type and da is not None and da == db:
        return None
    change: dict[str, Any] = {"before": before, "after": after,
                              "values": "unknown" if da is None or db is None else "differ"}
    if same_type and change["values"] == "differ":
        va, vb = _values(ia), _values(ib)
        if va is not None and vb is not None and va.dtype.kind in "iufb":
            delta = np.abs(va.astype(np.float64) - vb.astype(np.float64))
            change["max_abs_diff"] = float(delta.max()) if delta.size else 0.0
    return change


def _changes(a: _Side, b: _Side, na: Node, nb: Node) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if (na.op_type, na.domain) != (nb.op_type, nb.domain):
        out["op_type"] = {"before": na.op_type, "after": nb.op_type}
    for key, found in (("attributes", _attr_changes(na, nb)),
                       ("inputs", _type_changes(a, b, na, nb, "inputs")),
                       ("outputs", _type_changes(a, b, na, nb, "outputs")),
                       ("initializers", _init_changes(a, b, na, nb))):
        if found:
            out[key] = found
    return out


# -- the answer -----------------------------------------------------------------------------------
def _ref(node: Node) -> dict[str, Any]:
    return {"id": f"n{node.id}", "name": node.name, "op_type": node.op_type, "group": node.group}


def _parameters(model: GraphModel) -> int:
    return int(sum(i.summary["size"] for i in model.initializers.values()))


def _op_table(a: GraphModel, b: GraphModel) -> list[dict[str, Any]]:
    ca = Counter(n.op_type for n in a.nodes if n.role == "op")
    cb = Counter(n.op_type for n in b.nodes if n.role == "op")
    return [{"op_type": t, "before": ca.get(t, 0), "after": cb.get(t, 0)}
            for t in sorted(ca.keys() | cb.keys(), key=lambda t: (-(ca[t] + cb[t]), t))]


def diff_models(before: GraphModel, after: GraphModel) -> dict[str, Any]:
    """The diff of two models: a summary and every added, removed and changed op."""
    a, b = _Side(before), _Side(after)
    matcher = _Matcher(a, b)
    matcher.run()
    nodes: dict[str, list[dict[str, Any]]] = {"added": [], "removed": [], "changed": []}
    counts = Counter()
    for na in a.nodes:
        if na.role != "op":
            continue
        y = matcher.fwd.get(na.id)
        if y is None:
            counts["removed"] += 1
            nodes["removed"].append({"before": _ref(na)})
            continue
        nb = b.nodes[y]
        counts["matched_by_name" if na.id in matcher.by_name else "matched_by_structure"] += 1
        changes = _changes(a, b, na, nb)
        if changes:
            counts["changed"] += 1
            nodes["changed"].append({"before": _ref(na), "after": _ref(nb),
                                     "matched_by": "name" if na.id in matcher.by_name
                                     else "structure", "changes": changes})
        else:
            counts["unchanged"] += 1
    for nb in b.nodes:
        if nb.role == "op" and nb.id not in matcher.back:
            counts["added"] += 1
            nodes["added"].append({"after": _ref(nb)})
    matched = counts["matched_by_name"] + counts["matched_by_structure"]
    truncated = any(len(v) > MAX_LISTED for v in nodes.values())
    return {
        "summary": {
            "counts": {k: counts[k] for k in ("added", "removed", "changed", "unchanged",
                                              "matched_by_name", "matched_by_structure")},
            "ops": {"before": before.op_count, "after": after.op_count},
            "parameters": {"before": _parameters(before), "after": _parameters(after)},
            "op_types": _op_table(before, after),
        },
        "related": matched > 0,
        "message": None if matched else
        "no op of one model matched an op of the other: these look like unrelated models",
        "truncated": truncated,
        **{k: v[:MAX_LISTED] for k, v in nodes.items()},
    }
