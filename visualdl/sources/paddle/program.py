"""PaddlePaddle static programs (``.pdmodel``, a serialized ``ProgramDesc``) as the graph
JSON VisualDL's ``add_graph`` writes, so one conversion (:func:`visualdl.sources.vdl2.graph.doc_to_onnx`) serves
both: VisualDL 2.x shows a ``.pdmodel`` found in a logdir or uploaded, and so do we (in a
logdir, or with ``--model``).

Read with our own copy of the schema's fields (``paddle_program.proto``, Paddle's field
numbers), no Paddle. As VisualDL does, only the main block (0) is shown, and each operator is
named by its ``op_namescope`` attribute plus its type and a count (``conv2d_0``): programs
saved by ``paddle.jit.save`` carry the scopes of ``paddle.static.name_scope`` when the model
used it, and are flat otherwise.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from google.protobuf.message import DecodeError

from visualdl.sources.paddle.paddle_program_pb2 import ProgramDesc

#: ``VarType.Type`` values of tensors, by the dtype names VisualDL writes.
_DTYPES = {0: "bool", 1: "int16", 2: "int32", 3: "int64", 4: "float16", 5: "float32",
           6: "float64", 20: "uint8", 21: "int8", 22: "bfloat16", 23: "complex64",
           24: "complex128"}
#: ``AttrType`` -> the field holding its value (blocks and scalars are not shown).
_ATTR_FIELDS = {0: ("i", "INT"), 1: ("f", "FLOAT"), 2: ("s", "STRING"), 3: ("ints", "INTS"),
                4: ("floats", "FLOATS"), 5: ("strings", "STRINGS"), 6: ("b", "BOOL"),
                7: ("bools", "BOOLS"), 9: ("l", "LONG"), 11: ("longs", "LONGS"),
                12: ("float64s", "FLOAT64S"), 13: ("var_name", "VAR"),
                14: ("vars_name", "VARS"), 15: ("float64", "FLOAT64")}


def program_doc(data: bytes) -> dict[str, Any]:
    """The graph JSON (``nodes`` and ``vars``, VisualDL's shape) of a ``.pdmodel`` file's
    bytes; ValueError saying what is wrong when they are not a Paddle program."""
    if not data:
        raise ValueError("not a Paddle program (.pdmodel): the file is empty")
    try:
        program = ProgramDesc.FromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"not a Paddle program (.pdmodel): the protobuf could not be "
                         f"decoded ({exc or type(exc).__name__})") from None
    if not program.blocks or not program.blocks[0].ops:
        raise ValueError("not a Paddle program (.pdmodel): no operators in its main block")
    block = program.blocks[0]
    variables = []
    for var in block.vars:
        tensor = var.type.lod_tensor.tensor if var.type.HasField("lod_tensor") else None
        variables.append({
            "name": var.name,
            "shape": list(tensor.dims) if tensor is not None else "",
            "dtype": f"paddle.{_DTYPES[tensor.data_type]}"
            if tensor is not None and tensor.data_type in _DTYPES else "",
            "persistable": var.persistable,
        })
    counts: Counter = Counter()
    nodes = []
    for op in block.ops:
        attrs: dict[str, Any] = {}
        types: dict[str, str] = {}
        for attr in op.attrs:
            field = _ATTR_FIELDS.get(attr.type)
            if field is None:
                continue
            value = getattr(attr, field[0])
            attrs[attr.name] = list(value) if not isinstance(value, (int, float, str)) \
                else value
            types[attr.name] = field[1]
        scope = attrs.get("op_namescope", "/")
        scope = scope if isinstance(scope, str) and scope.endswith("/") else "/"
        name = f"{scope}{op.type}_{counts[op.type]}"
        counts[op.type] += 1
        nodes.append({
            "name": name, "type": op.type, "is_leaf_node": True,
            "input_vars": {v.parameter: list(v.arguments) for v in op.inputs},
            "output_vars": {v.parameter: list(v.arguments) for v in op.outputs},
            "attrs": attrs, "attr_types": types,
        })
    return {"version": "pdmodel", "nodes": nodes, "vars": variables}
