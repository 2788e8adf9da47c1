"""diff.py on small ONNX models built with onnx.helper: exact sets of added, removed and
changed ops, renamed ops matched by structure, and what changed per op."""

from __future__ import annotations

import warnings

import numpy as np

import onnx
import pytest

from visualdl.kinds.graph.diff import diff_models
from visualdl.kinds.graph.parse import open_model, parse_model
from visualdl.kinds.graph.parsed_model import GraphModel

from .diff_models import mlp as _mlp
from .diff_models import constant_add, unrelated


def _diff(before: onnx.ModelProto, after: onnx.ModelProto) -> dict:
    return diff_models(parse_model(before), parse_model(after))


def _names(items: list[dict], side: str) -> set[str]:
    return {item[side]["name"] for item in items}


def test_identical_models_have_no_changes():
    out = _diff(_mlp(), _mlp())
    assert out["summary"]["counts"] == {"added": 0, "removed": 0, "changed": 0, "unchanged": 4,
                                        "matched_by_name": 4, "matched_by_structure": 0}
    assert (out["added"], out["removed"], out["changed"]) == ([], [], [])
    assert out["related"] is True and out["message"] is None


def test_renamed_ops_are_matched_by_structure():
    out = _diff(_mlp(), _mlp(names=("dense_a", "relu_b", "dense_c")))
    counts = out["summary"]["counts"]
    assert (counts["matched_by_name"], counts["matched_by_structure"]) == (1, 3)
    assert counts["unchanged"] == 4 and out["added"] == [] and out["removed"] == []


def test_renamed_and_changed_op_is_listed_with_its_change():
    out = _diff(_mlp(alpha=0.1), _mlp(names=("a", "b", "c"), alpha=0.2))
    [changed] = out["changed"]
    assert (changed["before"]["name"], changed["after"]["name"]) == ("act", "b")
    assert changed["matched_by"] == "structure"
    assert changed["changes"] == {"attributes": [{"name": "alpha", "before": "0.1",
                                                  "after": "0.2"}]}


def test_changed_op_type_and_attribute():
    out = _diff(_mlp(), _mlp(alpha=0.3))
    [changed] = out["changed"]
    assert changed["before"]["name"] == "act"
    assert changed["changes"] == {
        "op_type": {"before": "Relu", "after": "LeakyRelu"},
        "attributes": [{"name": "alpha", "before": None, "after": "0.3"}]}


def test_changed_initializer_values():
    out = _diff(_mlp(), _mlp(w2_scale=1.5))
    [changed] = out["changed"]
    assert changed["before"]["name"] == "fc2"
    [init] = changed["changes"]["initializers"]
    assert init == {"slot": 1, "values": "differ", "max_abs_diff": 0.5,
                    "before": {"name": "W2", "dtype": "float32", "shape": [4, 2]},
                    "after": {"name": "W2", "dtype": "float32", "shape": [4, 2]}}


def test_changed_shapes_are_listed_per_slot():
    out = _diff(_mlp(), _mlp(hidden=5))
    changed = {c["before"]["name"]: c["changes"] for c in out["changed"]}
    assert set(changed) == {"fc1", "act", "fc2"}
    assert changed["act"] == {
        "inputs": [{"slot": 0, "before": {"dtype": "float32", "shape": [1, 4]},
                    "after": {"dtype": "float32", "shape": [1, 5]}}],
        "outputs": [{"slot": 0, "before": {"dtype": "float32", "shape": [1, 4]},
                     "after": {"dtype": "float32", "shape": [1, 5]}}]}
    assert changed["fc1"]["initializers"][0]["before"]["shape"] == [3, 4]
    assert changed["fc1"]["initializers"][0]["after"]["shape"] == [3, 5]
    assert "max_abs_diff" not in changed["fc1"]["initializers"][0]


def test_added_and_removed_ops():
    out = _diff(_mlp(), _mlp(extra_tanh=True, drop_relu=True))
    assert _names(out["removed"], "before") == {"act"}
    assert _names(out["added"], "after") == {"squash"}
    assert out["changed"] == []
    summary = out["summary"]
    assert summary["ops"] == {"before": 4, "after": 4}
    table = {row["op_type"]: (row["before"], row["after"]) for row in summary["op_types"]}
    assert table == {"MatMul": (2, 2), "Relu": (1, 0), "Identity": (1, 1), "Tanh": (0, 1)}
    assert summary["parameters"] == {"before": 20, "after": 20}


def test_unrelated_models_say_so_and_keep_the_summary():
    out = _diff(_mlp(), unrelated())
    assert out["related"] is False
    assert "unrelated" in out["message"]
    assert out["summary"]["counts"]["added"] == 1 and out["summary"]["counts"]["removed"] == 4
    assert out["changed"] == []
    assert out["summary"]["parameters"] == {"before": 20, "after": 0}


def test_two_framework_exports_differing_in_one_layer():
    from .diff_models import framework_pair

    out = _diff(*framework_pair())
    assert out["summary"]["counts"] == {"added": 0, "removed": 0, "changed": 1, "unchanged": 2,
                                        "matched_by_name": 3, "matched_by_structure": 0}
    [changed] = out["changed"]
    assert (changed["before"]["name"], changed["before"]["op_type"]) == ("2", "Gemm")
    changes = changed["changes"]
    assert set(changes) == {"inputs", "outputs", "initializers"}
    assert [(c["slot"], c["before"]["shape"], c["after"]["shape"])
            for c in changes["initializers"]] == [(1, [3, 8], [5, 8]), (2, [3], [5])]
    assert changes["outputs"] == [{"slot": 0, "before": {"dtype": "float32", "shape": ["batch", 3]},
                                   "after": {"dtype": "float32", "shape": ["batch", 5]}}]
    assert out["summary"]["parameters"] == {"before": 4 * 8 + 8 + 8 * 3 + 3,
                                            "after": 4 * 8 + 8 + 8 * 5 + 5}


@pytest.mark.torch
def test_torch_export_beside_ours(torch, tmp_path):
    """The same stack exported by torch and by our framework (weights initialised apart):
    every op is matched (torch names its nodes ``/0/Gemm``, ours ``0``: by structure), and
    the two Gemms differ in their weights' values and in the attributes torch writes out."""
    from .diff_models import framework_pair

    ours, _ = framework_pair()
    nn = torch.nn
    torch.manual_seed(0)
    stack = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    path = tmp_path / "torch.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(stack, (torch.zeros(2, 4),), str(path), input_names=["x"],
                          output_names=["y"], dynamo=False,
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    out = _diff(onnx.load(str(path)), ours)
    counts = out["summary"]["counts"]
    assert (counts["added"], counts["removed"]) == (0, 0)
    assert counts["matched_by_structure"] == 3
    assert {(c["before"]["name"], c["after"]["name"]) for c in out["changed"]} == {
        ("/0/Gemm", "0"), ("/2/Gemm", "2")}
    for changed in out["changed"]:  # torch writes Gemm's default alpha and beta; we do not
        assert changed["changes"]["attributes"] == [
            {"name": "alpha", "before": "1", "after": None},
            {"name": "beta", "before": "1", "after": None}]
        assert [(i["slot"], i["values"]) for i in changed["changes"]["initializers"]] == [
            (1, "differ"), (2, "differ")]
        assert set(changed["changes"]) == {"attributes", "initializers"}


def test_renamed_op_of_another_type_is_a_changed_op():
    """Renamed and retyped: the one unmatched op between two matched ones is its successor."""
    out = _diff(_mlp(), _mlp(names=("fc1", "swish", "fc2"), alpha=0.5))
    [changed] = out["changed"]
    assert (changed["before"]["name"], changed["after"]["name"]) == ("act", "swish")
    assert changed["matched_by"] == "structure"
    assert changed["changes"]["op_type"] == {"before": "Relu", "after": "LeakyRelu"}


def test_string_weights_differ_without_a_numeric_delta():
    def model(word: str) -> onnx.ModelProto:
        words = onnx.numpy_helper.from_array(np.array([word, "b"], dtype=object), "words")
        graph = onnx.helper.make_graph(
            [onnx.helper.make_node("Identity", ["words"], ["y"], name="copy")], "strings", [],
            [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.STRING, [2])], [words])
        return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])

    assert _diff(model("a"), model("a"))["changed"] == []
    [changed] = _diff(model("a"), model("z"))["changed"]
    assert changed["changes"]["initializers"] == [{
        "slot": 0, "values": "differ",
        "before": {"name": "words", "dtype": "object", "shape": [2]},
        "after": {"name": "words", "dtype": "object", "shape": [2]}}]


def test_an_op_is_paired_once_when_two_slots_offer_different_partners():
    """Split -> Add(a, b) before; after, one Add reads a and another reads b (all renamed):
    the first Add is paired with one of them, the other one is added."""
    def split(name: str) -> onnx.NodeProto:
        return onnx.helper.make_node("Split", ["x"], ["a", "b"], name=name, axis=0,
                                     num_outputs=2)

    def model(nodes: list[onnx.NodeProto], outputs: list[str]) -> onnx.ModelProto:
        graph = onnx.helper.make_graph(
            nodes, "split", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4])],
            [onnx.helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT, [2]) for o in outputs])
        return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])

    before = model([split("split"), onnx.helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                   ["y"])
    after = model([split("s2"), onnx.helper.make_node("Add", ["a", "a"], ["p"], name="first"),
                   onnx.helper.make_node("Add", ["b", "b"], ["q"], name="second")], ["p", "q"])
    out = _diff(before, after)
    counts = out["summary"]["counts"]
    assert (counts["added"], counts["removed"], counts["matched_by_structure"]) == (1, 0, 2)
    assert _names(out["added"], "after") == {"second"}


# -- weights in external files ------------------------------------------------------------------
def _external(model: onnx.ModelProto, folder) -> GraphModel:
    """The model saved with its weights as external data in ``folder`` and opened from there
    as the server opens a --model file (the weights stay in their file)."""
    folder.mkdir()
    path = folder / "model.onnx"
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=0)
    return parse_model(*open_model(path))


def test_external_weights_of_equal_dtype_and_shape_are_unchanged(tmp_path):
    """Compared by dtype and shape only (docs/graph_diff.md): a model with external weights
    diffed with itself, or with a copy in another folder, has no changes."""
    first, copy = _external(_mlp(), tmp_path / "a"), _external(_mlp(), tmp_path / "b")
    for other in (first, copy):
        out = diff_models(first, other)
        assert out["changed"] == [] and out["summary"]["counts"]["unchanged"] == 4


def test_external_weights_of_another_shape_have_unknown_values(tmp_path):
    out = diff_models(_external(_mlp(), tmp_path / "a"), _external(_mlp(hidden=5), tmp_path / "b"))
    changed = {c["before"]["name"]: c["changes"] for c in out["changed"]}
    [init] = changed["fc1"]["initializers"]
    assert (init["values"], init["before"]["shape"], init["after"]["shape"]) == (
        "unknown", [3, 4], [3, 5])


# -- attributes compared by value ---------------------------------------------------------------
def test_one_changed_value_of_a_big_constant_is_a_change():
    """A 1000-float tensor attribute is displayed by its type ("float32 1000"): the change is
    found from the values, and the listing names the first differing item."""
    values = np.arange(1000, dtype=np.float32)
    edited = values.copy()
    edited[500] = -7
    [changed] = _diff(constant_add(values), constant_add(edited))["changed"]
    assert changed["before"]["name"] == "const"
    assert changed["changes"] == {"attributes": [{
        "name": "value", "before": "float32 1000 ([500] = 500.0)",
        "after": "float32 1000 ([500] = -7.0)"}]}
    # equal values under another tensor name are the same constant
    assert _diff(constant_add(values), constant_add(values, name="other"))["changed"] == []


def test_a_float_attribute_differing_past_six_digits_is_listed_exactly():
    """0.12345679 and 0.1234567 are distinct float32s both displayed 0.123457; 0.123456789
    and 0.12345679 are one float32."""
    values = np.zeros(4, np.float32)
    [changed] = _diff(constant_add(values, alpha=0.12345679),
                      constant_add(values, alpha=0.1234567))["changed"]
    assert changed["changes"] == {"attributes": [
        {"name": "alpha", "before": "0.12345679", "after": "0.1234567"}]}
    assert _diff(constant_add(values, alpha=0.123456789),
                 constant_add(values, alpha=0.12345679))["changed"] == []


def test_a_long_int_list_differing_past_its_shown_items_is_a_change():
    values = np.zeros(2, np.float32)
    ints = list(range(40))
    edited = ints[:30] + [99] + ints[31:]
    [changed] = _diff(constant_add(values, ints=ints), constant_add(values, ints=edited))["changed"]
    [attr] = changed["changes"]["attributes"]
    assert attr["name"] == "value_ints"
    assert attr["before"].endswith("([30] = 30)") and attr["after"].endswith("([30] = 99)")


# -- unrelated models ---------------------------------------------------------------------------
def test_models_sharing_only_input_and_output_names_are_unrelated():
    """An MLP and a CNN, both reading x and writing y through a last Gemm: the Gemms are the
    one pair (same op type); no op of another type is paired through x or y alone, and one
    of three ops is too little to call them related."""
    from .diff_models import cnn, mlp3

    for before, after in ((mlp3(), cnn()), (cnn(), mlp3())):
        out = _diff(before, after)
        assert [(c["before"]["op_type"], c["after"]["op_type"]) for c in out["changed"]] == [
            ("Gemm", "Gemm")]
        assert out["related"] is False
        assert out["message"].startswith("only 1 of ")
        assert "these look like unrelated models" in out["message"]
    assert "3 ops before and 7 after" in _diff(mlp3(), cnn())["message"]


def test_a_one_op_model_is_not_paired_through_the_graph_inputs_and_outputs():
    from .diff_models import cnn, one_custom_op

    out = _diff(one_custom_op(), cnn())
    counts = out["summary"]["counts"]
    assert (counts["matched_by_name"], counts["matched_by_structure"]) == (0, 0)
    assert (counts["removed"], counts["added"]) == (1, 7)
    assert out["related"] is False and "unrelated" in out["message"]


def test_a_replaced_last_op_next_to_the_graph_output_is_still_paired():
    """Renamed and retyped, between a matched op and the graph's output: its successor."""
    before = _mlp()
    after = _mlp()
    out_node = after.graph.node[-1]
    out_node.op_type, out_node.name = "Neg", "negate"
    out = _diff(before, after)
    [changed] = out["changed"]
    assert (changed["before"]["name"], changed["after"]["name"]) == ("out", "negate")
    assert changed["changes"]["op_type"] == {"before": "Identity", "after": "Neg"}
    assert out["related"] is True
