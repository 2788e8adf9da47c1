"""The kernel backend interface: what every op may call on ``self.be``.

``kernels_cpu`` (numpy arrays) and ``kernels_cuda`` (Numba device arrays) are modules that
implement these functions with these parameter names; ``device.backend(device)`` returns one of
them. ``tests/framework/test_backend_interface.py`` checks both against this Protocol, so a
primitive added, renamed or re-parameterised on one side only fails a test.

``Array`` is the backend's array type; integer ``code`` arguments are op codes from
``codes.py``. Range checks belong to the ops: a backend may assume indices and labels are valid.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

Array = Any
Pair = tuple[int, int]


@runtime_checkable
class Backend(Protocol):

    def adam_update(
        self,
        p2: Array,
        g2: Array,
        rows: Array,
        m2: Array,
        v2: Array,
        lr: float,
        beta1: float,
        beta2: float,
        eps: float,
        weight_decay: float,
        decoupled: bool,
        bc1: float,
        bc2: float,
    ) -> None: ...

    def arange(self, n: int, dtype: np.dtype) -> Array: ...

    def argmax(self, x: Array, axis: int | None, keepdims: bool = False) -> Array: ...

    def asarray(self, data: Any, dtype: np.dtype | None = None) -> Array: ...

    def assign_(self, dst: Array, src: Array) -> None: ...

    def astype(self, a: Array, dtype: np.dtype) -> Array: ...

    def avg_pool2d(
        self,
        x: Array,
        k: Pair,
        s: Pair,
        p: Pair,
        out_hw: Pair,
        include_pad: bool,
    ) -> Array: ...

    def avg_pool2d_grad(
        self,
        g: Array,
        x_shape: Sequence[int],
        k: Pair,
        s: Pair,
        p: Pair,
        include_pad: bool,
    ) -> Array: ...

    def batch_norm_eval(
        self,
        x3: Array,
        rm: Array,
        rv: Array,
        w: Array,
        b: Array,
        eps: float,
    ) -> tuple[Array, ...]: ...

    def batch_norm_grad(
        self,
        x3: Array,
        g3: Array,
        mean: Array,
        invstd: Array,
        w: Array,
        training: bool,
    ) -> tuple[Array, ...]: ...

    def batch_norm_train(
        self,
        x3: Array,
        w: Array,
        b: Array,
        rm: Array | None,
        rv: Array | None,
        momentum: float,
        eps: float,
    ) -> tuple[Array, ...]: ...

    def bias_add_(self, y: Array, b: Array, axis: int) -> None: ...

    def binary(self, code: int, a: Array, b: Array) -> Array: ...

    def coalesce_rows(self, idx: Array, rows: Array) -> tuple[Array, Array]: ...

    def col2im(
        self,
        cols: Array,
        x_shape: Sequence[int],
        k: Pair,
        s: Pair,
        p: Pair,
        d: Pair,
        out_hw: Pair,
    ) -> Array: ...

    def compare(self, code: int, a: Array, b: Array) -> Array: ...

    def concat(self, arrays: Sequence[Array], axis: int) -> Array: ...

    def copy(self, a: Array) -> Array: ...

    def cross_entropy(
        self,
        logits: Array,
        labels: Array,
        ignore_index: int,
        want_probs: bool,
    ) -> tuple[Array, ...]: ...

    def cross_entropy_grad(
        self,
        probs: Array,
        labels: Array,
        ignore_index: int,
        g: Array,
        scale: float,
    ) -> Array: ...

    def dropout(self, x: Array, p: float, scale: float, seed: int) -> tuple[Array, ...]: ...

    def dropout_grad(self, g: Array, mask: Array, scale: float) -> Array: ...

    def empty(self, shape: Sequence[int], dtype: np.dtype) -> Array: ...

    def expand(self, a: Array, shape: Sequence[int]) -> Array: ...

    def full(self, shape: Sequence[int], value: float, dtype: np.dtype) -> Array: ...

    def gather_rows(self, w: Array, idx: Array) -> Array: ...

    def getitem(self, a: Array, key: Any) -> Array: ...

    def getitem_grad(self, g: Array, shape: Sequence[int], key: Any) -> Array: ...

    def im2col(self, x: Array, k: Pair, s: Pair, p: Pair, d: Pair, out_hw: Pair) -> Array: ...

    def layer_norm(self, x2: Array, w: Array, b: Array, eps: float) -> tuple[Array, ...]: ...

    def layer_norm_grad(
        self,
        x2: Array,
        g2: Array,
        mean: Array,
        rstd: Array,
        w: Array,
    ) -> tuple[Array, ...]: ...

    def matmul(self, a: Array, b: Array, ta: bool = False, tb: bool = False) -> Array: ...

    def max_pool2d(self, x: Array, k: Pair, s: Pair, p: Pair, out_hw: Pair) -> tuple[Array, ...]: ...

    def max_pool2d_grad(self, g: Array, arg: Array, x_shape: Sequence[int]) -> Array: ...

    def permute(self, a: Array, axes: Sequence[int]) -> Array: ...

    def reduce(self, code: int, x: Array, axes: tuple[int, ...], keepdims: bool = False) -> Array: ...

    def reshape(self, a: Array, shape: Sequence[int]) -> Array: ...

    def scale_(self, a: Array, s: float) -> None: ...

    def scatter_rows(self, shape: Sequence[int], idx: Array, rows: Array) -> Array: ...

    def sgd_update(
        self,
        p2: Array,
        g2: Array,
        rows: Array,
        buf2: Array,
        lr: float,
        momentum: float,
        weight_decay: float,
        nesterov: bool,
    ) -> None: ...

    def softmax(self, x: Array, axis: int, log: bool) -> Array: ...

    def softmax_grad(self, y: Array, g: Array, axis: int, log: bool) -> Array: ...

    def split(self, a: Array, sizes: Sequence[int], axis: int) -> list[Array]: ...

    def sum_squares(self, a: Array) -> float: ...

    def to_numpy(self, a: Array) -> np.ndarray: ...

    def unary(self, code: int, x: Array, alpha: float = 0.0) -> Array: ...

    def unary_grad(
        self,
        code: int,
        x: Array | None,
        y: Array | None,
        g: Array,
        alpha: float = 0.0,
    ) -> Array: ...

    def zeros(self, shape: Sequence[int], dtype: np.dtype) -> Array: ...
