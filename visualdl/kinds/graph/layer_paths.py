"""Which layer (module) of the training code each ONNX node came from.

Why: activation statistics and profiles name layers as the training code knows them
(``features.2``, ``layer1.0.conv1``); the graph names ONNX nodes. The two exporters the
view meets write the layer into the node name in different ways:

* ``visualdl.framework`` (``vf.onnx``): ``<scope>`` for the single op of a leaf layer,
  ``<scope>/<op>`` or ``<scope>/<op>_<k>`` otherwise (``k``: the op's k-th call in that
  layer), and ``<that>/<OnnxOp>[_j]`` when one framework op became several ONNX nodes; each
  node's doc string says ``visualdl.framework op <op>``. ``<scope>`` is the layer path with
  ``/`` (``features/2``).
* PyTorch's exporter: ``/layer1/layer1.0/conv1/Conv``: each level names the module by its
  full dotted path or by its attribute name, and the last part is the ONNX op.

Both come down to a dotted layer path per node (``features.2``, ``layer1.0.conv1``); ours
also to the framework op and its call index, which a profile of our framework matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from visualdl.kinds.graph.parsed_model import GraphModel, Node

__all__ = ["FRAMEWORK_PRODUCER", "FrameworkOp", "framework_alternates", "framework_ops",
           "layer_path", "layer_paths", "module_path", "nodes_by_layer"]

FRAMEWORK_PRODUCER = "visualdl.framework"
_DOC = re.compile(r"^visualdl\.framework op (\S+)$")
_SUFFIX = re.compile(r"^(.*)_(\d+)$")


@dataclass(frozen=True)
class FrameworkOp:
    """One op of our framework's traced program, as an ONNX node came from it."""

    scope: str  # "features/2" ("" at the top)
    op: str  # "conv2d"
    index: int  # its k-th call of ``op`` in ``scope`` during one forward pass


def framework_op(node: Node) -> FrameworkOp | None:
    """What ``vf.onnx`` wrote into the node's name and doc string (None: not one of ours)."""
    match = _DOC.match(node.doc or "")
    if node.role != "op" or match is None:
        return None
    op = match.group(1)
    parts = [p for p in node.name.split("/") if p]
    if len(parts) > 1 and _is_onnx_part(parts[-1], node.op_type):
        parts = parts[:-1]  # one of several ONNX nodes of one framework op
    if not parts:
        return None
    last, index = parts[-1], 0
    base = _SUFFIX.match(last)
    if last == op or (base is not None and base.group(1) == op):
        index = int(base.group(2)) if base is not None and last != op else 0
        return FrameworkOp("/".join(parts[:-1]), op, index)
    return FrameworkOp("/".join(parts), op, 0)  # the single op of a leaf layer


def _is_onnx_part(part: str, op_type: str) -> bool:
    if part == op_type:
        return True
    base = _SUFFIX.match(part)
    return base is not None and base.group(1) == op_type


def framework_ops(model: GraphModel) -> dict[int, FrameworkOp]:
    """Node id -> its framework op, for every node our exporter wrote."""
    out = {}
    for node in model.nodes:
        found = framework_op(node)
        if found is not None:
            out[node.id] = found
    return out


def framework_alternates(model: GraphModel, ops: dict[int, FrameworkOp] | None = None
                         ) -> dict[tuple[str, str], list[int]]:
    """(scope, op) -> nodes, for our nodes whose name reads two ways: ``classifier/relu`` of
    op ``relu`` is op ``relu`` called in layer ``classifier`` (how :func:`framework_op` reads
    it) or the only op of a leaf layer ``classifier.relu`` named after its op (``self.relu =
    nn.ReLU()``). The exporter writes both alike, so the second reading is kept here, for
    a caller to use where the first matches nothing. ``ops``: :func:`framework_ops`, if at hand."""
    out: dict[tuple[str, str], list[int]] = {}
    for node_id, fw in (framework_ops(model) if ops is None else ops).items():
        node = model.nodes[node_id]
        whole = _framework_base(node.name, node.op_type)
        if whole != fw.scope:  # "flatten": layer "flatten"'s only op, or a top-level op
            out.setdefault((whole, fw.op), []).append(node_id)
    return out


def _framework_base(name: str, op_type: str) -> str:
    """The framework node's name (without the ``/<OnnxOp>`` of a multi-node op)."""
    parts = [p for p in name.split("/") if p]
    if len(parts) > 1 and _is_onnx_part(parts[-1], op_type):
        parts = parts[:-1]
    return "/".join(parts)


def module_path(name: str) -> str:
    """PyTorch's node name -> the dotted module path: ``/layer1/layer1.0/conv1/Conv`` ->
    ``layer1.0.conv1`` (a level that repeats its parent's path is the full path; any other
    is an attribute name under the parent)."""
    parts = [p for p in name.split("/") if p][:-1]  # the last part is the ONNX op
    path = ""
    for part in parts:
        if path and not part.startswith(path + "."):
            path = f"{path}.{part}"
        else:
            path = part
    return path


def layer_path(node: Node) -> str:
    """The dotted layer path of an op node ("" for a node at the top level)."""
    ours = framework_op(node)
    if ours is not None:
        return ours.scope.replace("/", ".")
    return module_path(node.name)


def layer_paths(model: GraphModel) -> dict[int, str]:
    """Node id -> dotted layer path, for every op node."""
    return {n.id: layer_path(n) for n in model.nodes if n.role == "op"}


def nodes_by_layer(model: GraphModel) -> dict[str, list[int]]:
    """Dotted layer path -> the op nodes inside it (its sub-layers' too), in model order.
    A leaf layer named after its op (``classifier.relu``, whose node ``classifier/relu``
    reads as op ``relu`` of ``classifier``) is found too, by :func:`framework_alternates`
    where no node has that path already."""
    out: dict[str, list[int]] = {}
    for node_id, path in layer_paths(model).items():
        parts = path.split(".") if path else []
        for k in range(1, len(parts) + 1):
            out.setdefault(".".join(parts[:k]), []).append(node_id)
    for (scope, _), nodes in framework_alternates(model).items():
        out.setdefault(scope.replace("/", "."), nodes)
    return out
