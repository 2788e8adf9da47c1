"""Floating-point operations of one ONNX node, estimated from its tensors' shapes.

Why a table of formulas and not a guess: a value is given only where the op type has a
formula here *and* every shape the formula reads is known after shape inference. A multiply
and an add count as two operations (a multiply-add is 2), as the usual "FLOPs" tables of
model zoos count them. Symbolic dimensions (``batch``) are taken as 1 and named by the
caller, so the numbers read "per unit of each symbol"; a dimension shape inference could
not name at all ("?") gives no value.

Formulas, with ``out`` the element count of the (first) output and ``in`` of the first input:

=====================================================  ==========================================
op types                                               FLOPs
=====================================================  ==========================================
MatMul, MatMulInteger                                  2 * out * K (K: A's last axis)
Gemm                                                   2 * M * N * K, + M * N with a bias C
Conv, ConvInteger                                      2 * out * (C_in / group) * prod(kernel),
                                                       + out with a bias
ConvTranspose                                          2 * in * (C_out / group) * prod(kernel),
                                                       + out with a bias
Einsum                                                 no value (its contraction is not read)
element-wise (Add, Sub, Mul, Div, Relu, Sigmoid, ...)  out (one per output element)
Softmax, LogSoftmax                                    5 * out (max, subtract, exp, sum, divide)
BatchNormalization                                     2 * out (a multiply-add per element with
                                                       the statistics known: inference)
LayerNormalization, InstanceNormalization,             7 * out (mean, subtract, square, sum,
GroupNormalization, RMS-style SimplifiedLayerNorm      divide; scale, shift)
MaxPool, AveragePool, LpPool                           out * prod(kernel_shape)
GlobalAveragePool, GlobalMaxPool, GlobalLpPool,        in (each input element read once)
Reduce* (ReduceMean, ReduceSum, ...)
data movement (Reshape, Transpose, Concat, Gather,     0
Shape, Slice, ...), Constant, Identity
anything else                                          no value
=====================================================  ==========================================
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from visualdl.kinds.graph.parsed_model import GraphModel, Node

__all__ = ["ELEMENTWISE", "MOVEMENT", "Shapes", "node_flops"]

ELEMENTWISE = frozenset({
    "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Reciprocal", "Exp", "Log", "Abs", "Neg",
    "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "Tanh", "Elu", "Selu", "Celu",
    "Gelu", "FastGelu", "QuickGelu", "Softplus", "Softsign", "HardSwish", "Mish", "Erf",
    "Clip", "Max", "Min", "Mean", "Sum", "Where", "Sin", "Cos", "Floor", "Ceil", "Round",
    "Sign", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor",
    "Not", "Mod", "BitShift", "ThresholdedRelu", "Swish", "Dropout",
})
MOVEMENT = frozenset({
    "Reshape", "Transpose", "Concat", "Split", "Gather", "GatherElements", "GatherND",
    "Scatter", "ScatterElements", "ScatterND", "Shape", "Size", "Slice", "Squeeze",
    "Unsqueeze", "Flatten", "Expand", "Tile", "Pad", "Identity", "Constant",
    "ConstantOfShape", "Cast", "CastLike", "DepthToSpace", "SpaceToDepth", "Range",
    "NonZero", "OneHot", "Trilu",
})
NORMS = frozenset({"LayerNormalization", "InstanceNormalization", "GroupNormalization",
                   "SimplifiedLayerNormalization", "RMSNormalization"})
POOLS = frozenset({"MaxPool", "AveragePool", "LpPool"})
WHOLE_INPUT = frozenset({"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "ReduceMean",
                         "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                         "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})

#: ``shape(name)`` -> the tensor's dims as ints (symbols as 1), or None when not known.
Shapes = Callable[[str], "list[int] | None"]


def node_flops(model: GraphModel, node: Node, symbols: set[str]) -> float | None:
    """The node's FLOPs by the table above, or None (no formula, or a shape not known).
    Symbolic dimension names met are added to ``symbols``."""
    if node.role != "op":
        return None

    def shape(name: str) -> list[int] | None:
        if not name:
            return None
        info = model.tensor(node.scope, name)
        if info is None or info.shape is None:
            return None
        dims = []
        for d in info.shape:
            if isinstance(d, int):
                if d < 0:
                    return None
                dims.append(d)
            elif d == "?" or not d:
                return None
            else:
                symbols.add(str(d))
                dims.append(1)
        return dims

    op = node.op_type
    if op in MOVEMENT:
        return 0.0
    out = shape(node.outputs[0]) if node.outputs else None
    if op in ELEMENTWISE:
        return _count(out)
    if op in ("Softmax", "LogSoftmax"):
        return _times(5, _count(out))
    if op == "BatchNormalization":
        return _times(2, _count(out))
    if op in NORMS:
        return _times(7, _count(out))
    if op in WHOLE_INPUT:
        return _count(shape(node.inputs[0]) if node.inputs else None)
    formula = _FORMULAS.get(op)
    return formula(node, shape, out) if formula is not None else None


def _count(dims: Sequence[int] | None) -> float | None:
    return None if dims is None else float(math.prod(dims))


def _times(k: float, value: float | None) -> float | None:
    return None if value is None else k * value


def _attr(node: Node, name: str, default: str | None = None) -> str | None:
    for key, _, value in node.attributes:
        if key == name:
            return value
    return default


def _ints(text: str | None) -> list[int] | None:
    """An INTS attribute as the parser shows it (``[3, 3]``)."""
    if text is None:
        return None
    try:
        return [int(p) for p in text.strip("[]() ").replace(" ", "").split(",") if p]
    except ValueError:
        return None


def _input(node: Node, i: int) -> str:
    return node.inputs[i] if len(node.inputs) > i else ""


def _matmul(node: Node, shape: Shapes, out: list[int] | None) -> float | None:
    a = shape(_input(node, 0))
    if a is None or out is None or not a:
        return None
    return 2.0 * math.prod(out) * a[-1]


def _gemm(node: Node, shape: Shapes, out: list[int] | None) -> float | None:
    a = shape(_input(node, 0))
    if a is None or out is None or len(a) != 2 or len(out) != 2:
        return None
    k = a[0] if _attr(node, "transA", "0") == "1" else a[1]
    flops = 2.0 * out[0] * out[1] * k
    if _input(node, 2):
        flops += out[0] * out[1]
    return flops


def _conv(node: Node, shape: Shapes, out: list[int] | None) -> float | None:
    w = shape(_input(node, 1))
    if w is None or out is None or len(w) < 3:
        return None
    per_output = w[1] * math.prod(w[2:])  # (C_in / group) * kernel
    flops = 2.0 * math.prod(out) * per_output
    if _input(node, 2):
        flops += math.prod(out)
    return flops


def _conv_transpose(node: Node, shape: Shapes, out: list[int] | None) -> float | None:
    x, w = shape(_input(node, 0)), shape(_input(node, 1))
    if x is None or w is None or out is None or len(w) < 3:
        return None
    flops = 2.0 * math.prod(x) * w[1] * math.prod(w[2:])  # each input spreads (C_out/g)*k
    if _input(node, 2):
        flops += math.prod(out)
    return flops


def _pool(node: Node, shape: Shapes, out: list[int] | None) -> float | None:
    kernel = _ints(_attr(node, "kernel_shape"))
    if kernel is None or out is None:
        return None
    return float(math.prod(out) * math.prod(kernel))


_FORMULAS: dict[str, Callable[[Node, Shapes, "list[int] | None"], "float | None"]] = {
    "MatMul": _matmul, "MatMulInteger": _matmul, "Gemm": _gemm,
    "Conv": _conv, "ConvInteger": _conv, "ConvTranspose": _conv_transpose,
    **{op: _pool for op in POOLS},
}
