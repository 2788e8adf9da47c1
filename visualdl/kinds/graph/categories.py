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
        # Keras layers (the conceptual graph) and TensorFlow ops
        "Dense", "EinsumDense", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose",
        "Conv2DTranspose", "Conv3DTranspose", "DepthwiseConv2D", "SeparableConv2D",
        "Embedding", "SimpleRNN", "Bidirectional", "BatchMatMulV2", "BatchMatMulV3",
        "Conv2DBackpropInput", "CudnnRNNV3",
    ),
    "activation": (
        "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "Tanh", "Elu", "Selu", "Celu",
        "Gelu", "FastGelu", "Softplus", "Softsign", "HardSwish", "Mish", "ThresholdedRelu",
        "Softmax", "LogSoftmax", "Hardmax", "Clip", "Swish", "QuickGelu",
        "ReLU", "LeakyReLU", "Activation", "Relu6",
    ),
    "pool": (
        "MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool", "LpPool",
        "GlobalLpPool", "MaxRoiPool", "RoiAlign", "MaxUnpool",
        "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
        "AveragePooling3D", "GlobalAveragePooling1D", "GlobalAveragePooling2D",
        "GlobalMaxPooling1D", "GlobalMaxPooling2D", "AvgPool",
    ),
    "normalization": (
        "BatchNormalization", "LayerNormalization", "InstanceNormalization",
        "GroupNormalization", "LpNormalization", "LRN", "MeanVarianceNormalization",
        "SimplifiedLayerNormalization", "SkipLayerNormalization", "RMSNormalization", "Dropout",
        "FusedBatchNormV3", "SpatialDropout1D", "SpatialDropout2D", "GaussianNoise",
    ),
    "shape": (
        "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split", "Slice",
        "Gather", "GatherElements", "GatherND", "Scatter", "ScatterElements", "ScatterND",
        "Expand", "Tile", "Pad", "Shape", "Size", "Resize", "Upsample", "DepthToSpace",
        "SpaceToDepth", "Identity", "Cast", "CastLike", "ConstantOfShape", "Range", "Compress",
        "NonZero", "OneHot", "Trilu",
        "Concatenate", "ConcatV2", "Permute", "RepeatVector", "Cropping2D", "ZeroPadding2D",
        "UpSampling2D", "StridedSlice", "GatherV2",
    ),
    "control": ("If", "Loop", "Scan", "SequenceMap", "While", "StatelessWhile", "StatelessIf",
                "PartitionedCall", "StatefulPartitionedCall", "Switch", "Merge"),
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
