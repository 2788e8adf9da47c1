"""A TensorBoard ``GraphDef`` (``Event.graph_def``, written by ``add_graph``) as ONNX.

The graph view lays out ONNX models (``visualdl.kinds.graph``); rather than teach it a
second format, each ``NodeDef`` becomes an ONNX node of the same name, so the name scopes
torch and tensorboardX write (``Net/Linear[fc1]/input.3``) become the view's groups, just as
TensorBoard draws them. Edges follow the ``input`` lists (``node:port`` is that node's
output ``port``; ``^node`` control inputs are kept as edges too), ops keep their names
(``aten::linear``) in a domain of their own so that ONNX's checker and shape inference leave
them alone, attributes are carried over as ONNX attributes, and torch's ``_output_shapes``
becomes the shape of each edge. Only ``onnx.helper`` is used: no TensorFlow, no TensorBoard.
"""

from __future__ import annotations

from typing import Any

from visualdl.sources.tfevents import event_pb2

#: The ONNX domain of the converted ops (not an ONNX operator set).
DOMAIN = "tensorboard.graph"
_DTYPE_TO_ONNX = {1: 1, 2: 11, 3: 6, 4: 2, 5: 5, 6: 3, 7: 8, 9: 7, 10: 9, 19: 10}


def _tensor_name(ref: str) -> tuple[str, str, int]:
    """(tensor name, producing node, port) of one ``NodeDef.input`` entry."""
    name = ref[1:] if ref.startswith("^") else ref
    node, _, port = name.rpartition(":")
    if node and port.isdigit():
        return (node if port == "0" else name), node, int(port)
    return name, name, 0


def _attribute(helper: Any, key: str, value: Any) -> Any:
    which = value.WhichOneof("value")
    if which == "s":
        return helper.make_attribute(key, value.s.decode("utf-8", "replace"))
    if which in ("i", "type"):
        return helper.make_attribute(key, int(getattr(value, which)))
    if which == "b":
        return helper.make_attribute(key, int(value.b))
    if which == "f":
        return helper.make_attribute(key, float(value.f))
    if which == "shape":
        return helper.make_attribute(key, _shape_text(value.shape))
    if which == "placeholder":
        return helper.make_attribute(key, value.placeholder)
    if which == "tensor":
        t = value.tensor
        return helper.make_attribute(
            key, f"tensor dtype {t.dtype} shape {[d.size for d in t.tensor_shape.dim]}")
    if which == "list":
        lv = value.list
        if len(lv.s):
            return helper.make_attribute(key, [s.decode("utf-8", "replace") for s in lv.s])
        if len(lv.i) or len(lv.type) or len(lv.b):
            return helper.make_attribute(key, [int(x) for x in (lv.i or lv.type or lv.b)])
        if len(lv.f):
            return helper.make_attribute(key, [float(x) for x in lv.f])
        if len(lv.shape):
            return helper.make_attribute(key, [_shape_text(s) for s in lv.shape])
    return None


def _shape_text(shape: Any) -> str:
    if shape.unknown_rank:
        return "?"
    return "[" + ", ".join("?" if d.size < 0 else str(d.size) for d in shape.dim) + "]"


def _dims(shape: Any) -> list | None:
    if shape.unknown_rank:
        return None
    return [d.size if d.size >= 0 else None for d in shape.dim]


def _topological(nodes: list) -> list:
    """Nodes in an order where producers come first (ONNX requires it; GraphDefs need not
    follow it). Nodes on a cycle (TensorFlow's while loops) keep their place at the end."""
    producer = {out: i for i, n in enumerate(nodes) for out in n.output}
    waiting = [0] * len(nodes)
    users: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        for ref in set(n.input):
            p = producer.get(ref)
            if p is not None and p != i:
                waiting[i] += 1
                users.setdefault(p, []).append(i)
    ready = [i for i, w in enumerate(waiting) if not w]
    order: list[int] = []
    while ready:
        nxt: list[int] = []
        for i in ready:
            order.append(i)
            for u in users.get(i, ()):
                waiting[u] -= 1
                if not waiting[u]:
                    nxt.append(u)
        ready = sorted(nxt)
    placed = set(order)
    order += [i for i in range(len(nodes)) if i not in placed]
    return [nodes[i] for i in order]


def to_onnx(graph_def: bytes) -> bytes:
    """The serialized ONNX ``ModelProto`` of a serialized ``GraphDef``; ValueError when the
    bytes are not a GraphDef."""
    from google.protobuf.message import DecodeError
    from onnx import TensorProto, helper

    try:
        graph = event_pb2.GraphDef.FromString(graph_def)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"graph_def is not a GraphDef: {exc}") from None
    names = {node.name for node in graph.node}
    ports: dict[str, int] = {}  # node -> highest output port used
    consumed: set[str] = set()
    for node in graph.node:
        for ref in node.input:
            tensor, producer, port = _tensor_name(ref)
            ports[producer] = max(ports.get(producer, 0), port)
            consumed.add(tensor)
    nodes, value_info, seen = [], [], set()
    for node in graph.node:
        if not node.name or node.name in seen:
            continue  # ONNX names must be unique; TensorBoard would not draw it either
        seen.add(node.name)
        outputs = [node.name] + [f"{node.name}:{k}" for k in range(1, ports.get(node.name, 0) + 1)]
        inputs = [_tensor_name(ref)[0] for ref in node.input]
        attrs = []
        for key in sorted(node.attr):
            value = node.attr[key]
            if key == "_output_shapes" and value.WhichOneof("value") == "list":
                for out, shape in zip(outputs, value.list.shape):
                    value_info.append(helper.make_tensor_value_info(
                        out, TensorProto.UNDEFINED, _dims(shape)))
            attr = _attribute(helper, key, value)
            if attr is not None:
                attrs.append(attr)
        if node.device:
            attrs.append(helper.make_attribute("device", node.device))
        made = helper.make_node(node.op or "Unknown", inputs, outputs, name=node.name,
                                domain=DOMAIN)
        made.attribute.extend(attrs)
        nodes.append(made)
    # inputs naming no node of the graph (a pruned producer) enter as graph inputs, and
    # what nothing consumes leaves as an output (ONNX wants a shape: unknown rank is [])
    shapes = {v.name: v for v in value_info}
    missing = sorted({t for t in consumed if _tensor_name(t)[1] not in names})
    graph_inputs = [helper.make_tensor_value_info(t, TensorProto.UNDEFINED, []) for t in missing]
    sinks = [n.output[0] for n in nodes if n.output[0] not in consumed]
    graph_outputs = [shapes.get(t) or helper.make_tensor_value_info(t, TensorProto.UNDEFINED, [])
                     for t in sinks]
    onnx_graph = helper.make_graph(_topological(nodes), "graph_def", graph_inputs, graph_outputs,
                                   value_info=value_info)
    model = helper.make_model(onnx_graph, producer_name="TensorBoard graph_def",
                              opset_imports=[helper.make_opsetid(DOMAIN, 1),
                                             helper.make_opsetid("", 17)])
    return model.SerializeToString()
