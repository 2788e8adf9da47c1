"""The data-provider seam: the one interface between stored data and the server.

API modules ask a ``DataProvider`` for runs, tags by kind, scalar series (downsampled with
min/max buckets), a kind's events and blobs, and a version for ETags; they never see a
reader. ``LogReaderProvider`` (in :mod:`visualdl.server.reader_provider`) serves logdirs of
record files; ``EmptyProvider`` serves nothing (``visualdl --model m.onnx`` without logs).
Another source of data (another tool's log files, remote storage) is another provider.

Every method that takes a run, kind or tag raises ``KeyError`` for one it does not hold.
A provider belongs to one app: whatever it caches (blob step maps, merged series) is its
own, so two apps in one process never serve each other's data.
"""

from __future__ import annotations

import contextlib
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from visualdl.sources.values import BlobRef, FileInfo, Scalars
from visualdl.series.downsample import window_indices

__all__ = ["DataProvider", "EmptyProvider", "ScalarView"]


@dataclass(frozen=True)
class ScalarView:
    """A scalar series as a chart gets it: at most ``points`` points (min/max buckets)."""

    steps: np.ndarray
    wall_times: np.ndarray
    values: np.ndarray
    total: int          # points in the full series
    downsampled: bool   # False when every point (of the window, if any) is here
    window_total: int = -1  # points in the step window asked for (all: ``total``)
    index: np.ndarray | None = None  # where the points are in the full series


class DataProvider(ABC):
    """What the server knows about stored data. Subclasses implement the abstract methods;
    the others are derived from them."""

    logdirs: list[str] = []
    reload_interval: float = 5.0

    def __init__(self) -> None:
        self._step_maps: dict[tuple[str, str, str], tuple[int, dict[int, BlobRef]]] = {}
        self._step_maps_lock = threading.Lock()

    # -- lifecycle (a provider with nothing to load is loaded at once) ---------------------
    def start(self) -> None:
        """Start loading in the background (idempotent)."""

    def stop(self, timeout: float = 5.0) -> None:
        """Stop background work."""

    def request_reload(self) -> None:
        """Look for new data now rather than at the next tick."""

    def note_activity(self) -> None:
        """A browser opened or refreshed the dashboard (a provider that backs off idle
        reloads goes back to its usual pace)."""

    def wait_loaded(self, timeout: float | None = None) -> bool:
        """Block until the first load finished."""
        return True

    @property
    def loaded(self) -> bool:
        """True once the first full pass over the data has finished."""
        return True

    @property
    @abstractmethod
    def version(self) -> int:
        """Changes whenever new data was read: ETags and the UI's refresh key on it."""

    def status(self) -> dict[str, Any]:
        """Load statistics and problems with the data, for ``/api/info``."""
        return {"errors": 0, "error_messages": [], "last_reload_seconds": 0.0,
                "reload_error": None}

    # -- the index -----------------------------------------------------------------------------
    def files(self) -> list[FileInfo]:
        """Every file found so far, read or not yet, with the source that reads it (a kind
        may start work on a big file before its first read is done); [] when the data does
        not come from files."""
        return []

    @abstractmethod
    def runs(self) -> list[str]:
        """Run names, sorted."""

    @abstractmethod
    def tags(self, run: str) -> dict[str, list[str]]:
        """``{kind: [tags]}`` of one run."""

    def tags_by_kind(self, kind: str | None = None) -> dict[str, dict[str, list[str]]]:
        """``{kind: {run: [tags]}}`` over every run (one kind, or all)."""
        out: dict[str, dict[str, list[str]]] = {}
        for run in self.runs():
            try:
                found = self.tags(run)
            except KeyError:  # vanished between runs() and tags()
                continue
            for k, names in found.items():
                if names and (kind is None or k == kind):
                    out.setdefault(k, {})[run] = list(names)
        return out

    def has_tag(self, run: str, kind: str, tag: str) -> bool:
        try:
            return tag in self.tags(run).get(kind, ())
        except KeyError:
            return False

    # -- data ----------------------------------------------------------------------------------
    @abstractmethod
    def scalars(self, run: str, tag: str, rank: int | None = None) -> Scalars:
        """Every point of a scalar tag (read-only arrays); in a data-parallel run, those of
        one ``rank`` (by default rank 0's)."""

    def ranks(self, run: str) -> list[int]:
        """The ranks of a data-parallel run; [] for a run of one process."""
        return []

    def default_rank(self, run: str, tag: str) -> int | None:
        """The rank :meth:`scalars` draws of ``tag`` when none is asked for; None for a run
        of one process."""
        return None

    def serving(self) -> contextlib.AbstractContextManager:
        """Held while a request builds a big answer (a chart of 2,000 runs): a provider
        still loading in the background may let it go first (see LogReaderProvider)."""
        return contextlib.nullcontext()

    def scalar_pending(self, tag: str) -> bool:
        """True while the first load may still add points of ``tag`` that are already on
        disk: an answer about it is then partial (the API says ``"loading": true``)."""
        return not self.loaded

    def scalar_ends(self, run: str, tag: str, rank: int | None = None,
                    ) -> tuple[int, float, float, float] | None:
        """(points, first wall time, last wall time, last value) of a scalar tag, None when
        empty: what the run table needs. Providers that keep series compact answer it
        without building the full series (see LogReaderProvider)."""
        data = self.scalars(run, tag, rank)
        if not data.steps.shape[0]:
            return None
        return (int(data.steps.shape[0]), float(data.wall_times[0]),
                float(data.wall_times[-1]), float(data.values[-1]))

    def scalar_view(self, run: str, tag: str, points: int, start_step: int | None = None,
                    end_step: int | None = None, wall_min: float | None = None,
                    wall_max: float | None = None, rank: int | None = None) -> ScalarView:
        """The series downsampled to at most ``points`` points, keeping each bucket's
        minimum and maximum so that spikes survive.

        ``start_step``/``end_step`` and ``wall_min``/``wall_max`` (inclusive, any may be
        None) restrict it to a window first (see ``downsample.window_indices``), so a
        zoomed chart gets the window at screen resolution: the same min/max buckets over
        the window, and every point once the window holds no more than ``points``.
        ``total`` stays the length of the whole series. ``rank``: as for :meth:`scalars`."""
        data = self.scalars(run, tag, rank)
        total = int(data.steps.shape[0])
        idx, in_window = window_indices(data, points, start_step, end_step, wall_min, wall_max)
        steps, walls, values = data.take(idx)  # memory-mapped: then lets go of its pages
        return ScalarView(steps, walls, values, total, int(idx.shape[0]) < in_window,
                          in_window, idx)

    @abstractmethod
    def events(self, run: str, kind: str, tag: str) -> list:
        """Every event of one tag of a kind (blob kinds: ``BlobRef``s), in time order."""

    def blobs(self, run: str, kind: str, tag: str) -> list[BlobRef]:
        """The index of one tag of a blob kind."""
        return self.events(run, kind, tag)

    def blob_at(self, run: str, kind: str, tag: str, step: int) -> BlobRef | None:
        """The blob logged at ``step`` (the newest when a resumed run logged it twice)."""
        found = self.blobs(run, kind, tag)
        key = (kind, run, tag)
        with self._step_maps_lock:
            cached = self._step_maps.get(key)
            if cached is None or cached[0] != len(found):
                cached = (len(found), {ref.step: ref for ref in found})
                self._step_maps[key] = cached
        return cached[1].get(step)

    @abstractmethod
    def load_blob(self, ref: BlobRef) -> Any:
        """The blob's message, read on demand (OSError/ValueError when it cannot be)."""

    @abstractmethod
    def hparams(self, run: str) -> Any:
        """The run's latest hyper-parameters (``HParamsEvent``) or None."""

    def run_health(self, run: str) -> Any:
        """The run's state and first non-finite scalar (``reader.run_health.RunHealth``),
        None when this provider cannot tell (data not read from files)."""
        return None


class EmptyProvider(DataProvider):
    """No data at all: no logdir was given (``visualdl --model m.onnx``)."""

    @property
    def version(self) -> int:
        return 0

    def runs(self) -> list[str]:
        return []

    def tags(self, run: str) -> dict[str, list[str]]:
        raise KeyError(run)

    def scalars(self, run: str, tag: str, rank: int | None = None) -> Scalars:
        raise KeyError(run)

    def events(self, run: str, kind: str, tag: str) -> list:
        raise KeyError(run)

    def load_blob(self, ref: BlobRef) -> Any:
        raise ValueError("no logs are served")

    def hparams(self, run: str) -> Any:
        raise KeyError(run)
