"""PaddlePaddle 3.x programs saved as PIR JSON, read into VisualDL's graph JSON and ONNX,
compared with what Paddle itself reports of the same programs.

``data/`` holds four programs saved by PaddlePaddle 3.3.1 (the commands are in
``make_pir_programs.py``): an MLP with ``split``/``concat`` (``mlp/inference.json``), a CNN
of nested layers with conv, batch norm and pooling (``cnn/net.json``), a model with an
``if``/``else`` and a ``while`` loop (``cf/inference.json``) and a static-graph program
(``static/model.json``). Each ``ref.json`` is Paddle's own view of its program as
``paddle.static.load_inference_model`` loads it: the main block's operators in order, with
their ``struct_name``, their operands (which operator and result made each), their results'
dtypes and shapes, the parameters' names, and the operators of control flow's bodies.
"""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest

from visualdl.sources.paddle import looks_like_program, to_onnx
from visualdl.sources.paddle.pir_json import pir_doc

DATA = os.path.join(os.path.dirname(__file__), "data")
PROGRAMS = {"mlp": "inference.json", "cnn": "net.json", "cf": "inference.json",
            "static": "model.json"}
#: Paddle's operators that are no node of the graph: parameters and the graph's inputs and
#: outputs become variables, PIR's vector packing is looked through.
_NOT_NODES = {"builtin.parameter", "pd_op.data", "pd_op.fetch", "builtin.combine",
              "builtin.split"}


def _raw(folder: str) -> bytes:
    with open(os.path.join(DATA, folder, PROGRAMS[folder]), "rb") as f:
        return f.read()


def _ref(folder: str) -> dict:
    with open(os.path.join(DATA, folder, "ref.json")) as f:
        return json.load(f)


def _short(name: str) -> str:
    return name.split(".", 1)[1]  # pd_op.matmul -> matmul


def _ref_ops(ref: dict) -> list[tuple[int, dict]]:
    return [(i, op) for i, op in enumerate(ref["ops"]) if op["op"] not in _NOT_NODES]


def _ref_sources(ref: dict, i: int) -> list:
    """What each operand of Paddle's operator ``i`` comes from: ``("param", name)``,
    ``("data", name)`` or ``("op", k, result)`` (k: the node's place among the graph's
    nodes), vectors looked through as the reader does."""
    ops = ref["ops"]
    place = {j: k for k, (j, _) in enumerate(_ref_ops(ref))}

    def source(found: list | None) -> list:
        if found is None:
            return []
        j, result = found
        op = ops[j]
        if op["op"] == "builtin.parameter":
            return [("param", op["parameter_name"])]
        if op["op"] == "pd_op.data":
            return [("data", op["name"])]
        if op["op"] == "builtin.combine":
            return [s for v in op["inputs"] for s in source(v)]
        if op["op"] == "builtin.split":  # element ``result`` of the vector it unpacks
            return [source(op["inputs"][0])[result]]
        if op["outputs"][result] is None:  # a vector made by an operator: its elements,
            # as many as the builtin.split that unpacks it hands out
            [unpack] = [o for o in ops if o["op"] == "builtin.split"
                        and o["inputs"][0] == [j, result]]
            return [("op", place[j], result + e) for e in range(len(unpack["outputs"]))]
        return [("op", place[j], result)]

    return [s for v in ops[i]["inputs"] for s in source(v)] + \
        [s for v in ops[i].get("reads", []) for s in source(v)
         if s not in [t for w in ops[i]["inputs"] for t in source(w)]]


def _doc_sources(doc: dict, node: dict) -> list:
    """The same of one node of the reader's graph JSON."""
    nodes = [n for n in doc["nodes"] if n["type"] not in ("feed", "fetch")]
    made = {v: ("op", k, j) for k, n in enumerate(nodes)
            for j, v in enumerate(n["output_vars"].get("Out", []))}
    fed = {v for n in doc["nodes"] if n["type"] == "feed" for v in n["output_vars"]["Out"]}
    params = {v["name"] for v in doc["vars"] if v["persistable"]}
    found = []
    for v in node["input_vars"].get("X", []):
        if v in params:
            found.append(("param", v))
        elif v in fed:
            found.append(("data", v))
        else:
            found.append(made[v])
    return found


@pytest.mark.parametrize("folder", sorted(PROGRAMS))
def test_operators_are_paddles_in_order_named_by_layer(folder):
    ref, doc = _ref(folder), pir_doc(_raw(folder))
    assert ref["paddle"] == "3.3.1" and doc["version"] == "pir 4"
    nodes = [n for n in doc["nodes"] if n["type"] not in ("feed", "fetch")]
    expected = _ref_ops(ref)
    assert [n["type"] for n in nodes] == [_short(op["op"]) for _, op in expected]
    counts: Counter = Counter()
    for node, (_, op) in zip(nodes, expected):
        kind = _short(op["op"])
        assert node["name"] == f"{op['struct_name'] or '/'}{kind}_{counts[kind]}"
        counts[kind] += 1
    # the graph's inputs and outputs, as Paddle's data and fetch operators name them
    feeds = [n["output_vars"]["Out"] for n in doc["nodes"] if n["type"] == "feed"]
    assert feeds == [[name] for name in ref["feeds"]]
    assert sum(n["type"] == "fetch" for n in doc["nodes"]) == \
        sum(op["op"] == "pd_op.fetch" for op in ref["ops"])


@pytest.mark.parametrize("folder", sorted(PROGRAMS))
def test_edges_are_paddles(folder):
    ref, doc = _ref(folder), pir_doc(_raw(folder))
    nodes = [n for n in doc["nodes"] if n["type"] not in ("feed", "fetch")]
    for node, (i, op) in zip(nodes, _ref_ops(ref)):
        assert _doc_sources(doc, node) == _ref_sources(ref, i), node["name"]


@pytest.mark.parametrize("folder", sorted(PROGRAMS))
def test_shapes_dtypes_and_parameters_are_paddles(folder):
    ref, doc = _ref(folder), pir_doc(_raw(folder))
    variables = {v["name"]: v for v in doc["vars"]}
    nodes = [n for n in doc["nodes"] if n["type"] not in ("feed", "fetch")]
    checked = 0
    for node, (_, op) in zip(nodes, _ref_ops(ref)):
        tensors = [o for o in op["outputs"] if o is not None]
        if len(tensors) < len(op["outputs"]):
            continue  # a vector: its elements' types are checked below, at builtin.split
        for name, (dtype, shape) in zip(node["output_vars"]["Out"], tensors, strict=True):
            assert variables[name]["dtype"] == f"paddle.{dtype}", name
            assert variables[name]["shape"] == shape, name
            checked += 1
    assert checked == sum(len(op["outputs"]) for _, op in _ref_ops(ref)
                          if None not in op["outputs"])
    for op in ref["ops"]:
        if op["op"] == "builtin.split":
            producer = ref["ops"][op["inputs"][0][0]]
            if producer["op"] == "builtin.combine":
                continue
            node = nodes[[j for j, _ in _ref_ops(ref)].index(op["inputs"][0][0])]
            for name, (dtype, shape) in zip(node["output_vars"]["Out"], op["outputs"],
                                            strict=True):
                assert (variables[name]["dtype"], variables[name]["shape"]) == \
                    (f"paddle.{dtype}", shape)
    params = {op["parameter_name"]: (f"paddle.{op['outputs'][0][0]}", op["outputs"][0][1])
              for op in ref["ops"] if op["op"] == "builtin.parameter"}
    made = {v for n in doc["nodes"] for v in n["output_vars"].get("Out", [])}
    # persistable and made by no operator: the parameters (Paddle marks fetch's result
    # persistable too, and so does the reader, as Paddle wrote it)
    assert {v["name"]: (v["dtype"], v["shape"]) for v in doc["vars"]
            if v["persistable"] and v["name"] not in made} == params
    assert [v["name"] for v in doc["vars"] if v["persistable"] and v["name"] in made] == \
        [n["output_vars"]["Out"][0] for n in doc["nodes"] if n["type"] == "fetch"]
    fed = {op["name"]: op["outputs"][0] for op in ref["ops"] if op["op"] == "pd_op.data"}
    for name, (dtype, shape) in fed.items():
        assert (variables[name]["dtype"], variables[name]["shape"]) == \
            (f"paddle.{dtype}", shape)


def test_layer_paths_group_the_cnn():
    doc = pir_doc(_raw("cnn"))
    scopes = Counter(n["name"].rsplit("/", 1)[0] for n in doc["nodes"])
    assert scopes == {"/Sequential/Block/Conv2D": 4, "/Sequential/Block/BatchNorm2D": 1,
                      "/Sequential/Block": 3, "/Linear_2": 2, "": 3}  # "": data, flatten, fetch
    [bn] = [n for n in doc["nodes"] if n["type"] == "batch_norm_"]
    assert bn["attrs"]["is_test"] is True and bn["attrs"]["data_format"] == "NCHW"
    assert bn["attrs"]["epsilon"] == pytest.approx(1e-5)
    assert "struct_name" not in bn["attrs"]
    [conv] = [n for n in doc["nodes"] if n["type"] == "conv2d"]
    assert conv["attrs"]["strides"] == [1, 1] and conv["attrs"]["paddings"] == [1, 1]
    assert conv["attr_types"]["strides"] == "0.a_array"


def test_control_flow_is_one_node_listing_its_bodies():
    """``if`` and ``while`` are nodes of the main block, as Paddle's global block has them;
    their bodies' operators are listed in their attributes (block by block, as Paddle's
    ``op.blocks()`` lists them), and what the bodies read from the main block is among
    their inputs (the ``if`` reads the Linear's output only inside its branches)."""
    ref, doc = _ref("cf"), pir_doc(_raw("cf"))
    by_type = {n["type"]: n for n in doc["nodes"]}
    for kind in ("if", "while"):
        [op] = [op for op in ref["ops"] if op["op"] == f"pd_op.{kind}"]
        node = by_type[kind]
        bodies = [[_short(o) for o in block] for block in op["blocks"]]
        assert [node["attrs"][f"block_{i}_ops"] for i in range(len(bodies))] == bodies
        assert f"block_{len(bodies)}_ops" not in node["attrs"]
    assert by_type["if"]["input_vars"]["X"] == ["greater_than_0.tmp_0", "add_0.tmp_0"]
    assert by_type["while"]["output_vars"]["Out"] == ["while_0.tmp_0", "while_0.tmp_1"]
    [fetch] = [n for n in doc["nodes"] if n["type"] == "fetch"]
    assert fetch["input_vars"]["X"] == ["while_0.tmp_1"]


@pytest.mark.parametrize("folder", sorted(PROGRAMS))
def test_converts_to_onnx_with_paddles_inputs_and_weights(folder):
    onnx = pytest.importorskip("onnx")
    ref = _ref(folder)
    model = onnx.load_from_string(to_onnx(_raw(folder)))
    assert model.producer_name == "PaddlePaddle PIR program (.json)"
    assert [n.op_type for n in model.graph.node] == [_short(op["op"]) for _, op in
                                                     _ref_ops(ref)]
    assert [i.name for i in model.graph.input] == ref["feeds"]
    [data] = [op for op in ref["ops"] if op["op"] == "pd_op.data"]
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_value if d.HasField("dim_value") else -1 for d in dims] == \
        data["outputs"][0][1]
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    weights = {w.name: list(w.dims) for w in model.graph.initializer}
    assert weights == {op["parameter_name"]: op["outputs"][0][1] for op in ref["ops"]
                       if op["op"] == "builtin.parameter"}
    [fetch] = [op for op in ref["ops"] if op["op"] == "pd_op.fetch"]
    [out] = model.graph.output
    producer = next(n for n in model.graph.node if out.name in n.output)
    assert producer.op_type == _short(ref["ops"][fetch["inputs"][0][0]]["op"])


# -- recognition by first bytes ----------------------------------------------------------

@pytest.mark.parametrize("folder", sorted(PROGRAMS))
def test_told_by_first_bytes_compact_or_indented(folder):
    raw = _raw(folder)
    assert raw.startswith(b'{"base_code":{"magic":"pir"')
    assert looks_like_program(raw[:128]) is True
    pretty = json.dumps(json.loads(raw), indent=4).encode()
    assert looks_like_program(pretty[:128]) is True
    assert pir_doc(pretty) == pir_doc(raw)
    assert looks_like_program(raw[:10]) is None  # being written: may still be one
    assert looks_like_program(raw[:10], whole=True) != True  # noqa: E712


@pytest.mark.parametrize("head", [
    b'{"traceEvents": [], "schemaVersion": 1}',
    b'{"base_code": {"magic": "onnx"}}',
    b'{\n  "architectures": ["BertModel"],\n  "hidden_size": 768\n}',
    b'[1, 2, 3]',
])
def test_other_json_is_not_a_program(head):
    verdict = looks_like_program(head, whole=True)
    assert isinstance(verdict, str), verdict


def test_a_protobuf_whose_first_block_is_123_bytes_is_not_json():
    """A ``ProgramDesc`` starts 0x0A then its first block's length: 123 is ``{``."""
    assert looks_like_program(b"\x0a{\x08\x00\x10\xff" + b"\x00" * 20) is True


# -- malformed programs: a clear ValueError, never a crash -----------------------------

def _with(change) -> bytes:
    doc = json.loads(_raw("mlp"))
    change(doc)
    return json.dumps(doc).encode()


def _ops(doc: dict) -> list:
    return doc["program"]["regions"][0]["blocks"][0]["ops"]


def _set_type(doc: dict, tag: str) -> None:
    _ops(doc)[5]["O"][0]["TT"]["#"] = tag


@pytest.mark.parametrize("data, message", [
    (b"", "the file is empty"),
    (b'{"base_code":{"magic":"pir","version":4},"program":{"regions":[', "bad JSON at line 1"),
    (b'{"base_code":{"magic":"pir"}}\xff', "not UTF-8 text"),
    (b'{"base_code":{"magic":"pir","version":4}}', 'no "program" with a list of "regions"'),
    (b'{"base_code":{"magic":"pir"},"program":{"regions":[{"#":"region_0"}]}}',
     'the first region of the program has no "blocks"'),
    (b'{"base_code":{"magic":"pir"},"program":{"regions":[{"blocks":[{"ops":[]}]}]}}',
     "no operators in its main block"),
    (b'{"base_code":{"magic":"mlir"},"program":{}}', '"magic": "pir"'),
    (b'{"base_code":{"magic":"pir"},"program":' + b"[" * 100000, "nested too deeply"),
    (_with(lambda d: _set_type(d, "0.t_f128_tensor")),
     "operator 5 of the main block (1.matmul) has a value of unknown type '0.t_f128_tensor'"),
    (_with(lambda d: _ops(d)[5]["O"][0]["TT"]["D"][0].update({"#": "0.t_f7"})),
     "unknown type '0.t_f7'"),
    (_with(lambda d: _ops(d)[5]["I"].__setitem__(0, {"%": 99})),
     "operator 5 of the main block (1.matmul) reads value %99, which nothing before it makes"),
    (_with(lambda d: _ops(d)[0].update({"A": [0, 1, 1]})),
     "operator 0 of the main block is a parameter without its name"),
    (_with(lambda d: _ops(d)[5].pop("#")), "operator 5 of the main block has no name"),
    (_with(lambda d: _ops(d)[5]["O"][0].pop("%")), 'without its number ("%")'),
    (_with(lambda d: _ops(d)[5]["A"].append({"AT": {"D": 1}})),
     'has an attribute without its name ("N")'),
    (_with(lambda d: _ops(d)[5]["A"].append({"N": "x", "AT": {"D": 1}})),
     'attribute x has an attribute without its tag ("#")'),
    (_with(lambda d: _ops(d)[5]["O"][0]["TT"].update({"D": [{"#": "0.t_f32"}]})),
     "a t_dtensor type without its dtype and dims"),
    (_with(lambda d: _ops(d)[5].update({"regions": [{"#": "r"}]})),
     'a region of operator 5 of the main block (1.matmul) has no list of "blocks"'),
])
def test_malformed_programs_say_what_is_wrong(data, message):
    with pytest.raises(ValueError) as err:
        pir_doc(data)
    assert str(err.value).startswith("not a Paddle PIR program (.json): ")
    assert message in str(err.value)
    with pytest.raises(ValueError):
        to_onnx(data)


def test_parameters_written_in_full_read_as_compressed_ones():
    """Paddle compresses ``builtin.parameter`` to ``"p"``; a parameter written as any other
    builtin operator (``0.parameter`` with a ``parameter_name`` attribute, as files of other
    PIR versions may hold) is read the same. Made from the MLP by rewriting its ``p``s."""
    def expand(doc: dict) -> None:
        for i, op in enumerate(_ops(doc)):
            if op["#"] == "p":
                _ops(doc)[i] = {"#": "0.parameter", "I": [], "O": [op["O"]], "A": [
                    {"N": "parameter_name", "AT": {"#": "0.a_str", "D": op["A"][3]}}]}

    expanded = pir_doc(_with(expand))
    compressed = pir_doc(_raw("mlp"))
    assert expanded["nodes"] == compressed["nodes"]
    assert expanded["vars"] == compressed["vars"]
