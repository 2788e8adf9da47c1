"""A diff of two parsed models: which ops were added, removed, changed or kept.

Ops are matched by name first (names are what exporters keep stable), then by structure for
the rest: from every matched pair, an unmatched op fed by the same output of both, at the
same input slot and with the same op type, is the same op (and likewise for the producers of
a matched pair's inputs). The propagation is a worklist over matched pairs, so a renamed
chain is matched in one pass; where a step is ambiguous (several candidates on a side that
differ in number) nothing is guessed. Ops of different types are paired (a replaced op) only
between matched neighbours, one of them an op: the graph's inputs and outputs, named alike in
most models, are no evidence. A matched pair is *changed* when its op type, attribute values
(not their rounded display), input/output types or initializer values differ. The models are
*related* when at least half of the smaller one's ops matched by name or op type.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict, deque
from typing import Any

import numpy as np
from onnx import AttributeProto, TensorProto, numpy_helper

from visualdl.kinds.graph.parsed_model import GraphModel, Initializer, Node
from visualdl.kinds.graph.tensor_values import attribute_value

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
            values = _values(init.proto)
            self._hashes[key] = None if values is None else _array_hash(values)
        return self._hashes[key]


def _values(tensor: TensorProto) -> np.ndarray | None:
    if tensor.data_location == TensorProto.EXTERNAL:
        return None
    try:
        return numpy_helper.to_array(tensor)
    except Exception:  # noqa: BLE001 - exotic or malformed tensors: values "unknown"
        return None


def _array_hash(values: np.ndarray) -> str:
    """A hash of an array's values; object arrays (strings) hash their items, not their
    pointers."""
    raw = (repr(values.ravel().tolist()).encode() if values.dtype.kind == "O"
           else np.ascontiguousarray(values).tobytes())
    return hashlib.blake2b(raw, digest_size=12).hexdigest()


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
        self.refused: set[tuple[int, int]] = set()  # ops of different types left unpaired

    def run(self) -> None:
        """Propagate with equal op types; when that is done, pair the one unmatched op on
        each side of a matched pair's slot whatever their op types (a replaced op, when it sits
        between matched ops: see _replaced), and go on."""
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
            if nx in self.fwd or ny in self.back:
                continue
            if self.any_type and not self._replaced(nx, ny):
                self.refused.add((nx, ny))
                continue
            self._pair(nx, ny)
            queue.append((nx, ny))

    def _replaced(self, x: int, y: int) -> bool:
        """Whether ops of different types may be paired: only with matched neighbours on both
        sides (a producer pair and a consumer pair), one of them an op. Any two models share
        their graph's input and output names, so those alone would pair arbitrary ops (the
        first Gemm of an MLP with the stem Conv of a CNN)."""
        ups, downs = self._anchors(x, y, upstream=True), self._anchors(x, y, upstream=False)
        return bool(ups and downs) and any(self.a.nodes[n].role == "op" for n in ups | downs)

    def _anchors(self, x: int, y: int, upstream: bool) -> set[int]:
        """Matched producers (or consumers) of x whose partners are at the same slot of y."""
        na, nb = self.a.nodes[x], self.b.nodes[y]
        found = set()
        if upstream:
            for slot in range(min(len(na.inputs), len(nb.inputs))):
                pa, pb = self.a.input_producer(na, slot), self.b.input_producer(nb, slot)
                if pa is not None and pb is not None and self.fwd.get(pa[0]) == pb[0]:
                    found.add(pa[0])
            return found
        for slot in range(min(len(na.outputs), len(nb.outputs))):
            right = set(self.b.output_consumers(nb, slot))
            found.update(n for n, i in self.a.output_consumers(na, slot)
                         if n in self.fwd and (self.fwd[n], i) in right)
        return found

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
    """Attributes whose values differ, compared by content (the display rounds floats to 6
    digits and shows a big tensor by its type); listed with their display texts, made exact
    where those are equal."""
    text_a = {name: value for name, _, value in na.attributes}
    text_b = {name: value for name, _, value in nb.attributes}
    pa, pb = _attr_protos(na), _attr_protos(nb)
    if pa is None or pb is None:  # not read from a graph: the display is all there is
        return [{"name": k, "before": text_a.get(k), "after": text_b.get(k)}
                for k in sorted(text_a.keys() | text_b.keys()) if text_a.get(k) != text_b.get(k)]
    out = []
    for k in sorted(pa.keys() | pb.keys()):
        if k in pa and k in pb and _attr_key(pa[k]) == _attr_key(pb[k]):
            continue
        before, after = text_a.get(k), text_b.get(k)
        if before == after:
            before, after = _exact_texts(pa[k], pb[k], before, after)
        out.append({"name": k, "before": before, "after": after})
    return out


def _attr_protos(node: Node) -> dict[str, AttributeProto] | None:
    """The node's attributes as stored in its graph (the parsed node keeps display texts
    only), or None for a node that was not read from a graph."""
    source = node._source  # noqa: SLF001 - (graph source, index) of the node's proto
    if source is None:
        return None
    graph, index = source
    return {a.name: a for a in graph.graph.node[index].attribute}


_A = AttributeProto
#: An attribute's exact value by its type (floats as float32 bits, tensors hashed).
_EXACT = {
    _A.FLOAT: lambda a: np.float32(a.f).tobytes(),
    _A.INT: lambda a: a.i,
    _A.STRING: lambda a: a.s,
    _A.TENSOR: lambda a: _tensor_key(a.t),
    _A.FLOATS: lambda a: np.asarray(a.floats, np.float32).tobytes(),
    _A.INTS: lambda a: tuple(a.ints),
    _A.STRINGS: lambda a: tuple(a.strings),
    _A.SPARSE_TENSOR: lambda a: a.sparse_tensor.SerializeToString(deterministic=True),
    _A.TYPE_PROTO: lambda a: a.tp.SerializeToString(deterministic=True),
}


def _attr_key(attr: AttributeProto) -> Any:
    """What an attribute holds, exactly. Graph attributes compare by their display: the ops
    of a body are compared one by one as ops of their own."""
    if attr.ref_attr_name:
        return ("ref", attr.ref_attr_name)
    exact = _EXACT.get(attr.type)
    value = exact(attr) if exact else attribute_value(attr)[1]
    return (attr.type, value)


def _tensor_key(tensor: TensorProto) -> tuple[Any, ...]:
    """A tensor attribute's dtype, shape and values' hash (not its name); one stored in an
    external file by dtype and shape only, as weights are."""
    head = (tensor.data_type, tuple(tensor.dims))
    if tensor.data_location == TensorProto.EXTERNAL:
        return head
    values = _values(tensor)
    if values is None:  # undecodable: its bytes as stored
        return (*head, tensor.SerializeToString(deterministic=True))
    return (*head, _array_hash(values))


def _exact_texts(pa: AttributeProto, pb: AttributeProto, before: str,
                 after: str) -> tuple[str, str]:
    """Two texts that tell apart attributes whose display texts are equal: the exact float32,
    else the first differing item of a list or tensor, else the types, else a short hash of
    each value."""
    if pa.type == pb.type == _A.FLOAT:
        before, after = str(np.float32(pa.f)), str(np.float32(pb.f))
    else:
        va, vb = _attr_array(pa), _attr_array(pb)
        if va is not None and vb is not None:
            i = _first_difference(va, vb)
            before = f"{before} ([{i}] = {_item(va, i)})"
            after = f"{after} ([{i}] = {_item(vb, i)})"
    if before == after and pa.type != pb.type:
        before, after = f"{before} ({_type_name(pa)})", f"{after} ({_type_name(pb)})"
    elif before == after:
        before, after = (f"{before} #{_short_hash(_attr_key(pa))}",
                         f"{after} #{_short_hash(_attr_key(pb))}")
    return before, after


def _attr_array(attr: AttributeProto) -> np.ndarray | None:
    """A list or tensor attribute's items as a flat array (None for other kinds)."""
    if attr.type == _A.FLOATS:
        return np.asarray(attr.floats, np.float32)
    if attr.type == _A.INTS:
        return np.asarray(attr.ints, np.int64)
    if attr.type == _A.STRINGS:
        return np.array(list(attr.strings), dtype=object)
    if attr.type == _A.TENSOR:
        values = _values(attr.t)
        return None if values is None else values.ravel()
    return None


def _first_difference(va: np.ndarray, vb: np.ndarray) -> int:
    """The first flat index where two arrays differ bit for bit (or the shorter's length)."""
    n = min(va.size, vb.size)
    if n == 0:
        return 0
    a, b = np.ascontiguousarray(va.ravel()[:n]), np.ascontiguousarray(vb.ravel()[:n])
    if a.dtype == b.dtype and a.dtype.kind != "O":
        same = (a.view(np.uint8).reshape(n, -1) == b.view(np.uint8).reshape(n, -1)).all(axis=1)
    else:
        same = np.array([x == y for x, y in zip(a.tolist(), b.tolist())], dtype=bool)
    found = np.flatnonzero(~same)
    return int(found[0]) if found.size else n


def _item(values: np.ndarray, i: int) -> str:
    if i >= values.size:
        return "(none)"
    item = values[i]
    return item.decode("utf-8", "backslashreplace") if isinstance(item, bytes) else str(item)


def _type_name(attr: AttributeProto) -> str:
    return attribute_value(attr)[0]


def _short_hash(key: Any) -> str:
    return hashlib.blake2b(repr(key).encode(), digest_size=4).hexdigest()


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
    """What differs between two weights, or None. A weight without a hash (its values in an
    external file, or undecodable) is compared by dtype and shape only: equal ones are the
    same weight, else a model with external data would differ from itself."""
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
    if same_type and (da is None or db is None or da == db):
        return None
    change: dict[str, Any] = {"before": before, "after": after,
                              "values": "unknown" if da is None or db is None else "differ"}
    if same_type and change["values"] == "differ":
        va, vb = _values(ia.proto), _values(ib.proto)
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


def _relatedness(matcher: _Matcher) -> tuple[bool, str | None]:
    """Related when at least half of the smaller model's ops matched an op of the other by
    name or of the same op type: one Gemm that ends both an MLP and a CNN (reached from the
    output both name ``y``) does not make them one model. Else a message saying what was
    matched of what, and which pairings were refused."""
    a, b = matcher.a.nodes, matcher.b.nodes
    ops_a = sum(1 for n in a if n.role == "op")
    ops_b = sum(1 for n in b if n.role == "op")
    pairs = [(x, y) for x, y in matcher.fwd.items() if a[x].role == "op"]
    if not pairs:
        return False, ("no op of one model matched an op of the other: these look like "
                       "unrelated models")
    kept = sum(1 for x, y in pairs if x in matcher.by_name or a[x].op_type == b[y].op_type)
    if kept > 0 and 2 * kept >= min(ops_a, ops_b):
        return True, None
    refused = sum(1 for x, y in matcher.refused if x not in matcher.fwd and y not in matcher.back)
    message = (f"only {kept} of {ops_a} ops before and {ops_b} after matched an op of the other "
               f"by name or op type (fewer than half of the smaller model's): these look like "
               f"unrelated models")
    if refused:
        message += (f"; {refused} pairs of ops of different types were left unpaired, with no "
                    f"matched ops on both sides of them")
    return False, message


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
    truncated = any(len(v) > MAX_LISTED for v in nodes.values())
    related, message = _relatedness(matcher)
    return {
        "summary": {
            "counts": {k: counts[k] for k in ("added", "removed", "changed", "unchanged",
                                              "matched_by_name", "matched_by_structure")},
            "ops": {"before": before.op_count, "after": after.op_count},
            "parameters": {"before": _parameters(before), "after": _parameters(after)},
            "op_types": _op_table(before, after),
        },
        "related": related,
        "message": message,
        "truncated": truncated,
        **{k: v[:MAX_LISTED] for k, v in nodes.items()},
    }
