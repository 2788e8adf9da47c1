"""``Parameter``: a leaf tensor that a ``Layer`` registers and an optimizer updates."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor


class Parameter(Tensor):
    """A trainable tensor (requires_grad=True by default). Kept as the same object across
    ``Layer.to()`` and ``load_state_dict`` so optimizers holding it stay valid."""

    __slots__ = ()

    def __init__(self, data: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = True) -> None:
        super().__init__(data, dtype=dtype, device=device, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
