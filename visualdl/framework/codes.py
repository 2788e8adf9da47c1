"""Integer op codes shared by the CPU and CUDA kernels.

One generic kernel per family (unary, binary, compare, reduce) switches on these codes, so a
whole family costs one Numba compile per dtype instead of one per op; that keeps the cold
start short and the on-disk cache small. Plain ints so that Numba freezes them as constants.
"""

from __future__ import annotations

from typing import NamedTuple

# unary: y = f(x; alpha)
NEG = 0
EXP = 1
LOG = 2
SQRT = 3
TANH = 4
SIGMOID = 5
RELU = 6
LEAKY_RELU = 7
GELU = 8
POW_SCALAR = 9
ABS = 10
SCALE = 11
ADD_SCALAR = 12

# binary (broadcasting): y = f(a, b)
ADD = 0
SUB = 1
MUL = 2
DIV = 3
POW = 4
MAXIMUM = 5
MINIMUM = 6

# comparisons (broadcasting, bool result)
EQ = 0
NE = 1
LT = 2
LE = 3
GT = 4
GE = 5

# reductions over one contiguous run of axes
R_SUM = 0
R_MAX = 1
R_MIN = 2
R_SUMSQ = 3



class OpName(NamedTuple):
    """An op-table entry: the kernel code, and the ONNX op type when one ONNX node of that type
    computes the op (None where the exporter writes something else: an attribute, a constant,
    several nodes). The tables below feed the ops (codes), the ONNX exporter (framework op ->
    ONNX type) and the ONNX interpreter (ONNX type -> framework op)."""

    code: int
    onnx: str | None


UNARY_OPS = {
    "neg": OpName(NEG, "Neg"), "exp": OpName(EXP, "Exp"), "log": OpName(LOG, "Log"),
    "sqrt": OpName(SQRT, "Sqrt"), "tanh": OpName(TANH, "Tanh"),
    "sigmoid": OpName(SIGMOID, "Sigmoid"), "relu": OpName(RELU, "Relu"),
    "leaky_relu": OpName(LEAKY_RELU, None), "gelu": OpName(GELU, None),
    "pow_scalar": OpName(POW_SCALAR, None), "abs": OpName(ABS, "Abs"),
    "scale": OpName(SCALE, None), "add_scalar": OpName(ADD_SCALAR, None),
}
BINARY_OPS = {
    "add": OpName(ADD, "Add"), "sub": OpName(SUB, "Sub"), "mul": OpName(MUL, "Mul"),
    "div": OpName(DIV, "Div"), "pow": OpName(POW, "Pow"), "maximum": OpName(MAXIMUM, "Max"),
    "minimum": OpName(MINIMUM, "Min"),
}
COMPARE_OPS = {
    "eq": OpName(EQ, "Equal"), "ne": OpName(NE, None), "lt": OpName(LT, "Less"),
    "le": OpName(LE, "LessOrEqual"), "gt": OpName(GT, "Greater"),
    "ge": OpName(GE, "GreaterOrEqual"),
}

UNARY = {name: op.code for name, op in UNARY_OPS.items()}
COMPARE = {name: op.code for name, op in COMPARE_OPS.items()}


def onnx_types(table: dict[str, OpName]) -> dict[str, str]:
    """framework op name -> ONNX op type, for the ops of ``table`` that are one ONNX node."""
    return {name: op.onnx for name, op in table.items() if op.onnx is not None}
