"""The standard layers. Weights use PyTorch's layouts and default initialisation
(Linear (out, in), Conv2D (out, in/groups, kh, kw)); names follow PaddlePaddle
(Conv2D, BatchNorm2D, MaxPool2D)."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import creation, shapes
from ..ops import activation as _act
from ..ops import conv as _conv
from ..ops import dropout as _dropout
from ..ops import elementwise as _ew
from ..ops import embedding as _embedding
from ..ops import linalg as _linalg
from ..ops import norm as _norm
from ..ops import shape as _shape
from ..tensor import Tensor
from . import init
from .layer import Layer
from .parameter import Parameter


def _param(shape: Sequence[int]) -> Parameter:
    return Parameter(np.zeros(tuple(shape), np.float32))


class Linear(Layer):
    """y = x @ weight.T + bias; weight (out_features, in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.weight = init.kaiming_uniform_(_param((out_features, in_features)))
        bound = 1.0 / math.sqrt(in_features)
        self.bias = init.uniform_(_param((out_features,)), -bound, bound) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return _linalg.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}"


class Conv2D(Layer):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | Sequence[int],
                 stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                 dilation: int | Sequence[int] = 1, groups: int = 1, bias: bool = True) -> None:
        super().__init__()
        if in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        kh, kw = shapes.pair(kernel_size)
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size = (kh, kw)
        self.stride, self.padding = shapes.pair(stride), shapes.pair(padding)
        self.dilation, self.groups = shapes.pair(dilation), int(groups)
        self.weight = init.kaiming_uniform_(_param((out_channels, in_channels // groups, kh, kw)))
        fan_in = in_channels // groups * kh * kw
        bound = 1.0 / math.sqrt(fan_in)
        self.bias = init.uniform_(_param((out_channels,)), -bound, bound) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return _conv.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                            self.groups)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}")


class MaxPool2D(Layer):
    def __init__(self, kernel_size: int | Sequence[int], stride: Any = None, padding: Any = 0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x: Tensor) -> Tensor:
        return _conv.max_pool2d(x, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2D(Layer):
    def __init__(self, kernel_size: int | Sequence[int], stride: Any = None, padding: Any = 0,
                 count_include_pad: bool = True):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.count_include_pad = count_include_pad

    def forward(self, x: Tensor) -> Tensor:
        return _conv.avg_pool2d(x, self.kernel_size, self.stride, self.padding,
                                self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _BatchNorm(Layer):
    _ndims: tuple[int, ...] = ()

    def __init__(self, num_features: int, momentum: float = 0.1, epsilon: float = 1e-5,
                 affine: bool = True, track_running_stats: bool = True) -> None:
        super().__init__()
        self.num_features, self.momentum, self.epsilon = int(num_features), momentum, epsilon
        self.weight = init.ones_(_param((num_features,))) if affine else None
        self.bias = _param((num_features,)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", creation.zeros((num_features,)))
            self.register_buffer("running_var", creation.ones((num_features,)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in self._ndims:
            raise ValueError(f"{type(self).__name__} expects {self._ndims}-d input, got {x.shape}")
        training = self.training or self.running_mean is None
        return _norm.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                                training, self.momentum, self.epsilon)

    def extra_repr(self) -> str:
        return f"{self.num_features}, momentum={self.momentum}, epsilon={self.epsilon}"


class BatchNorm1D(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L)."""

    _ndims = (2, 3)


class BatchNorm2D(_BatchNorm):
    """Batch norm over (N, C, H, W)."""

    _ndims = (4,)


class LayerNorm(Layer):
    def __init__(self, normalized_shape: int | Sequence[int], epsilon: float = 1e-5,
                 elementwise_affine: bool = True) -> None:
        super().__init__()
        ns = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) \
            else tuple(normalized_shape)
        self.normalized_shape, self.epsilon = ns, epsilon
        self.weight = init.ones_(_param(ns)) if elementwise_affine else None
        self.bias = _param(ns) if elementwise_affine else None

    def forward(self, x: Tensor) -> Tensor:
        return _norm.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.epsilon)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, epsilon={self.epsilon}"


class Dropout(Layer):
    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return _dropout.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Embedding(Layer):
    """Lookup table; its weight gradient is row-sparse (only the rows looked up)."""

    def __init__(self, num_embeddings: int, embedding_dim: int,
                 padding_idx: int | None = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.padding_idx = None if padding_idx is None else int(padding_idx) % num_embeddings
        weight = init.normal_(_param((num_embeddings, embedding_dim)))
        if self.padding_idx is not None:
            host = weight.numpy().copy()
            host[self.padding_idx] = 0
            weight = Parameter(host)
        self.weight = weight

    def forward(self, x: Tensor) -> Tensor:
        return _embedding.embedding(x, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class ReLU(Layer):
    def forward(self, x: Tensor) -> Tensor:
        return _ew.relu(x)


class GELU(Layer):
    def forward(self, x: Tensor) -> Tensor:
        return _ew.gelu(x)


class Tanh(Layer):
    def forward(self, x: Tensor) -> Tensor:
        return _ew.tanh(x)


class Sigmoid(Layer):
    def forward(self, x: Tensor) -> Tensor:
        return _ew.sigmoid(x)


class LeakyReLU(Layer):
    def __init__(self, negative_slope: float = 0.01) -> None:
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: Tensor) -> Tensor:
        return _ew.leaky_relu(x, self.negative_slope)


class Softmax(Layer):
    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = axis

    def forward(self, x: Tensor) -> Tensor:
        return _act.softmax(x, self.axis)


class Flatten(Layer):
    """Merge axes start_axis..stop_axis (default: everything but the batch axis)."""

    def __init__(self, start_axis: int = 1, stop_axis: int = -1) -> None:
        super().__init__()
        self.start_axis, self.stop_axis = start_axis, stop_axis

    def forward(self, x: Tensor) -> Tensor:
        return _shape.flatten(x, self.start_axis, self.stop_axis)


class Identity(Layer):
    def forward(self, x: Tensor) -> Tensor:
        return x
