"""Unary, unary-gradient, binary and comparison bodies, switching on ``codes``."""

import math

from ..codes import (
    ABS,
    ADD,
    DIV,
    EQ,
    EXP,
    GELU,
    GT,
    LE,
    LEAKY_RELU,
    LOG,
    LT,
    MAXIMUM,
    MUL,
    NE,
    NEG,
    POW,
    POW_SCALAR,
    RELU,
    SCALE,
    SIGMOID,
    SQRT,
    SUB,
    TANH,
)

INV_SQRT2 = 0.7071067811865476
INV_SQRT_2PI = 0.3989422804014327


def unary(code, v, alpha):
    """y = f(v; alpha)."""
    if code == NEG:
        return -v
    if code == EXP:
        return math.exp(v)
    if code == LOG:
        return math.log(v)
    if code == SQRT:
        return math.sqrt(v)
    if code == TANH:
        return math.tanh(v)
    if code == SIGMOID:  # stable for large |v|
        if v >= 0:
            return 1.0 / (1.0 + math.exp(-v))
        e = math.exp(v)
        return e / (1.0 + e)
    if code == RELU:
        return v if v > 0 else 0
    if code == LEAKY_RELU:
        return v if v > 0 else v * alpha
    if code == GELU:
        return 0.5 * v * (1.0 + math.erf(v * INV_SQRT2))
    if code == POW_SCALAR:
        return v ** alpha
    if code == ABS:
        return abs(v)
    if code == SCALE:
        return v * alpha
    return v + alpha  # ADD_SCALAR


def unary_grad(code, x, y, g, alpha):
    """g * f'(x), from the saved input x or output y (whichever the op saved)."""
    if code == NEG:
        return -g
    if code == EXP:
        return g * y
    if code == LOG:
        return g / x
    if code == SQRT:
        return g * 0.5 / y
    if code == TANH:
        return g * (1 - y * y)
    if code == SIGMOID:
        return g * y * (1 - y)
    if code == RELU:
        return g if y > 0 else 0
    if code == LEAKY_RELU:
        return g if x > 0 else g * alpha
    if code == GELU:
        cdf = 0.5 * (1.0 + math.erf(x * INV_SQRT2))
        pdf = INV_SQRT_2PI * math.exp(-0.5 * x * x)
        return g * (cdf + x * pdf)
    if code == POW_SCALAR:
        return g * alpha * x ** (alpha - 1)
    if code == ABS:
        return g if x > 0 else (-g if x < 0 else 0)
    if code == SCALE:
        return g * alpha
    return g  # ADD_SCALAR


def binary(code, a, b):
    if code == ADD:
        return a + b
    if code == SUB:
        return a - b
    if code == MUL:
        return a * b
    if code == DIV:
        return a / b
    if code == POW:
        return a ** b
    if code == MAXIMUM:
        return a if a >= b else b
    return a if a <= b else b  # MINIMUM


def compare(code, a, b):
    if code == EQ:
        return a == b
    if code == NE:
        return a != b
    if code == LT:
        return a < b
    if code == LE:
        return a <= b
    if code == GT:
        return a > b
    return a >= b  # GE
