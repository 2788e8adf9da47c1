"""Helpers shared by op definitions."""

from __future__ import annotations

from typing import Any

from .. import shapes
from ..codes import R_SUM


def sum_to(be: Any, g: Any, shape: tuple[int, ...]) -> Any:
    """Sum a broadcast gradient back to an input's shape."""
    if tuple(g.shape) == tuple(shape):
        return g
    axes = shapes.sum_to_axes(tuple(g.shape), tuple(shape))
    r = be.reduce(R_SUM, g, axes, keepdims=True) if axes else g
    return be.reshape(r, shape)
