"""What a reader hands out: plain, immutable values (numpy arrays are read-only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from visualdl.writer.kinds import BLOB_KINDS, KINDS  # noqa: F401  (re-exported)


class Scalars(NamedTuple):
    steps: np.ndarray       # int64
    wall_times: np.ndarray  # float64, unix seconds
    values: np.ndarray      # float64; NaN and +-inf are kept


@dataclass(frozen=True, slots=True)
class TextEvent:
    step: int
    wall_time: float
    text: str


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


@dataclass(frozen=True, slots=True)
class CurveEvent:
    """A PR curve (x=recall, y=precision) or a ROC curve (x=fpr, y=tpr) at one step."""

    step: int
    wall_time: float
    x: np.ndarray
    y: np.ndarray
    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    tn: np.ndarray
    fn: np.ndarray


@dataclass(frozen=True, slots=True)
class HParamsEvent:
    wall_time: float
    hparams: dict[str, Any]
    metric_tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BlobRef:
    """Where one blob (image, audio, figure, graph, embedding) lives; load it with
    ``LogReader.load``. ``meta`` holds the small fields (size, rate, shape, ...)."""

    kind: str
    tag: str
    step: int
    wall_time: float
    size: int
    path: str = field(repr=False)
    offset: int = field(repr=False)
    meta: dict[str, Any] = field(default_factory=dict, compare=False)


def readonly(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view
