"""Layers (``vf.nn``) and their functional forms (``vf.nn.functional``)."""

from . import functional, init
from .containers import LayerList, Sequential
from .layer import Layer
from .loss import CrossEntropyLoss, MSELoss
from .layers import (
                     GELU,
                     AvgPool2D,
                     BatchNorm1D,
                     BatchNorm2D,
                     Conv2D,
                     Dropout,
                     Embedding,
                     Flatten,
                     Identity,
                     LayerNorm,
                     LeakyReLU,
                     Linear,
                     MaxPool2D,
                     ReLU,
                     Sigmoid,
                     Softmax,
                     Tanh,
)
from .parameter import Parameter

__all__ = ["functional", "init", "Layer", "Parameter", "Sequential", "LayerList", "Linear",
           "Conv2D", "MaxPool2D", "AvgPool2D", "BatchNorm1D", "BatchNorm2D", "LayerNorm",
           "Dropout", "Embedding", "ReLU", "GELU", "Tanh", "Sigmoid", "LeakyReLU", "Softmax",
           "Flatten", "Identity", "CrossEntropyLoss", "MSELoss"]
