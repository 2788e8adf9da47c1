"""Integer op codes shared by the CPU and CUDA kernels.

One generic kernel per family (unary, binary, compare, reduce) switches on these codes, so a
whole family costs one Numba compile per dtype instead of one per op; that keeps the cold
start short and the on-disk cache small. Plain ints so that Numba freezes them as constants.
"""

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

UNARY = {
    "neg": NEG, "exp": EXP, "log": LOG, "sqrt": SQRT, "tanh": TANH, "sigmoid": SIGMOID,
    "relu": RELU, "leaky_relu": LEAKY_RELU, "gelu": GELU, "pow_scalar": POW_SCALAR,
    "abs": ABS, "scale": SCALE, "add_scalar": ADD_SCALAR,
}
BINARY = {"add": ADD, "sub": SUB, "mul": MUL, "div": DIV, "pow": POW,
          "maximum": MAXIMUM, "minimum": MINIMUM}
COMPARE = {"eq": EQ, "ne": NE, "lt": LT, "le": LE, "gt": GT, "ge": GE}
REDUCE = {"sum": R_SUM, "max": R_MAX, "min": R_MIN, "sumsq": R_SUMSQ}
