"""PaddlePaddle 3.x programs saved as PIR JSON (``inference.json`` of ``paddle.jit.save``,
``model.json`` of ``paddle.static.save_inference_model``), read into the graph JSON VisualDL's
``add_graph`` writes, as :mod:`.program` reads the older ``.pdmodel`` protobuf: one
conversion to ONNX (:func:`visualdl.sources.vdl2.graph.doc_to_onnx`) serves them all.

Paddle >= 3.0 saves its new IR (PIR) by default as JSON (``paddle/fluid/pir/
serialize_deserialize/`` in Paddle's sources: the keys are in ``include/schema.h``, the writer
in ``src/ir_serialize.cc`` and ``include/serialize_utils.h``)::

    {"base_code": {"magic": "pir", "trainable": true, "version": 4},
     "program": {"regions": [{"#": "region_0", "blocks": [{"#": "block_0", "args": [],
                 "ops": [...]}]}]}}

An operator is ``{"#": "1.matmul", "I": [{"%": 5}, ...], "O": [{"%": 6, "TT": type}], "A":
[{"N": name, "AT": attribute}], "OA": [...]}``, its name prefixed by its dialect's number
(0 builtin, 1 ``pd_op``, 2 ``cf``, 3 custom ops, 4 distributed); values are numbered
(``%``; 0 is "none", negative numbers are block arguments, written under ``#``); a
parameter is compressed to ``{"#": "p", "A": [is_distributed, is_parameter, need_clip,
name], "O": value, "OA": [persistable, stop_gradient, trainable]}``. A type is ``{"#":
"0.t_dtensor", "D": [dtype, dims, layout, lod, offset]}``; an attribute ``{"#": "0.a_str",
"D": value}`` (``VD`` instead of ``D`` for NaN and infinities). Control flow (``pd_op.if``,
``pd_op.while``) holds nested ``regions``.

What the graph shows, and why:

* each operator of the main block is a node named by its ``struct_name`` attribute (the
  layer path ``paddle.jit.save`` records: ``/Sequential/Block/Conv2D/``) plus its type and
  a count (``conv2d_0``), as the ``.pdmodel`` reader names by ``op_namescope``: the layers
  become the view's groups;
* a value is named after what makes it: a parameter by its name, a ``pd_op.data`` input by
  its ``name`` attribute (those become the graph's inputs, as ``feed`` ops do), anything
  else after its operator's output (``matmul_0.tmp_0``); ``pd_op.fetch`` values are the
  graph's outputs;
* ``builtin.combine`` / ``builtin.split`` only pack values into a vector and out of it: not
  nodes, so ``concat`` reads the tensors themselves;
* a control-flow operator is one node: its bodies' operators are not drawn (the view has no
  nested graphs for Paddle), but the node lists them per region in its attributes, and the
  values its bodies read from outside are among its inputs, so the edges into the loop or
  branch show.

Types are checked: a type tag this module does not know (a newer Paddle's) is an error
saying so, not a guess; attributes are shown as they are written.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from typing import Any

__all__ = ["pir_doc", "looks_like_pir", "MAGIC", "LABEL"]

#: What a PIR JSON program starts with (nlohmann's JSON writes keys sorted, no spaces).
MAGIC = b'{"base_code":{"magic":"pir"'
#: What a person calls these files, in messages.
LABEL = "Paddle PIR program (.json)"
_OPENING = re.compile(rb'\s*\{\s*"base_code"\s*:\s*\{\s*"magic"\s*:\s*"pir"')
_BOM = b"\xef\xbb\xbf"
_NOT = "not a Paddle PIR program (.json)"

#: Scalar type names (``pir::Float32Type::name()`` ...) -> the dtype names VisualDL writes.
_DTYPES = {"t_f32": "float32", "t_f16": "float16", "t_bf16": "bfloat16", "t_f64": "float64",
           "t_i8": "int8", "t_ui8": "uint8", "t_i16": "int16", "t_i32": "int32",
           "t_i64": "int64", "t_index": "int64", "t_bool": "bool", "t_c64": "complex64",
           "t_c128": "complex128", "t_f8e4m3fn": "float8_e4m3fn",
           "t_f8e5m2": "float8_e5m2", "t_undefined": ""}
#: Tensor types whose data is ``[dtype, dims, ...]``.
_TENSORS = frozenset({"t_dtensor", "t_selected_rows", "t_dense_tensor_array",
                      "t_sparse_coo_tensor", "t_sparse_csr_tensor"})
#: Types that hold no tensor of their own (vectors of values, control flow's stacks).
_OTHERS = frozenset({"t_vec", "t_stack", "t_inlet", "t_outlet"})
#: Operators that only move values: their outputs stand for their inputs.
_PACK, _UNPACK = "combine", "split"
#: The graph's inputs and outputs (``data``/``feed`` and ``fetch``/``shadow_output``).
_INPUTS = frozenset({"data", "feed"})
_OUTPUTS = frozenset({"fetch", "shadow_output"})
#: Attributes used for the name, not shown.
_HIDDEN = frozenset({"struct_name"})


def looks_like_pir(head: bytes, whole: bool) -> bool | str | None:
    """Whether a file starting with ``head`` is a PIR JSON program: True; None while
    ``head`` may still grow into one (``whole``: it is the whole file); else why not."""
    text = head[len(_BOM):] if head.startswith(_BOM) else head
    if _OPENING.match(text):
        return True
    compact = re.sub(rb"\s+", b"", text)
    if MAGIC.startswith(compact) and not whole:
        return None
    return "its first bytes are not a PIR program's (" + MAGIC.decode() + ")"


def pir_doc(data: bytes) -> dict[str, Any]:
    """The graph JSON (``nodes`` and ``vars``, VisualDL's shape) of a PIR JSON program's
    bytes; ValueError saying what is wrong when they are not one."""
    try:
        return _read(data)
    except RecursionError:  # JSON nested deeper than Python's stack: not Paddle's
        raise ValueError(f"{_NOT}: its JSON is nested too deeply to read") from None


def _read(data: bytes) -> dict[str, Any]:
    if not data.strip():
        raise ValueError(f"{_NOT}: the file is empty")
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{_NOT}: not UTF-8 text ({exc.reason} at byte {exc.start})") \
            from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{_NOT}: bad JSON at line {exc.lineno} column {exc.colno} "
                         f"({exc.msg})") from None
    base = doc.get("base_code") if isinstance(doc, dict) else None
    if not isinstance(base, dict) or base.get("magic") != "pir":
        raise ValueError(f'{_NOT}: no "base_code" with "magic": "pir"')
    program = doc.get("program")
    regions = program.get("regions") if isinstance(program, dict) else None
    if not isinstance(regions, list) or not regions:
        raise ValueError(f'{_NOT}: no "program" with a list of "regions"')
    block = _first_block(regions, "the program")
    reader = _Reader()
    reader.block_args(block, "the main block")
    for i, op in enumerate(_ops(block, "the main block")):
        reader.op(op, f"operator {i} of the main block")
    if not reader.nodes:
        raise ValueError(f"{_NOT}: no operators in its main block")
    return {"version": f"pir {base.get('version', '')}".strip(), "nodes": reader.nodes,
            "vars": list(reader.vars.values())}


def _first_block(regions: list, where: str) -> dict[str, Any]:
    region = regions[0]
    blocks = region.get("blocks") if isinstance(region, dict) else None
    if not isinstance(blocks, list) or not blocks or not isinstance(blocks[0], dict):
        raise ValueError(f'{_NOT}: the first region of {where} has no "blocks"')
    return blocks[0]


def _ops(block: dict[str, Any], where: str) -> list[dict[str, Any]]:
    ops = block.get("ops")
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        raise ValueError(f'{_NOT}: {where} has no list of "ops"')
    return ops


def _blocks(op: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The blocks of an operator's regions (``if``: then and else; ``while``: the body)."""
    regions = op.get("regions", [])
    if not isinstance(regions, list):
        raise ValueError(f'{_NOT}: {where} has a "regions" that is not a list')
    found = []
    for region in regions:
        blocks = region.get("blocks") if isinstance(region, dict) else None
        if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
            raise ValueError(f'{_NOT}: a region of {where} has no list of "blocks"')
        found += blocks
    return found


def _value_id(value: Any, key: str, where: str) -> int:
    """A value's number: under ``%`` (``#`` for block arguments, and for every value in the
    first PIR files, before ``%`` was introduced)."""
    number = value.get(key) if isinstance(value, dict) else None
    if number is None and isinstance(value, dict):
        number = value.get("#")
    if not isinstance(number, int) or isinstance(number, bool):
        raise ValueError(f'{_NOT}: {where} has a value without its number ("{key}")')
    return number


def _tag(item: Any, what: str, where: str) -> str:
    """The name of a type or attribute without its dialect (``0.t_f32`` -> ``t_f32``)."""
    tag = item.get("#") if isinstance(item, dict) else None
    if not isinstance(tag, str):
        raise ValueError(f'{_NOT}: {where} has {what} without its tag ("#")')
    return tag.rpartition(".")[2]


def _type(item: Any, where: str) -> tuple[str, list[int] | str]:
    """``(dtype, shape)`` of a value's type (``""`` for what is not a tensor)."""
    if isinstance(item, dict) and item.get("#") == "NULL":
        return "", ""
    tag = _tag(item, "a type", where)
    data = item.get("D")
    if tag in _DTYPES:
        return _DTYPES[tag], []
    if tag == "t_dist_dtensor" and isinstance(data, list) and data:
        return _type(data[0], where)
    if tag in _TENSORS:
        if not (isinstance(data, list) and len(data) >= 2 and isinstance(data[1], list)):
            raise ValueError(f"{_NOT}: {where} has a {tag} type without its dtype and dims")
        dtype, _ = _type(data[0], where)
        if not all(isinstance(d, int) for d in data[1]):
            raise ValueError(f"{_NOT}: {where} has a {tag} type whose dims are not integers")
        return dtype, list(data[1])
    if tag in _OTHERS:
        return "", ""
    raise ValueError(f"{_NOT}: {where} has a value of unknown type {item['#']!r}")


def _vector(item: Any) -> list | None:
    """The element types of a vector type (``t_vec``); None for any other type."""
    if isinstance(item, dict) and isinstance(item.get("#"), str) and \
            item["#"].rpartition(".")[2] == "t_vec" and isinstance(item.get("D"), list):
        return item["D"]
    return None


def _attribute(item: Any, where: str) -> Any:
    """An attribute's value as plain JSON values (nested arrays unwrapped)."""
    tag = _tag(item, "an attribute", where)
    if "VD" in item:  # a float that JSON cannot hold
        return {"NaN": math.nan, "INF": math.inf, "-INF": -math.inf}.get(item["VD"],
                                                                          math.nan)
    data = item.get("D")
    if tag == "a_array" and isinstance(data, list):
        return [_attribute(a, where) for a in data]
    if tag == "a_scalar" and isinstance(data, list) and len(data) >= 2:
        return data[1] if len(data) == 2 else data[1:]  # [dtype, value] or complex parts
    if tag == "a_type":
        dtype, shape = _type(data, where)
        return f"{dtype}{shape}" if shape != "" else dtype
    return data


class _Reader:
    """Walks the main block's operators, naming values as it goes."""

    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = []
        self.vars: dict[str, dict[str, Any]] = {}
        self.names: dict[int, list[str]] = {}  # value number -> the variables it stands for
        self.counts: Counter = Counter()

    def define(self, number: int, name: str, type_: Any, where: str,
               persistable: bool = False) -> str:
        dtype, shape = _type(type_, where)
        self.vars[name] = {"name": name, "shape": shape,
                           "dtype": f"paddle.{dtype}" if dtype else "",
                           "persistable": persistable}
        if number:
            self.names[number] = [name]
        return name

    def read(self, number: int, where: str) -> list[str]:
        if number == 0:
            return []  # an optional operand left out
        if number not in self.names:
            raise ValueError(f"{_NOT}: {where} reads value %{number}, which nothing before "
                             "it makes")
        return self.names[number]

    def block_args(self, block: dict[str, Any], where: str) -> None:
        for arg in block.get("args", []) or []:
            number = _value_id(arg, "#", where)
            self.define(number, f"arg_{-number}", arg.get("TT"), where)

    def op(self, op: dict[str, Any], where: str) -> None:
        tag = op.get("#")
        if not isinstance(tag, str):
            raise ValueError(f'{_NOT}: {where} has no name ("#")')
        if tag == "p":
            self.parameter(op, where)
            return
        kind = tag.rpartition(".")[2] or tag
        where = f"{where} ({tag})"
        attrs, types = self.attributes(op.get("A", []), where)
        inputs = op.get("I", [])
        outputs = op.get("O", [])
        if not isinstance(inputs, list) or not isinstance(outputs, list):
            raise ValueError(f'{_NOT}: {where} has inputs ("I") or outputs ("O") that are '
                             "not lists")
        ins = [name for v in inputs for name in self.read(_value_id(v, "%", where), where)]
        dialect = tag.rpartition(".")[0]
        if kind == "parameter" and dialect in ("0", "builtin"):  # not compressed to "p"
            name = attrs.get("parameter_name")
            if not isinstance(name, str) or len(outputs) != 1:
                raise ValueError(f"{_NOT}: {where} has no parameter_name")
            self.define(_value_id(outputs[0], "%", where), name, outputs[0].get("TT"), where,
                        persistable=True)
            return
        if dialect in ("0", "builtin") and kind == _PACK and len(outputs) == 1:
            self.names[_value_id(outputs[0], "%", where)] = ins
            return
        if dialect in ("0", "builtin") and kind == _UNPACK and len(inputs) == 1:
            for i, out in enumerate(outputs):
                number = _value_id(out, "%", where)
                _type(out.get("TT"), where)
                self.names[number] = [ins[i]] if len(ins) == len(outputs) else ins
            return
        if op.get("regions"):
            ins += [name for name in self.outer_reads(op, where) if name not in ins]
            for i, body in enumerate(_blocks(op, where)):
                attrs[f"block_{i}_ops"] = [str(o.get("#", "?")).rpartition(".")[2]
                                           for o in _ops(body, f"a block of {where}")]
        count = self.counts[kind]
        self.counts[kind] += 1
        scope = attrs.pop("struct_name", "") or "/"
        scope = scope if isinstance(scope, str) else "/"
        scope = ("/" + scope.strip("/") + "/").replace("//", "/")
        node_type = "feed" if kind in _INPUTS else "fetch" if kind in _OUTPUTS else kind
        persistable = self.persistable(op, where)
        outs = []
        for i, out in enumerate(outputs):
            number = _value_id(out, "%", where)
            if number == 0:
                continue
            name = attrs.get("name") if kind in _INPUTS and i == 0 else None
            name = name if isinstance(name, str) and name else f"{kind}_{count}.tmp_{i}"
            flag = persistable[i] if i < len(persistable) else False
            parts = _vector(out.get("TT"))
            if parts is None:
                outs.append(self.define(number, name, out.get("TT"), where, flag))
                continue
            # a vector of tensors (``split``'s): one output per tensor, which the
            # ``builtin.split`` after it hands out one by one
            names = [self.define(0, f"{name}_{j}", t, where, flag)
                     for j, t in enumerate(parts)]
            self.names[number] = names
            outs += names
        for key in _HIDDEN:
            types.pop(key, None)
        self.nodes.append({"name": f"{scope}{kind}_{count}", "type": node_type,
                           "is_leaf_node": True, "input_vars": {"X": ins} if ins else {},
                           "output_vars": {"Out": outs} if outs else {},
                           "attrs": attrs, "attr_types": types})

    def parameter(self, op: dict[str, Any], where: str) -> None:
        """A parameter op as Paddle compresses it (``"p"``): its value, named."""
        attrs, out = op.get("A"), op.get("O")
        if isinstance(out, list) and len(out) == 1:
            out = out[0]
        if not (isinstance(attrs, list) and len(attrs) >= 4 and isinstance(attrs[3], str)):
            raise ValueError(f"{_NOT}: {where} is a parameter without its name (the 4th "
                             'item of "A")')
        flags = op.get("OA")
        persistable = bool(flags[0]) if isinstance(flags, list) and flags else True
        self.define(_value_id(out, "%", where), attrs[3], (out or {}).get("TT"),
                    f"{where} (parameter {attrs[3]})", persistable=persistable)

    def attributes(self, items: Any, where: str) -> tuple[dict[str, Any], dict[str, str]]:
        if not isinstance(items, list):
            raise ValueError(f'{_NOT}: {where} has attributes ("A") that are not a list')
        attrs, types = {}, {}
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("N"), str):
                raise ValueError(f'{_NOT}: {where} has an attribute without its name ("N")')
            attrs[item["N"]] = _attribute(item.get("AT"), f"{where}, attribute {item['N']}")
            types[item["N"]] = item["AT"]["#"]
        return attrs, types

    @staticmethod
    def persistable(op: dict[str, Any], where: str) -> list[bool]:
        """Each output's ``persistable`` flag from the operator's ``OA`` (none: False)."""
        for item in op.get("OA", []) if isinstance(op.get("OA"), list) else []:
            if isinstance(item, dict) and item.get("N") == "persistable":
                flags = _attribute(item.get("AT"), f"{where}, output attribute persistable")
                return [bool(f) for f in flags] if isinstance(flags, list) else []
        return []

    def outer_reads(self, op: dict[str, Any], where: str) -> list[str]:
        """The variables of the main block that an operator's bodies read (at any depth):
        what the branch or loop depends on besides its operands."""
        inner: set[int] = set()
        read: list[int] = []

        def walk(o: dict[str, Any], at: str) -> None:
            for body in _blocks(o, at):
                for arg in body.get("args", []) or []:
                    inner.add(_value_id(arg, "#", at))
                for j, nested in enumerate(_ops(body, f"a block of {at}")):
                    here = f"operator {j} ({nested.get('#')}) in a block of {at}"
                    for v in nested.get("I", []) if isinstance(nested.get("I"), list) else []:
                        number = _value_id(v, "%", here)
                        if number and number not in read:
                            read.append(number)
                    outs = nested.get("O", [])
                    for v in outs if isinstance(outs, list) else [outs]:
                        inner.add(_value_id(v, "%", here))
                        _type(v.get("TT"), here)
                    if nested.get("regions"):
                        walk(nested, here)

        walk(op, where)
        names = []
        for number in read:
            if number not in inner and number in self.names:
                names += [n for n in self.names[number] if n not in names]
        return names
