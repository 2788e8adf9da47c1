"""Tensors, writer side: copied (and checked numeric) in the caller's thread, stored as
dtype, shape and little-endian bytes, so they read back exactly as logged."""

from __future__ import annotations

from typing import Any

import numpy as np

from visualdl.kinds.checks import check_size, require_real, to_array


def check(tag: str, tensor: Any) -> tuple[np.ndarray, int]:
    """A private copy of ``tensor`` (a torch tensor, numpy array or nested lists); a torch
    bfloat16 tensor, which numpy cannot hold, is widened to float32 (exactly)."""
    if str(getattr(tensor, "dtype", "")) == "torch.bfloat16":
        tensor = tensor.float()
    array = to_array(tag, tensor, "tensor")
    require_real(tag, array, "tensor")
    check_size(tag, "the tensor", array.nbytes)
    return array, array.nbytes


def encode(msg: Any, array: np.ndarray) -> None:
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    msg.dtype = little.dtype.str
    msg.shape.extend(array.shape)
    msg.data = np.ascontiguousarray(little).tobytes()
