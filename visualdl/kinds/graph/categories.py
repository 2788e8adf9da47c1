"""Op type -> display category, so the browser can color nodes the way Netron users expect.

The category is decided here, once, so the SVG export and the legend agree with the view.
"""

from __future__ import annotations

__all__ = ["CATEGORIES", "category_of"]

_GROUPS: dict[str, tuple[str, ...]] = {
    "layer": (
        "Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "Gemm", "MatMul", "MatMulInteger",
        "QLinearMatMul", "Einsum", "LSTM", "GRU", "RNN", "Attention", "MultiHeadAttention",
        "DeformConv",
    ),
    "activation": (
        "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "Tanh", "Elu", "Selu", "Celu",
        "Gelu", "FastGelu", "Softplus", "Softsign", "HardSwish", "Mish", "ThresholdedRelu",
        "Softmax", "LogSoftmax", "Hardmax", "Clip", "Swish", "QuickGelu",
    ),
    "pool": (
        "MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool", "LpPool",
        "GlobalLpPool", "MaxRoiPool", "RoiAlign", "MaxUnpool",
    ),
    "normalization": (
        "BatchNormalization", "LayerNormalization", "InstanceNormalization",
        "GroupNormalization", "LpNormalization", "LRN", "MeanVarianceNormalization",
        "SimplifiedLayerNormalization", "SkipLayerNormalization", "RMSNormalization", "Dropout",
    ),
    "shape": (
        "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split", "Slice",
        "Gather", "GatherElements", "GatherND", "Scatter", "ScatterElements", "ScatterND",
        "Expand", "Tile", "Pad", "Shape", "Size", "Resize", "Upsample", "DepthToSpace",
        "SpaceToDepth", "Identity", "Cast", "CastLike", "ConstantOfShape", "Range", "Compress",
        "NonZero", "OneHot", "Trilu",
    ),
    "control": ("If", "Loop", "Scan", "SequenceMap"),
    "constant": ("Constant",),
    "quantization": (
        "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "DynamicQuantizeMatMul",
    ),
}

_LOOKUP = {op: cat for cat, ops in _GROUPS.items() for op in ops}

#: Every category the browser may see (for its legend); "math" is the default for ops.
CATEGORIES = tuple(_GROUPS) + ("math", "input", "output", "group")


def category_of(op_type: str, role: str = "op") -> str:
    """The display category of a node: ``input``/``output`` pseudo-nodes keep their role."""
    if role != "op":
        return role
    return _LOOKUP.get(op_type, "math")
