"""``vf.jit.trace``: run an eager model once and record the static program it executed.

Every op already goes through ``dispatch.apply``; tracing adds an observer there (to see each
op, its attributes, inputs and output) and forward hooks on every sub-layer (to know which
layer path is running, for name-scoped node names). Tensors are recognised by identity: graph
inputs, parameters and buffers (by dotted name), outputs of earlier ops; anything else an op
reads is a constant and becomes an initializer. Ops that do not contribute to the outputs
(e.g. statistics computed by a hook) are dropped.

The model is traced in eval mode under ``no_grad`` (dropout off, batch norm on its running
statistics): the program is an inference program, and tracing changes no state.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import dispatch
from ..autograd import no_grad
from ..nn.layer import Layer
from ..tensor import Tensor
from .program import Node, Program, ValueInfo


def _keeps_batch_axis(op: str, attrs: dict[str, Any]) -> bool:
    """Whether an op's output axis 0 is its (batched) input's axis 0."""
    if op in ("sum", "mean", "max", "min", "argmax"):
        axis = attrs.get("axis")
        return axis is not None and 0 not in (axis if isinstance(axis, tuple) else (axis,))
    if op == "permute":
        return attrs["axes"][0] == 0
    if op == "concat":
        return attrs["axis"] != 0
    if op in ("cross_entropy", "mse_loss"):
        return attrs["reduction"] == "none"
    if op == "getitem":
        key = attrs["key"]
        first = key[0] if isinstance(key, tuple) and key else key
        return first is Ellipsis or (isinstance(first, slice) and first == slice(None))
    return True


@dataclass
class InputSpec:
    """Shape and dtype of a model input; ``None`` (or -1) in ``shape`` is a free size, traced
    with ``batch_size`` (axis 0) or 1. Used where no example tensor is at hand, e.g.
    ``LogWriter.add_graph(net, input_spec=[InputSpec([None, 1, 28, 28])])``."""

    shape: Sequence[int | None]
    dtype: Any = "float32"
    name: str | None = None

    def example(self, batch_size: int = 2) -> Tensor:
        shape = tuple((batch_size if i == 0 else 1) if s is None or s == -1 else int(s)
                      for i, s in enumerate(self.shape))
        dt = np.dtype(self.dtype)
        rng = np.random.default_rng(0)  # not the framework's generator: tracing changes nothing
        if dt.kind == "f":
            return Tensor(rng.standard_normal(shape).astype(dt))
        return Tensor(np.zeros(shape, dt))


class TraceError(RuntimeError):
    """The model cannot be traced (e.g. it returns something that is not a tensor)."""


def example_tensors(example_inputs: Any) -> tuple[list[Tensor], list[str | None]]:
    """Tensors (and spec names) from a tensor, array, InputSpec, or a list/tuple of them."""
    items = list(example_inputs) if isinstance(example_inputs, (list, tuple)) else [example_inputs]
    tensors, names = [], []
    for item in items:
        if isinstance(item, InputSpec):
            tensors.append(item.example())
            names.append(item.name)
        elif isinstance(item, Tensor):
            tensors.append(item)
            names.append(None)
        else:
            tensors.append(Tensor(np.asarray(item)))
            names.append(None)
    if not tensors:
        raise TraceError("trace needs at least one example input")
    return tensors, names


def _input_names(net: Layer, n: int, given: list[str | None]) -> list[str]:
    try:
        params = [p.name for p in inspect.signature(net.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(n):
        name = given[i] if i < len(given) and given[i] else (params[i] if i < len(params) else f"input_{i}")
        names.append(name)
    if len(set(names)) != len(names):
        names = [f"input_{i}" for i in range(n)]
    return names


class _Tracer:
    def __init__(self, net: Layer, inputs: list[Tensor], names: list[str]) -> None:
        self.keep: list[Tensor] = []          # keeps ids stable while tracing
        self.names: dict[int, str] = {}
        self.values: dict[str, ValueInfo] = {}
        self.nodes: list[Node] = []
        self.initializers: dict[str, np.ndarray] = {}
        self.scope: list[str] = []
        self.batch = inputs[0].shape[0] if inputs[0].ndim else None
        self.state = {id(t): name for name, t in net.state_dict().items()}
        for name, t in net.named_parameters():
            self.state.setdefault(id(t), name)
        self.inputs = []
        for t, name in zip(inputs, names):
            info = self._define(t, name, batched=t.ndim > 0)
            self.inputs.append(info)
        self.counter = 0

    def _define(self, t: Tensor, name: str, batched: bool) -> ValueInfo:
        self.keep.append(t)
        self.names[id(t)] = name
        info = ValueInfo(name, t.shape, t.dtype, batched)
        self.values[name] = info
        return info

    def name_of(self, t: Tensor | None) -> str | None:
        if t is None:
            return None
        name = self.names.get(id(t))
        if name is not None:
            return name
        state_name = self.state.get(id(t))
        if state_name is None:
            state_name = f"const_{sum(1 for k in self.initializers if k.startswith('const_'))}"
        self.initializers[state_name] = np.array(t.numpy(), copy=True)
        return self._define(t, state_name, batched=False).name

    def observe(self, op: Any, inputs: tuple, output: Tensor) -> None:
        in_names = [self.name_of(t) for t in inputs]
        self.counter += 1
        out_name = f"v{self.counter}"
        batched = (output.ndim > 0 and self.batch is not None and _keeps_batch_axis(op.name, op.attrs)
                   and output.shape[0] == self.batch
                   and any(n is not None and self.values[n].batched for n in in_names))
        self._define(output, out_name, batched)
        self.nodes.append(Node(op.name, in_names, out_name, dict(op.attrs), tuple(self.scope)))

    def push(self, name: str):
        def pre(layer: Layer, args: tuple) -> None:
            self.scope.append(name)

        def post(layer: Layer, args: tuple, out: Any) -> None:
            self.scope.pop()

        return pre, post


def _flatten_outputs(out: Any) -> list[Tensor]:
    items = list(out) if isinstance(out, (list, tuple)) else [out]
    if not all(isinstance(t, Tensor) for t in items):
        raise TraceError("a traced model must return a Tensor or a list/tuple of Tensors, got "
                         f"{type(out).__name__}")
    return items


def _prune(nodes: list[Node], outputs: list[str]) -> list[Node]:
    needed = set(outputs)
    kept = []
    for node in reversed(nodes):
        if node.output in needed:
            kept.append(node)
            needed.update(i for i in node.inputs if i is not None)
    return kept[::-1]


def _name_nodes(nodes: list[Node], leaf_scopes: set[tuple[str, ...]]) -> None:
    """``encoder/block1/conv`` for the single op of a leaf layer, ``<scope>/<op>`` (with
    ``_1``, ``_2`` for repeats) otherwise; shared layers called twice get suffixes too."""
    per_scope = Counter(n.scope for n in nodes)
    used: Counter[str] = Counter()
    for n in nodes:
        path = "/".join(n.scope)
        if n.scope and per_scope[n.scope] == 1 and n.scope in leaf_scopes:
            base = path
        else:
            base = f"{path}/{n.op}" if path else n.op
        k = used[base]
        used[base] += 1
        n.name = base if k == 0 else f"{base}_{k}"


def trace(net: Layer, example_inputs: Any, input_names: Sequence[str] | None = None) -> Program:
    """Run ``net`` on ``example_inputs`` (tensors, arrays or ``InputSpec``s) and return the
    static ``Program`` it executed."""
    if not isinstance(net, Layer):
        raise TypeError(f"trace needs a vf.nn.Layer, got {type(net).__name__}")
    tensors, spec_names = example_tensors(example_inputs)
    given = list(input_names) if input_names else spec_names
    names = _input_names(net, len(tensors), given)
    tracer = _Tracer(net, tensors, names)
    sub = list(net.named_sublayers(include_self=False))
    leaf_scopes = {tuple(name.split(".")) for name, layer in sub if not layer._sub_layers}
    handles = []
    for name, layer in sub:
        pre, post = tracer.push(name.rsplit(".", 1)[-1])
        handles.append(layer.register_forward_pre_hook(pre))
        handles.append(layer.register_forward_hook(post))
    modes = [(layer, layer.training) for layer in net.sublayers(include_self=True)]
    net.eval()
    remove = dispatch.add_observer(tracer.observe)
    try:
        with no_grad():
            out = net(*tensors)
    finally:
        remove()
        for h in handles:
            h.remove()
        for layer, mode in modes:
            object.__setattr__(layer, "training", mode)
    outs = _flatten_outputs(out)
    out_names = []
    for i, t in enumerate(outs):
        name = tracer.names.get(id(t))
        if name is None or name in tracer.initializers:
            raise TraceError(f"output {i} does not depend on the inputs")
        out_names.append(name)
    input_names = {v.name for v in tracer.inputs}
    for i, name in enumerate(out_names):  # an input returned unchanged gets its own value
        if name in input_names:
            tracer.counter += 1
            copy = f"v{tracer.counter}"
            tracer.values[copy] = ValueInfo(copy, tracer.values[name].shape,
                                            tracer.values[name].dtype, tracer.values[name].batched)
            tracer.nodes.append(Node("identity", [name], copy, {}, ()))
            out_names[i] = copy
    nodes = _prune(tracer.nodes, out_names)
    _name_nodes(nodes, leaf_scopes)
    used = {i for n in nodes for i in n.inputs if i is not None}
    inits = {k: v for k, v in tracer.initializers.items() if k in used}
    # final value names: outputs "output" / "output_<i>"; an input returned as-is stays named
    renames = {}
    for i, name in enumerate(out_names):
        if name in renames:
            continue
        renames[name] = "output" if len(out_names) == 1 else f"output_{i}"
    for n in nodes:
        if n.output in renames:
            n.output = renames[n.output]
        n.inputs = [renames.get(i, i) if i is not None else None for i in n.inputs]
    values = {}
    for name, info in tracer.values.items():
        new = renames.get(name, name)
        values[new] = ValueInfo(new, info.shape, info.dtype, info.batched)
    outputs = [values[renames.get(n, n)] for n in out_names]
    return Program(tracer.inputs, outputs, nodes, inits, values, tracer.batch)
