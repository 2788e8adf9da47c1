"""Checks a reader makes of one entry's contents before keeping it.

A record can pass its CRC and decode and still be inconsistent: written by a buggy or
foreign writer, or crafted. Such an entry raises ``ValueError`` here; the reader skips it
and counts a bad record, so that the server never meets it (never a 500).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np


def finite(what: str, *values: float) -> None:
    for value in values:
        if not math.isfinite(value):
            raise ValueError(f"{what} is {value}, not a finite number")


def finite_array(what: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if not np.isfinite(array).all():
        raise ValueError(f"{what} holds NaN or infinite values")
    return array


def non_negative(what: str, *values: float) -> None:
    for value in values:
        if not value >= 0:
            raise ValueError(f"{what} is {value}, not a number >= 0")


def same_lengths(kind: str, **columns: Any) -> int:
    """The common length of ``columns``; a ValueError naming them when they differ."""
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{name} {n}" for name, n in lengths.items())
        raise ValueError(f"{kind} columns differ in length: {listed}")
    return next(iter(lengths.values()), 0)


def positive_int(what: str, value: int, limit: int = 2**31 - 1) -> None:
    if not 0 < value <= limit:
        raise ValueError(f"{what} is {value}, not in 1..{limit}")
