"""visualdl.framework: a compact eager deep-learning framework with reverse-mode autograd.

Ops run as Numba kernels on the CPU (``@njit``) or on NVIDIA GPUs (``@cuda.jit``), picked by
the tensor's device; matrix products use numpy's BLAS on the CPU. ::

    import visualdl.framework as vf
    x = vf.tensor([[1.0, 2.0]], requires_grad=True)
    y = (x * x).sum()
    y.backward()            # x.grad == 2 * x

Every op goes through ``dispatch.apply``; ``dispatch.add_observer`` lets a tracer see them.
"""

try:  # the framework extra; say which one, not just "No module named 'numba'"
    import numba  # noqa: F401 - the kernels
    import threadpoolctl  # noqa: F401 - vf.set_num_threads
except ModuleNotFoundError as _missing:
    if _missing.name not in ("numba", "threadpoolctl"):
        raise
    raise ModuleNotFoundError(
        f"visualdl.framework needs {_missing.name}, which is missing: "
        "pip install 'visualdl[framework]'", name=_missing.name) from _missing

from . import callbacks, jit, metric, nn, onnx, optim, profiler
from . import dataloader as data  # public name: vf.data.DataLoader
from .activation_stats import ActivationStats
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .creation import arange, full, ones, ones_like, rand, randint, randn, zeros, zeros_like
from .device import cuda_available
from .dtypes import bool_, float32, float64, int32, int64, uint8
from .hooks import RemovableHandle
from .memory import tune_host_allocator
from .training import Model
from . import distributed  # noqa: E402 - after Model: it wraps models and optimizers
from .ops.activation import log_softmax, softmax
from .ops.conv import conv2d
from .ops.elementwise import (
                              abs,
                              add,
                              cast,
                              div,
                              equal,
                              exp,
                              gelu,
                              leaky_relu,
                              log,
                              maximum,
                              minimum,
                              mul,
                              neg,
                              pow,
                              relu,
                              sigmoid,
                              sqrt,
                              sub,
                              tanh,
)
from .ops.linalg import linear, matmul
from .ops.reduction import argmax, max, mean, min, sum
from .ops.shape import (
                              concat,
                              expand,
                              flatten,
                              getitem,
                              permute,
                              reshape,
                              squeeze,
                              stack,
                              transpose,
                              unsqueeze,
)
from .random import seed
from .serialization import load, save
from .sparse import RowSparseGrad
from .tensor import Tensor, tensor
from .threads import _apply_environment_default, get_num_threads, set_num_threads

cat = concat
to_tensor = tensor
manual_seed = seed
is_compiled_with_cuda = cuda_available

_apply_environment_default()
tune_host_allocator()

__all__ = [
    "Tensor", "tensor", "to_tensor", "no_grad", "enable_grad", "is_grad_enabled",
    "set_grad_enabled", "nn", "optim", "data", "save", "load", "Model", "metric", "callbacks",
    "jit", "onnx", "profiler", "distributed", "ActivationStats", "RemovableHandle", "seed", "manual_seed",
    "set_num_threads", "get_num_threads", "cuda_available", "is_compiled_with_cuda",
    "zeros", "ones", "full", "zeros_like", "ones_like", "arange", "rand", "randn", "randint",
    "float32", "float64", "int32", "int64", "bool_", "uint8", "RowSparseGrad",
    "abs", "add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "tanh", "sigmoid",
    "relu", "leaky_relu", "gelu", "maximum", "minimum", "equal", "cast", "softmax",
    "log_softmax", "matmul", "linear", "conv2d", "sum", "mean", "max", "min", "argmax",
    "reshape", "flatten", "squeeze", "unsqueeze", "permute", "transpose", "expand", "getitem",
    "concat", "cat", "stack",
]
