"""In-place parameter initialisers (PyTorch's defaults), drawing from the seeded global
generator so ``vf.seed(n)`` makes model construction reproducible."""

from __future__ import annotations

import math

import numpy as np

from .. import random as _random
from ..tensor import Tensor


def _assign(t: Tensor, host: np.ndarray) -> Tensor:
    t.set_value(host)
    return t


def uniform_(t: Tensor, low: float = 0.0, high: float = 1.0) -> Tensor:
    return _assign(t, _random.generator().uniform(low, high, t.shape))


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    return _assign(t, _random.generator().normal(mean, std, t.shape))


def constant_(t: Tensor, value: float) -> Tensor:
    return _assign(t, np.full(t.shape, value))


def zeros_(t: Tensor) -> Tensor:
    return constant_(t, 0.0)


def ones_(t: Tensor) -> Tensor:
    return constant_(t, 1.0)


def fan_in_out(shape: tuple[int, ...]) -> tuple[int, int]:
    """(fan_in, fan_out) of a linear (out, in) or conv (out, in/groups, kh, kw) weight."""
    if len(shape) < 2:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def kaiming_uniform_(t: Tensor, a: float = math.sqrt(5)) -> Tensor:
    """PyTorch's default for Linear/Conv weights: U(-b, b), b = sqrt(6 / ((1 + a^2) fan_in))."""
    fan_in, _ = fan_in_out(t.shape)
    bound = math.sqrt(6.0 / ((1 + a * a) * fan_in))
    return uniform_(t, -bound, bound)


def xavier_uniform_(t: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = fan_in_out(t.shape)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound)
