"""Row-sparse gradients (embedding): only the rows a batch used are stored, so a large
vocabulary costs memory and optimizer time proportional to the rows touched."""

from __future__ import annotations

from typing import Any

import numpy as np


class RowSparseGrad:
    """Gradient of a (V, D) parameter given as ``values[k]`` for row ``indices[k]``.

    Indices may repeat until ``coalesce()``; ``to_dense()`` / ``numpy()`` give the full
    gradient for inspection (histograms, tests).
    """

    __slots__ = ("indices", "values", "shape", "be", "coalesced")

    def __init__(self, be: Any, indices: Any, values: Any, shape: tuple[int, ...],
                 coalesced: bool = False) -> None:
        self.be = be
        self.indices = indices
        self.values = values
        self.shape = tuple(shape)
        self.coalesced = coalesced

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    def coalesce(self) -> RowSparseGrad:
        if not self.coalesced:
            self.indices, self.values = self.be.coalesce_rows(self.indices, self.values)
            self.coalesced = True
        return self

    def to_dense(self) -> Any:
        self.coalesce()
        return self.be.scatter_rows(self.shape, self.indices, self.values)

    def numpy(self) -> np.ndarray:
        return self.be.to_numpy(self.to_dense())

    def __repr__(self) -> str:
        return f"RowSparseGrad(shape={self.shape}, rows={self.indices.shape[0]})"


def accumulate(be: Any, a: Any, b: Any) -> Any:
    """a + b for dense backend arrays and/or RowSparseGrads."""
    a_sparse = isinstance(a, RowSparseGrad)
    b_sparse = isinstance(b, RowSparseGrad)
    if a_sparse and b_sparse:
        return RowSparseGrad(be, be.concat([a.indices, b.indices], 0),
                             be.concat([a.values, b.values], 0), a.shape)
    if a_sparse:
        a = a.to_dense()
    if b_sparse:
        b = b.to_dense()
    from .codes import ADD

    return be.binary(ADD, a, b)
