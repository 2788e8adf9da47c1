"""embedding: a row lookup whose weight gradient is row-sparse (``RowSparseGrad``)."""

from __future__ import annotations

from .. import dtypes
from ..codes import MUL, NE
from ..dispatch import Op, apply, register
from ..sparse import RowSparseGrad
from ..tensor import Tensor


@register("embedding")
class Embedding(Op):
    def forward(self, idx, weight, padding_idx):
        # The range check is here, for every backend: a device kernel cannot raise. (On a GPU
        # this is a host read of the indices, which are small.)
        host = self.be.to_numpy(idx)
        if host.size and (host.min() < 0 or host.max() >= weight.shape[0]):
            raise IndexError("embedding index out of range")
        if self.recording:
            self.saved = (idx, weight.shape)
        return self.be.gather_rows(weight, idx)

    def backward(self, g):
        be = self.be
        idx, wshape = self.saved
        flat_idx = be.reshape(idx, (-1,))
        rows = be.reshape(g, (-1, wshape[1]))
        pad = self.attrs["padding_idx"]
        if pad is not None:
            keep = be.astype(be.compare(NE, flat_idx, be.full((), pad, idx.dtype)), g.dtype)
            rows = be.binary(MUL, rows, be.reshape(keep, (-1, 1)))
        return None, RowSparseGrad(be, flat_idx, rows, wshape)


def embedding(x: Tensor, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Look up rows of ``weight`` (V, D) for int64 indices ``x``; the weight gradient is a
    ``RowSparseGrad`` holding only the rows used."""
    if x.dtype not in (dtypes.int64, dtypes.int32):
        raise TypeError(f"embedding indices must be integers, got {x.dtype}")
    if x.dtype != dtypes.int64:
        x = x.astype(dtypes.int64)
    if padding_idx is not None:
        padding_idx = int(padding_idx) % weight.shape[0]
    return apply("embedding", x, weight, padding_idx=padding_idx)
