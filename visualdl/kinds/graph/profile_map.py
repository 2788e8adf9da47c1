"""Profiler time mapped onto the nodes of the profiled model's graph.

Two kinds of profile, matched in two ways:

* **Ours** (``vf.profiler``): every op event carries ``Layer Scope`` (the layer path that ran
  it, ``features/2``) and its op name (``conv2d``); ``vf.onnx`` wrote the same scope and op
  into each node's name (:mod:`visualdl.kinds.graph.layer_paths`). The k-th call of an op in
  a layer during a step is the node of call index ``k`` (modulo the calls one forward pass
  makes, so several passes in a step map alike); an op exported as several ONNX nodes puts
  its time on its main one (the MatMul of a ``linear`` exported as MatMul and Add). A backward op (``<op>_grad``) goes to the
  node of its forward op, found by ``Sequence number``.
* **PyTorch** (Kineto with ``with_stack=True``: ``python_function`` events
  ``nn.Module: Conv2d_0`` around the ops): the trace names module *instances*, the graph
  module *paths* (``/layer1/layer1.0/conv1/Conv`` -> ``layer1.0.conv1``). The two trees are
  aligned child by child in call order: a traced module goes to the next graph module whose
  ONNX op types fit the ATen ops it ran (a module that left no node in the export, such as
  Dropout or a BatchNorm folded into its Conv, is skipped). Inside a module its own
  top-level ATen ops go to its own nodes by op type and call order (the only node when it
  has one). Backward ops (``autograd::engine::evaluate_function: ...``) go where the
  forward op whose ``Sequence number`` they carry went.

A node's value is its time per profiled step in microseconds: the op's self time (ours),
the top-level ATen op's whole time (PyTorch), forward and backward (``phase``). Time that
maps to no node (the loss, the optimizer, a module the export dropped) is reported by name.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from visualdl.kinds.graph.layer_paths import framework_alternates, framework_ops, layer_paths
from visualdl.kinds.graph.node_values import NodeValues
from visualdl.kinds.graph.parsed_model import GraphModel

__all__ = ["PHASES", "ProfileMapError", "profile_values"]

PHASES = ("all", "forward", "backward")
LAYER_SCOPE = "Layer Scope"
MODULE_PREFIX = "nn.Module: "
BACKWARD_PREFIX = "autograd::engine::evaluate_function: "
UNMAPPED_SHOWN = 20
_REPEAT = re.compile(r"^(.+)_(\d+)$")
OP_NODES_SHOWN = 20

#: ATen op -> the ONNX op types PyTorch's exporter makes of it.
ATEN_ONNX: dict[str, tuple[str, ...]] = {
    "conv1d": ("Conv",), "conv2d": ("Conv",), "conv3d": ("Conv",), "convolution": ("Conv",),
    "_convolution": ("Conv",), "conv_transpose1d": ("ConvTranspose",),
    "conv_transpose2d": ("ConvTranspose",), "conv_transpose3d": ("ConvTranspose",),
    "linear": ("Gemm", "MatMul"), "addmm": ("Gemm",), "matmul": ("MatMul", "Gemm"),
    "mm": ("MatMul", "Gemm"), "bmm": ("MatMul",), "relu": ("Relu",), "relu_": ("Relu",),
    "gelu": ("Gelu", "Erf", "Mul", "Div", "Add"), "sigmoid": ("Sigmoid",), "tanh": ("Tanh",),
    "softmax": ("Softmax",), "log_softmax": ("LogSoftmax",),
    "batch_norm": ("BatchNormalization",), "layer_norm": ("LayerNormalization",),
    "group_norm": ("GroupNormalization", "InstanceNormalization"),
    "max_pool2d": ("MaxPool",), "avg_pool2d": ("AveragePool",),
    "adaptive_avg_pool2d": ("GlobalAveragePool", "AveragePool"),
    "add": ("Add",), "add_": ("Add",), "sub": ("Sub",), "mul": ("Mul",), "div": ("Div",),
    "flatten": ("Flatten", "Reshape"), "view": ("Reshape",), "reshape": ("Reshape",),
    "cat": ("Concat",), "transpose": ("Transpose",), "permute": ("Transpose",),
    "embedding": ("Gather",), "dropout": (), "leaky_relu": ("LeakyRelu",),
}
#: Module classes PyTorch's exporter leaves no node of in an inference graph.
NO_NODES = frozenset({"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                      "Identity"})


class ProfileMapError(ValueError):
    """The profile cannot be placed on this graph (it names no layers the graph has)."""


def profile_values(graph: GraphModel, trace: Any, phase: str = "all",
                   op: str | None = None,
                   window: tuple[float | None, float | None] = (None, None)) -> NodeValues:
    """Per-node time of ``trace`` (a profile kind ``TraceModel``) on ``graph``. With ``op``
    (an operator's name as the profiler's operator table shows it), ``extra["op_nodes"]``
    ranks the nodes that operator's time went to (an op nested in another: its time counts
    on the node of the op around it). ``window`` (one step's [start, end), as
    ``span_window`` gives it): only the ops starting in it count, as that one step's time."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}")
    ops = _op_events(trace)
    lo, hi = window
    steps = max(len(trace.steps), 1) if lo is None else 1
    if any(LAYER_SCOPE in a for _, a in ops):
        mapper = _Ours(graph, trace)
        how = "layer scope"
    elif any(trace.names[n].startswith(MODULE_PREFIX) for n in np.unique(trace.name)):
        mapper = _Torch(graph, trace)
        how = "module tree"
    else:
        raise ProfileMapError("the profile names no layers: record it with vf.profiler (ops "
                              "carry their layer) or torch.profiler with with_stack=True "
                              "(nn.Module events)")
    times: dict[int, float] = defaultdict(float)
    unmapped: Counter[str] = Counter()
    focus: dict[int, float] = defaultdict(float)
    for i, args in ops:
        node, backward, label, t, nested = mapper.place(i, args)  # every op: calls counted
        if lo is not None and not lo <= trace.ts[i] < hi:
            continue
        if backward and phase == "forward" or not backward and phase == "backward":
            continue
        if op is not None and node is not None and trace.names[trace.name[i]] == op:
            focus[node] += t
        if nested:
            continue
        if node is None:
            unmapped[label] += t
        else:
            times[node] += t
    values = {n: t / steps for n, t in times.items()}
    if not values:
        raise ProfileMapError(f"no profiled op matches a node of this graph ({how}): is it "
                              "the profile of this model?")
    label = {"all": "Profiler time", "forward": "Profiler time (forward)",
             "backward": "Profiler time (backward)"}[phase]
    return NodeValues("profile", "us", label, values, extra={
        "matched_by": how, "phase": phase, "steps": len(trace.steps) if lo is None else 1,
        "mapped_us": float(sum(values.values())),
        "unmapped_us": float(sum(unmapped.values())) / steps,
        "unmapped": [{"name": k, "us": v / steps}
                     for k, v in unmapped.most_common(UNMAPPED_SHOWN)],
        **({"op": op, "op_nodes": [{"id": f"n{n}", "name": graph.nodes[n].name,
                                    "op_type": graph.nodes[n].op_type, "us": t / steps}
                                   for n, t in sorted(
            focus.items(), key=lambda kv: (-kv[1], kv[0]))[:OP_NODES_SHOWN]]}
           if op is not None else {})})


def _op_events(trace: Any) -> list[tuple[int, dict]]:
    """Operator events in time order, with their args."""
    idx = np.flatnonzero(trace.is_op)
    idx = idx[np.argsort(trace.ts[idx], kind="stable")]
    return [(int(i), args if isinstance(args, dict) else {})
            for i, args in zip(idx, trace.args_many(idx))]


def _step_of(trace: Any):
    starts = np.array([s.ts for s in trace.steps] or [0.0])
    ends = np.array([s.ts + s.dur for s in trace.steps] or [np.inf])

    def step(i: int) -> int:
        k = int(np.searchsorted(starts, trace.ts[i], side="right")) - 1
        return k if k >= 0 and trace.ts[i] < ends[k] else -1

    return step


class _Ours:
    """vf.profiler ops -> vf.onnx nodes, by (layer scope, op, call index)."""

    def __init__(self, graph: GraphModel, trace: Any) -> None:
        self.trace = trace
        slots: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
        ops = framework_ops(graph)
        for node_id, fw in ops.items():
            slots[(fw.scope, fw.op)].append((fw.index, node_id))
        self.slots = {k: _main_nodes(graph, v) for k, v in slots.items()}
        for key, nodes in framework_alternates(graph, ops).items():
            self.slots.setdefault(key, nodes)
        self.calls: Counter[tuple[int, str, str]] = Counter()
        self.by_seq: dict[Any, int] = {}
        self.step = _step_of(trace)

    def place(self, i: int, args: dict) -> tuple[int | None, bool, str, float, bool]:
        tr = self.trace
        name = tr.names[tr.name[i]]
        scope = args.get(LAYER_SCOPE, "")
        t = float(tr.self_time[i])
        label = f"{scope}/{name}" if scope else name
        if "Forward Op" in args:  # a backward op: where its forward op went
            return self.by_seq.get(args.get("Sequence number")), True, label, t, False
        nodes = self.slots.get((scope, name))
        if not nodes:
            return None, False, label, t, False
        key = (self.step(i), scope, name)
        k = self.calls[key]
        self.calls[key] = k + 1
        node = nodes[k % len(nodes)]
        if args.get("Sequence number") is not None:
            self.by_seq[args["Sequence number"]] = node
        return node, False, label, t, False


class _Torch:
    """Kineto ops -> PyTorch-exported nodes, by aligning nn.Module instances with module
    paths (see the module docstring)."""

    def __init__(self, graph: GraphModel, trace: Any) -> None:
        self.trace = trace
        self.graph = graph
        names = trace.names
        self.is_module = np.array([n.startswith(MODULE_PREFIX) for n in names] or [False])
        # the graph's module tree: path -> own nodes, and children in order of first node
        self.own: dict[str, list[int]] = defaultdict(list)
        self.kids: dict[str, list[str]] = defaultdict(list)
        for node_id, path in layer_paths(graph).items():
            self.own[path].append(node_id)
            parts = path.split(".") if path else []
            for k in range(len(parts)):
                parent, child = ".".join(parts[:k]), ".".join(parts[:k + 1])
                if child not in self.kids[parent]:
                    self.kids[parent].append(child)
        self._merge_repeats()
        self._trace_tree()
        self.path_of: dict[str, str] = {}
        root = self._root()
        if root is not None:
            self._align(root, "")
        self.calls: Counter[tuple[int, str, str]] = Counter()
        self.by_seq: dict[Any, int] = {}
        self.node_of: dict[int, int | None] = {}  # top-level op event -> its node
        self.step = _step_of(trace)

    def _merge_repeats(self) -> None:
        """A module called twice is exported as ``relu`` and ``relu_1``: one module in the
        trace, so one path here, its nodes in call order."""
        for parent, kids in self.kids.items():
            for child in list(kids):
                base = _REPEAT.match(child)
                if base is None or base.group(1) not in kids or self.kids.get(child):
                    continue
                self.own[base.group(1)] = sorted(self.own[base.group(1)] + self.own.pop(child, []))
                kids.remove(child)

    def _module_of(self, i: int) -> tuple[str | None, bool]:
        """(instance name of the innermost module around event i, whether an op encloses
        i first: then i is a nested op, not a top-level one)."""
        tr = self.trace
        p = int(tr.parent[i])
        nested = False
        while p >= 0:
            if self.is_module[tr.name[p]]:
                return tr.names[tr.name[p]][len(MODULE_PREFIX):], nested
            if tr.is_op[p]:
                nested = True
            p = int(tr.parent[p])
        return None, nested

    def _trace_tree(self) -> None:
        """Module instances: their children in first-call order and the ATen ops they ran."""
        tr = self.trace
        self.t_kids: dict[str | None, list[str]] = defaultdict(list)
        self.t_ops: dict[str, set[str]] = defaultdict(set)
        mods = np.flatnonzero(self.is_module[tr.name] & tr.complete)
        mods = mods[np.argsort(tr.ts[mods], kind="stable")]
        for i in mods:
            name = tr.names[tr.name[i]][len(MODULE_PREFIX):]
            parent, _ = self._module_of(int(i))
            if name not in self.t_kids[parent]:
                self.t_kids[parent].append(name)
        for i in np.flatnonzero(tr.is_op):
            owner, nested = self._module_of(int(i))
            if owner is None or nested:
                continue
            self.t_ops[owner].add(_aten(tr.names[tr.name[i]]))

    def _root(self) -> str | None:
        """The outermost module whose tree holds the most modules (the model, not the loss)."""
        def size(name: str) -> int:
            return 1 + sum(size(c) for c in self.t_kids.get(name, ()))

        roots = self.t_kids.get(None, [])
        return max(roots, key=size) if roots else None

    def _has_ops(self, name: str) -> bool:
        return bool(self.t_ops.get(name)) or any(self._has_ops(c)
                                                for c in self.t_kids.get(name, ()))

    def _fits(self, name: str, path: str) -> bool:
        """Whether the traced module's own ATen ops could have become the path's nodes."""
        wanted = {self.graph.nodes[n].op_type for n in self.own.get(path, ())}
        if not wanted or self.t_kids.get(name):
            return True  # a container: its children decide
        ops = self.t_ops.get(name, set())
        known = [ATEN_ONNX[o] for o in ops if o in ATEN_ONNX]
        return not known or any(wanted & set(types) for types in known)

    def _align(self, name: str, path: str) -> None:
        self.path_of[name] = path
        kids = self.kids.get(path, [])
        k = 0
        for child in self.t_kids.get(name, []):
            cls = child.rsplit("_", 1)[0]
            if cls in NO_NODES or not self._has_ops(child):
                continue
            for j in range(k, len(kids)):
                if self._fits(child, kids[j]):
                    self._align(child, kids[j])
                    k = j + 1
                    break

    def place(self, i: int, args: dict) -> tuple[int | None, bool, str, float, bool]:
        tr = self.trace
        name = tr.names[tr.name[i]]
        t = float(tr.dur[i])
        owner, nested = self._module_of(i)
        if nested:  # inside a top-level op: its time is counted there
            return self._outer_node(i), name.startswith(BACKWARD_PREFIX), name, t, True
        seq = args.get("Sequence number")
        if name.startswith(BACKWARD_PREFIX):
            node = self.by_seq.get(seq)
            self.node_of[i] = node
            return node, True, name[len(BACKWARD_PREFIX):], t, False
        path = self.path_of.get(owner) if owner is not None else None
        label = f"{owner}: {name}" if owner else name
        if path is None:
            return None, False, label, t, False
        own = self.own.get(path, [])
        aten = _aten(name)
        types = ATEN_ONNX.get(aten)
        fitting = [n for n in own if types and self.graph.nodes[n].op_type in types]
        if not fitting:
            fitting = own if len(own) == 1 else []
        if not fitting:
            return None, False, label, t, False
        key = (self.step(i), path, aten)
        k = self.calls[key]
        self.calls[key] = k + 1
        node = fitting[k % len(fitting)]
        self.node_of[i] = node
        self._remember(i, seq, node)
        return node, False, label, t, False

    def _outer_node(self, i: int) -> int | None:
        """The node of the outermost op around op ``i``."""
        tr = self.trace
        p, outer = int(tr.parent[i]), None
        while p >= 0:
            if tr.is_op[p]:
                outer = p
            p = int(tr.parent[p])
        return self.node_of.get(outer) if outer is not None else None

    def _remember(self, i: int, seq: Any, node: int) -> None:
        """The forward op's sequence number, and its nested ops' (the autograd node of
        ``aten::conv2d`` is made by the ``aten::convolution`` inside it)."""
        tr = self.trace
        if seq is not None:
            self.by_seq[seq] = node
        lo, hi = tr.ts[i], tr.ts[i] + tr.dur[i]
        j = i + 1
        while j < tr.n and tr.track[j] == tr.track[i] and tr.ts[j] < hi:
            if tr.is_op[j] and tr.ts[j] >= lo:
                inner = (tr.args(j) or {}).get("Sequence number")
                if inner is not None:
                    self.by_seq.setdefault(inner, node)
            j += 1


def _main_nodes(graph: GraphModel, calls: list[tuple[int, int]]) -> list[int]:
    """One node per call index: an op exported as several ONNX nodes (a ``linear`` as
    MatMul and Add) puts its time on its main node, the first of category "layer" (MatMul,
    Conv, Gemm), else its first."""
    by_index: dict[int, list[int]] = defaultdict(list)
    for index, node_id in sorted(calls):
        by_index[index].append(node_id)
    out = []
    for index in sorted(by_index):
        nodes = by_index[index]
        out.append(next((n for n in nodes if graph.nodes[n].category == "layer"), nodes[0]))
    return out


def _aten(name: str) -> str:
    return name.split("::", 1)[1] if name.startswith("aten::") else name
