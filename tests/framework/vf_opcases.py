"""Op test cases shared by the CPU suite and the CUDA-simulator suite.

Each case: an id, a framework function, the PyTorch equivalent (or None), and input makers.
Float inputs are differentiated; integer inputs (labels, indices) are passed through. Shapes
are tiny so finite differences and the CUDA simulator (~250 us per thread) stay fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import visualdl.framework as vf
import visualdl.framework.nn.functional as F

try:
    import torch
    import torch.nn.functional as TF

    torch.set_num_threads(1)
except ImportError:  # torch is an optional test extra
    torch = None
    TF = None


@dataclass
class Case:
    id: str
    fn: Callable[..., Any]
    torch_fn: Callable[..., Any] | None
    inputs: list[Callable[[np.random.Generator], np.ndarray]]
    grad: bool = True
    tags: set = field(default_factory=set)


def normal(*shape):
    return lambda r: r.standard_normal(shape)


def positive(*shape, low=0.5, high=2.0):
    return lambda r: r.uniform(low, high, shape)


def away_from_zero(*shape):
    """Values with |v| >= 0.1 so kinks (relu, abs) are not within a finite-difference step."""
    return lambda r: r.choice([-1.0, 1.0], shape) * r.uniform(0.1, 2.0, shape)


def distinct(*shape):
    """Distinct values (no ties for max/min/max-pool)."""
    return lambda r: r.permutation(int(np.prod(shape))).reshape(shape) * 0.1 + r.uniform(0, 0.01, shape)


def labels(n, c, ignore=None):
    def make(r):
        lab = r.integers(0, c, n).astype(np.int64)
        if ignore is not None:
            lab[0] = ignore
        return lab
    return make


def ints(high, *shape):
    return lambda r: r.integers(0, high, shape).astype(np.int64)


def mask(*shape):
    return lambda r: r.random(shape) > 0.4


def T(fn):
    """Wrap a torch expression so the case table stays readable when torch is missing."""
    return fn if torch is not None else None


CASES: list[Case] = [
    # elementwise binary, with broadcasting
    Case("add", lambda a, b: a + b, T(lambda a, b: a + b), [normal(2, 3, 4), normal(3, 1)]),
    Case("sub", lambda a, b: a - b, T(lambda a, b: a - b), [normal(4), normal(2, 3, 4)]),
    Case("mul", lambda a, b: a * b, T(lambda a, b: a * b), [normal(2, 1, 4), normal(1, 3, 1)]),
    Case("div", lambda a, b: a / b, T(lambda a, b: a / b), [normal(2, 3), away_from_zero(2, 3)]),
    Case("pow", lambda a, b: a ** b, T(lambda a, b: a ** b), [positive(2, 3), normal(3)]),
    Case("pow_scalar", lambda a: a ** 3, T(lambda a: a ** 3), [normal(2, 3)]),
    Case("rsub_scalar", lambda a: 2.0 - a * 3.0, T(lambda a: 2.0 - a * 3.0), [normal(5)]),
    Case("maximum", vf.maximum, T(torch.maximum) if torch else None, [distinct(2, 3), distinct(3)]),
    Case("minimum", vf.minimum, T(torch.minimum) if torch else None, [distinct(2, 3), distinct(2, 3)]),
    # elementwise unary and activations
    Case("neg", lambda a: -a, T(lambda a: -a), [normal(3, 4)]),
    Case("exp", vf.exp, T(lambda a: a.exp()), [normal(3, 4)]),
    Case("log", vf.log, T(lambda a: a.log()), [positive(3, 4)]),
    Case("sqrt", vf.sqrt, T(lambda a: a.sqrt()), [positive(3, 4)]),
    Case("tanh", vf.tanh, T(lambda a: a.tanh()), [normal(3, 4)]),
    Case("sigmoid", vf.sigmoid, T(lambda a: a.sigmoid()), [lambda r: r.standard_normal((3, 4)) * 5]),
    Case("relu", F.relu, T(lambda a: TF.relu(a)), [away_from_zero(3, 4)]),
    Case("leaky_relu", lambda a: F.leaky_relu(a, 0.2), T(lambda a: TF.leaky_relu(a, 0.2)),
         [away_from_zero(3, 4)]),
    Case("gelu", F.gelu, T(lambda a: TF.gelu(a)), [normal(3, 4)]),
    Case("abs", vf.abs, T(lambda a: a.abs()), [away_from_zero(3, 4)]),
    # softmax family and losses
    Case("softmax_last", lambda a: F.softmax(a, -1), T(lambda a: torch.softmax(a, -1)), [normal(3, 5)]),
    Case("softmax_mid", lambda a: F.softmax(a, 1), T(lambda a: torch.softmax(a, 1)), [normal(2, 3, 4)]),
    Case("log_softmax", lambda a: F.log_softmax(a, -1), T(lambda a: torch.log_softmax(a, -1)),
         [normal(4, 5)]),
    Case("log_softmax_axis0", lambda a: F.log_softmax(a, 0), T(lambda a: torch.log_softmax(a, 0)),
         [normal(4, 3)]),
    Case("cross_entropy_mean", lambda x, y: F.cross_entropy(x, y),
         T(lambda x, y: TF.cross_entropy(x, y)), [normal(5, 4), labels(5, 4)]),
    Case("cross_entropy_sum", lambda x, y: F.cross_entropy(x, y, reduction="sum"),
         T(lambda x, y: TF.cross_entropy(x, y, reduction="sum")), [normal(5, 4), labels(5, 4)]),
    Case("cross_entropy_none", lambda x, y: F.cross_entropy(x, y, reduction="none"),
         T(lambda x, y: TF.cross_entropy(x, y, reduction="none")), [normal(5, 4), labels(5, 4)]),
    Case("cross_entropy_ignore", lambda x, y: F.cross_entropy(x, y, ignore_index=2),
         T(lambda x, y: TF.cross_entropy(x, y, ignore_index=2)), [normal(6, 4), labels(6, 4, ignore=2)]),
    # PyTorch's default ignore_index (-100) marks padding: those rows leave the mean's count
    Case("cross_entropy_ignore_default", lambda x, y: F.cross_entropy(x, y),
         T(lambda x, y: TF.cross_entropy(x, y)), [normal(6, 4), labels(6, 4, ignore=-100)]),
    Case("mse_loss", F.mse_loss, T(lambda a, b: TF.mse_loss(a, b)), [normal(3, 4), normal(3, 4)]),
    Case("mse_loss_sum", lambda a, b: F.mse_loss(a, b, reduction="sum"),
         T(lambda a, b: TF.mse_loss(a, b, reduction="sum")), [normal(3, 4), normal(3, 4)]),
    # matrix products
    Case("matmul_2d", vf.matmul, T(torch.matmul) if torch else None, [normal(3, 4), normal(4, 5)]),
    Case("matmul_batched", vf.matmul, T(torch.matmul) if torch else None,
         [normal(2, 3, 4), normal(2, 4, 5)]),
    Case("matmul_broadcast", vf.matmul, T(torch.matmul) if torch else None,
         [normal(2, 1, 3, 4), normal(3, 4, 2)]),
    Case("matmul_vec", vf.matmul, T(torch.matmul) if torch else None, [normal(3, 4), normal(4)]),
    Case("linear", F.linear, T(TF.linear) if torch else None, [normal(2, 3, 4), normal(5, 4), normal(5)]),
    Case("linear_nobias", F.linear, T(TF.linear) if torch else None, [normal(3, 4), normal(2, 4)]),
    # convolution and pooling
    Case("conv2d", lambda x, w, b: F.conv2d(x, w, b), T(lambda x, w, b: TF.conv2d(x, w, b)),
         [normal(2, 2, 5, 5), normal(3, 2, 3, 3), normal(3)]),
    Case("conv2d_stride_pad", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
         T(lambda x, w, b: TF.conv2d(x, w, b, stride=2, padding=1)),
         [normal(2, 2, 5, 6), normal(3, 2, 3, 2), normal(3)]),
    Case("conv2d_dilation", lambda x, w: F.conv2d(x, w, None, padding=(1, 2), dilation=2),
         T(lambda x, w: TF.conv2d(x, w, None, padding=(1, 2), dilation=2)),
         [normal(1, 2, 6, 6), normal(2, 2, 2, 3)]),
    Case("conv2d_groups", lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=2),
         T(lambda x, w, b: TF.conv2d(x, w, b, padding=1, groups=2)),
         [normal(2, 4, 4, 4), normal(6, 2, 3, 3), normal(6)]),
    Case("max_pool2d", lambda x: F.max_pool2d(x, 2), T(lambda x: TF.max_pool2d(x, 2)),
         [distinct(2, 2, 4, 4)]),
    Case("max_pool2d_overlap", lambda x: F.max_pool2d(x, 3, 1, 1), T(lambda x: TF.max_pool2d(x, 3, 1, 1)),
         [distinct(1, 2, 4, 5)]),
    Case("avg_pool2d", lambda x: F.avg_pool2d(x, 2), T(lambda x: TF.avg_pool2d(x, 2)), [normal(2, 2, 4, 4)]),
    Case("avg_pool2d_pad", lambda x: F.avg_pool2d(x, 3, 2, 1), T(lambda x: TF.avg_pool2d(x, 3, 2, 1)),
         [normal(1, 2, 5, 5)]),
    Case("avg_pool2d_exclusive", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
         T(lambda x: TF.avg_pool2d(x, 3, 2, 1, count_include_pad=False)), [normal(1, 2, 5, 5)]),
    # normalisation
    Case("batch_norm_train_2d", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
         T(lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True)),
         [normal(3, 2, 3, 3), normal(2), normal(2)]),
    Case("batch_norm_train_1d", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
         T(lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True)),
         [normal(6, 3), normal(3), normal(3)]),
    Case("batch_norm_eval", lambda x, w, b, m, v: F.batch_norm(x, m.detach(), v.detach(), w, b),
         T(lambda x, w, b, m, v: TF.batch_norm(x, m.detach(), v.detach(), w, b)),
         [normal(3, 2, 2, 2), normal(2), normal(2), normal(2), positive(2)], tags={"nograd4"}),
    Case("layer_norm", lambda x, w, b: F.layer_norm(x, 4, w, b),
         T(lambda x, w, b: TF.layer_norm(x, (4,), w, b)), [normal(2, 3, 4), normal(4), normal(4)]),
    Case("layer_norm_2axes", lambda x: F.layer_norm(x, (3, 4)),
         T(lambda x: TF.layer_norm(x, (3, 4))), [normal(2, 3, 4)]),
    # embedding (row-sparse gradient, compared densely)
    Case("embedding", lambda idx, w: F.embedding(idx, w),
         T(lambda idx, w: TF.embedding(idx, w)), [ints(6, 2, 3), normal(6, 3)]),
    Case("embedding_padding", lambda idx, w: F.embedding(idx, w, padding_idx=1),
         T(lambda idx, w: TF.embedding(idx, w, padding_idx=1)),
         [lambda r: np.array([[1, 0, 2], [1, 3, 0]], np.int64), normal(5, 3)],
         tags={"no_fd"}),  # padding row's gradient is zero by definition, not by calculus
    # shape ops
    Case("reshape", lambda a: a.reshape(4, -1), T(lambda a: a.reshape(4, -1)), [normal(2, 3, 4)]),
    Case("flatten", lambda a: F.flatten(a, 1), T(lambda a: a.flatten(1)), [normal(2, 3, 2, 2)]),
    Case("permute", lambda a: a.permute(2, 0, 1), T(lambda a: a.permute(2, 0, 1)), [normal(2, 3, 4)]),
    Case("transpose_T", lambda a: a.T, T(lambda a: a.T), [normal(3, 4)]),
    Case("expand", lambda a: a.expand(2, 3, 4), T(lambda a: a.expand(2, 3, 4)), [normal(3, 1)]),
    Case("getitem_slices", lambda a: a[1:, ::2, -1], T(lambda a: a[1:, ::2, -1]), [normal(3, 4, 5)]),
    Case("getitem_int_array", lambda a: a[[0, 2, 0]], T(lambda a: a[[0, 2, 0]]), [normal(3, 4)]),
    Case("getitem_mask", lambda a, m: a[m], T(lambda a, m: a[m]), [normal(3, 4), mask(3, 4)]),
    Case("getitem_none_ellipsis", lambda a: a[None, ..., 1], T(lambda a: a[None, ..., 1]), [normal(2, 3)]),
    Case("concat", lambda a, b: vf.concat([a, b], 1), T(lambda a, b: torch.cat([a, b], 1)),
         [normal(2, 3, 2), normal(2, 1, 2)]),
    Case("stack", lambda a, b: vf.stack([a, b], -1), T(lambda a, b: torch.stack([a, b], -1)),
         [normal(2, 3), normal(2, 3)]),
    # reductions
    Case("sum_all", lambda a: a.sum(), T(lambda a: a.sum()), [normal(2, 3, 4)]),
    Case("sum_axis_keep", lambda a: a.sum(1, keepdim=True), T(lambda a: a.sum(1, keepdim=True)),
         [normal(2, 3, 4)]),
    Case("sum_axes_02", lambda a: a.sum((0, 2)), T(lambda a: a.sum((0, 2))), [normal(2, 3, 4)]),
    Case("mean_axis", lambda a: a.mean(-1), T(lambda a: a.mean(-1)), [normal(2, 3, 4)]),
    Case("mean_all", lambda a: a.mean(), T(lambda a: a.mean()), [normal(2, 3)]),
    Case("max_axis", lambda a: a.max(1), T(lambda a: a.amax(1)), [distinct(2, 3, 4)]),
    Case("max_all", lambda a: a.max(), T(lambda a: a.amax()), [distinct(3, 4)]),
    Case("min_axes_keep", lambda a: a.min((0, 2), keepdim=True), T(lambda a: a.amin((0, 2), keepdim=True)),
         [distinct(2, 3, 4)]),
]

CASE_IDS = [c.id for c in CASES]
