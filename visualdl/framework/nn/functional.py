"""Functional forms of the layers and ops (``vf.nn.functional``, usually imported as F)."""

from ..ops.activation import log_softmax, softmax
from ..ops.conv import avg_pool2d, conv2d, max_pool2d
from ..ops.dropout import dropout
from ..ops.elementwise import gelu, leaky_relu, relu, sigmoid, tanh
from ..ops.embedding import embedding
from ..ops.linalg import linear
from ..ops.loss import cross_entropy, mse_loss
from ..ops.norm import batch_norm, layer_norm
from ..ops.shape import flatten

__all__ = ["log_softmax", "softmax", "avg_pool2d", "conv2d", "max_pool2d", "gelu", "leaky_relu",
           "relu", "sigmoid", "tanh", "linear", "cross_entropy", "mse_loss", "batch_norm",
           "layer_norm", "flatten", "dropout", "embedding"]
