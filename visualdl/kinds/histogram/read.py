"""Histograms, reader side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from visualdl.reader.events import readonly


@dataclass(frozen=True, slots=True)
class HistogramEvent:
    step: int
    wall_time: float
    edges: np.ndarray   # len(counts) + 1
    counts: np.ndarray
    min: float
    max: float
    sum: float
    sum_squares: float
    count: float
    nonfinite: float


def build(msg: Any) -> HistogramEvent:
    edges = readonly(np.array(msg.edges, dtype=np.float64))
    counts = readonly(np.array(msg.counts, dtype=np.float64))
    return HistogramEvent(msg.step, msg.wall_time, edges, counts, msg.min, msg.max, msg.sum,
                          msg.sum_squares, msg.count, msg.nonfinite)
