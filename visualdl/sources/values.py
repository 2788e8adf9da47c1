"""What the sources give and every reader hands out whatever the kind: scalar series and
blob references (plain, immutable values; numpy arrays are read-only). Each kind's own
events live in its unit (``visualdl.kinds.<kind>.read``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np


class Scalars(NamedTuple):
    steps: np.ndarray       # int64
    wall_times: np.ndarray  # float64, unix seconds
    values: np.ndarray      # float64; NaN and +-inf are kept

    def take(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The points at ``idx`` (sorted, distinct indexes), as three arrays."""
        if idx.shape[0] == self.steps.shape[0]:
            return self.steps, self.wall_times, self.values
        return self.steps[idx], self.wall_times[idx], self.values[idx]

    def release(self) -> None:
        """Let go of what reading the series held (a memory-mapped series' file pages);
        nothing for a series in memory."""


@dataclass(frozen=True, slots=True)
class BlobRef:
    """Where one blob (image, audio, figure, graph, embedding) lives; load it with
    ``LogReader.load``. ``meta`` holds the small fields (size, rate, shape, ...);
    ``source`` names the source that read it (``visualdl.sources.registry``): where a
    blob came from is said here, and nowhere else."""

    kind: str
    tag: str
    step: int
    wall_time: float
    size: int
    path: str = field(repr=False)
    offset: int = field(repr=False)
    meta: dict[str, Any] = field(default_factory=dict, compare=False)
    source: str = field(default="visualdl", compare=False)


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One file a reader has found: where it is, its run, and the source that reads it
    (``""`` while that is not known yet: its first bytes are not read)."""

    path: str
    run: str
    source: str
    size: int = -1  # bytes read so far at least (-1: not known)


def readonly(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view
