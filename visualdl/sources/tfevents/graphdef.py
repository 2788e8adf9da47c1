"""A TensorBoard ``GraphDef`` (``Event.graph_def``, written by ``add_graph``) as ONNX.

The graph view lays out ONNX models (``visualdl.kinds.graph``); rather than teach it a
second format, each ``NodeDef`` becomes an ONNX node of the same name, so the name scopes
torch and tensorboardX write (``Net/Linear[fc1]/input.3``) become the view's groups, just as
TensorBoard draws them. Edges follow the ``input`` lists (``node:port`` is that node's
output ``port``; ``^node`` control inputs are kept as edges too), ops keep their names
(``aten::linear``) in a domain of their own so that ONNX's checker and shape inference leave
them alone, attributes are carried over as ONNX attributes, and torch's ``_output_shapes``
becomes the shape of each edge. Only ``onnx.helper`` is used: no TensorFlow, no TensorBoard.

TensorFlow keeps much of a model outside ``GraphDef.node``: a ``While`` loop's body, an
``If``'s branches and every ``tf.function`` call (Keras' LSTM, its training step) live in
the function library. As TensorBoard's graph dashboard does, each function is drawn once,
as a group ``__function_library__/<function>`` holding its body, its arguments and its
returns; a call names its function in its attributes (``body``, ``f``, ...).
"""

from __future__ import annotations

from typing import Any

from visualdl.sources.tfevents import event_pb2

#: The ONNX domain of the converted ops (not an ONNX operator set).
DOMAIN = "tensorboard.graph"
#: The group of the library's functions (TensorBoard's name for it).
LIBRARY = "__function_library__"
_DTYPE_TO_ONNX = {1: 1, 2: 11, 3: 6, 4: 2, 5: 5, 6: 3, 7: 8, 9: 7, 10: 9, 19: 10}
#: TensorFlow's ``DataType`` names by value (types.proto): a type attribute reads as
#: TensorBoard shows it (``DT_FLOAT``), not as the enum's number.
_DTYPE_NAMES = (
    "DT_INVALID", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8", "DT_INT16", "DT_INT8",
    "DT_STRING", "DT_COMPLEX64", "DT_INT64", "DT_BOOL", "DT_QINT8", "DT_QUINT8", "DT_QINT32",
    "DT_BFLOAT16", "DT_QINT16", "DT_QUINT16", "DT_UINT16", "DT_COMPLEX128", "DT_HALF",
    "DT_RESOURCE", "DT_VARIANT", "DT_UINT32", "DT_UINT64", "DT_FLOAT8_E5M2",
    "DT_FLOAT8_E4M3FN", "DT_FLOAT8_E4M3FNUZ", "DT_FLOAT8_E4M3B11FNUZ", "DT_FLOAT8_E5M2FNUZ",
    "DT_INT4", "DT_UINT4", "DT_INT2", "DT_UINT2", "DT_FLOAT4_E2M1FN")


def dtype_name(value: int) -> str:
    """``DT_FLOAT`` for 1; a reference type (value + 100) is ``DT_FLOAT_REF``; an unknown
    value stays its number."""
    ref = value > 100
    base = value - 100 if ref else value
    if 0 <= base < len(_DTYPE_NAMES):
        return _DTYPE_NAMES[base] + ("_REF" if ref else "")
    return str(value)


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
    if which == "i":
        return helper.make_attribute(key, int(value.i))
    if which == "type":
        return helper.make_attribute(key, dtype_name(int(value.type)))
    if which == "b":
        return helper.make_attribute(key, int(value.b))
    if which == "f":
        return helper.make_attribute(key, float(value.f))
    if which == "shape":
        return helper.make_attribute(key, _shape_text(value.shape))
    if which == "placeholder":
        return helper.make_attribute(key, value.placeholder)
    if which == "func":
        return helper.make_attribute(key, value.func.name)
    if which == "tensor":
        t = value.tensor
        return helper.make_attribute(
            key, f"tensor {dtype_name(int(t.dtype))} shape "
                 f"{[d.size for d in t.tensor_shape.dim]}")
    if which == "list":
        lv = value.list
        if len(lv.s):
            return helper.make_attribute(key, [s.decode("utf-8", "replace") for s in lv.s])
        if len(lv.type):
            return helper.make_attribute(key, [dtype_name(int(x)) for x in lv.type])
        if len(lv.i) or len(lv.b):
            return helper.make_attribute(key, [int(x) for x in (lv.i or lv.b)])
        if len(lv.f):
            return helper.make_attribute(key, [float(x) for x in lv.f])
        if len(lv.shape):
            return helper.make_attribute(key, [_shape_text(s) for s in lv.shape])
        if len(lv.func):
            return helper.make_attribute(key, [f.name for f in lv.func])
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

    try:
        graph = event_pb2.GraphDef.FromString(graph_def)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"graph_def is not a GraphDef: {exc}") from None
    return graphs_to_onnx([graph])


def run_metadata_to_onnx(run_metadata: bytes) -> bytes:
    """The traced functions of a ``RunMetadata`` (``tf.summary.trace_export``) as one ONNX
    model: each function's graph before optimization, under ``graph_<k>/`` when there are
    several (TensorBoard merges them the same way)."""
    from google.protobuf.message import DecodeError

    try:
        meta = event_pb2.RunMetadata.FromString(run_metadata)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"run metadata is not a RunMetadata: {exc}") from None
    graphs = [fg.pre_optimization_graph for fg in meta.function_graphs]
    if not graphs:
        raise ValueError("the run metadata holds no function graph")
    return graphs_to_onnx(graphs)


def graphs_to_onnx(graphs: list) -> bytes:
    """One ONNX model drawing ``graphs`` (``GraphDef`` messages) and their libraries."""
    from onnx import TensorProto, helper

    many = len(graphs) > 1
    nodes: list = []
    for k, graph in enumerate(graphs):
        prefix = f"graph_{k}/" if many else ""
        nodes += [(prefix + n.name, n.op, [_scoped(prefix, ref) for ref in n.input], n.attr,
                   n.device) for n in graph.node if n.name]
    library = {}
    for graph in graphs:
        for fn in graph.library.function:
            library.setdefault(fn.signature.name, fn)
    for name in sorted(library):
        nodes += _function_nodes(library[name])
    return _build(helper, TensorProto, nodes)


def _scoped(prefix: str, ref: str) -> str:
    if not prefix:
        return ref
    return "^" + prefix + ref[1:] if ref.startswith("^") else prefix + ref


def _function_nodes(fn: Any) -> list:
    """A library function's body as graph nodes under ``__function_library__/<name>/``.
    Inside a function an input names an argument, ``node:output_arg:index`` or ``^node``;
    each becomes the same ``node:port`` form as the main graph's."""
    scope = f"{LIBRARY}/{fn.signature.name}/"
    ports: dict[str, dict[str, int]] = {}  # node -> {"out_arg:index": port}

    def ref(text: str) -> str:
        control = text.startswith("^")
        name = text[1:] if control else text
        node, _, rest = name.partition(":")
        if control or not rest:
            return ("^" if control else "") + scope + node
        used = ports.setdefault(node, {})
        port = used.setdefault(rest, len(used))
        return scope + node + (f":{port}" if port else "")

    out = [(scope + arg.name, "_Arg", [], {}, "") for arg in fn.signature.input_arg]
    for n in fn.node_def:
        if n.name:
            out.append((scope + n.name, n.op, [ref(r) for r in n.input], n.attr, n.device))
    for key in sorted(fn.ret):
        out.append((scope + key, "_Retval", [ref(fn.ret[key])], {}, ""))
    return out


def _build(helper: Any, TensorProto: Any, graph_nodes: list) -> bytes:
    """``graph_nodes``: ``(name, op, inputs, attrs, device)`` with inputs in GraphDef form."""
    names = {name for name, *_ in graph_nodes}
    ports: dict[str, int] = {}  # node -> highest output port used
    consumed: set[str] = set()
    for _, _, inputs, _, _ in graph_nodes:
        for ref in inputs:
            tensor, producer, port = _tensor_name(ref)
            ports[producer] = max(ports.get(producer, 0), port)
            consumed.add(tensor)
    nodes, value_info, seen = [], [], set()
    for name, op, node_inputs, node_attrs, device in graph_nodes:
        if name in seen:
            continue  # ONNX names must be unique; TensorBoard would not draw it either
        seen.add(name)
        outputs = [name] + [f"{name}:{k}" for k in range(1, ports.get(name, 0) + 1)]
        inputs = [_tensor_name(ref)[0] for ref in node_inputs]
        attrs = []
        for key in sorted(node_attrs):
            value = node_attrs[key]
            if key == "_output_shapes" and value.WhichOneof("value") == "list":
                for out, shape in zip(outputs, value.list.shape):
                    value_info.append(helper.make_tensor_value_info(
                        out, TensorProto.UNDEFINED, _dims(shape)))
            attr = _attribute(helper, key, value)
            if attr is not None:
                attrs.append(attr)
        if device:
            attrs.append(helper.make_attribute("device", device))
        made = helper.make_node(op or "Unknown", inputs, outputs, name=name, domain=DOMAIN)
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
