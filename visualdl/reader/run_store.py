"""What one run holds once read: scalars as growable arrays, small events as lists, and
blobs as an index of file offsets (their bytes stay on disk)."""

from __future__ import annotations

from typing import Any

import numpy as np

from visualdl.format.record_pb2 import Entry
from visualdl.format.scalar_codec import DecodedSeries
from visualdl.kinds import registry
from visualdl.reader import scalar_cache
from visualdl.reader.events import BlobRef, Scalars, readonly


class _Series:
    """Append-only columns kept as a list of chunks, joined on first read.

    Loading a file appends one chunk per record (no copying); a query joins the chunks
    once and keeps the result as the single chunk, so a series is copied at most once per
    reload that added to it. Arrays handed out are never written to again, so readers can
    hold them across reloads.

    A series longer than ``scalar_cache.SPILL_POINTS`` (500,000) moves to the disk cache (memory-
    mapped columns and a min/max pyramid: see :mod:`visualdl.reader.scalar_cache`); small
    ones never do, so small logdirs keep their speed.
    """

    __slots__ = ("chunks", "n", "spilled", "cached")

    def __init__(self) -> None:
        self.chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.n = 0
        self.spilled: scalar_cache.SpilledSeries | None = None
        # the last view, handed out again until the series grows (a run table asks for
        # 40,000 series of 2,000 runs: building read-only views was most of its time)
        self.cached: Scalars | None = None

    def extend(self, steps: np.ndarray, walls: np.ndarray, values: np.ndarray) -> None:
        k = len(steps)
        if len(walls) != k or len(values) != k:
            raise ValueError("scalar series columns differ in length")
        if not k:
            return
        self.n += k
        self.cached = None
        if self.spilled is not None:
            self.spilled.append(steps, walls, values)
            return
        self.chunks.append((steps, walls, values))
        if self.n > scalar_cache.SPILL_POINTS:
            self._spill()

    def _spill(self) -> None:
        """Move the columns to the disk cache; on any error (no space, no permission) the
        series stays in memory, as it would without a cache."""
        try:
            spilled = scalar_cache.SpilledSeries()
            for cols in self.chunks:
                spilled.append(*cols)
            spilled.flush()  # a write that failed (no space) fails here, not later
        except OSError:
            return
        self.spilled = spilled
        self.chunks = []

    def view(self) -> Scalars:
        if self.spilled is not None:
            return self.spilled.view()
        if not self.chunks:
            return Scalars(*(readonly(np.empty(0, t)) for t in (np.int64, np.float64, np.float64)))
        if len(self.chunks) > 1:
            self.chunks = [tuple(np.concatenate(cols) for cols in zip(*self.chunks))]
        if self.cached is None:
            steps, walls, values = self.chunks[0]
            self.cached = Scalars(readonly(steps), readonly(walls), readonly(values))
        return self.cached


class _Events:
    """A list of events per tag; merged in wall-time order when several files feed it."""

    __slots__ = ("items", "files", "sorted")

    def __init__(self) -> None:
        self.items: list = []
        self.files: set[int] = set()
        self.sorted = True

    def add(self, file_id: int, event: Any) -> None:
        self.items.append(event)
        self.files.add(file_id)
        if len(self.files) > 1:
            self.sorted = False

    def snapshot(self) -> list:
        if not self.sorted:
            self.items.sort(key=lambda e: e.wall_time)  # stable: keeps write order on ties
            self.sorted = True
        return list(self.items)


class RunStore:
    def __init__(self) -> None:
        self.scalars: dict[str, dict[int, _Series]] = {}
        self.events: dict[str, dict[str, _Events]] = {}
        self._merged: dict[str, tuple[int, Scalars]] = {}

    # -- adding -------------------------------------------------------------------
    def add_entry(self, entry: Entry | DecodedSeries, file_id: int, path: str, offset: int) -> None:
        """Add one entry: a protobuf ``Entry``, or a series scalar_codec decoded."""
        if isinstance(entry, DecodedSeries):
            self._add_scalars(*entry, file_id)
            return
        field = entry.WhichOneof("kind")
        if field == "scalars":
            msg = entry.scalars
            self._add_scalars(msg.tag, np.array(msg.steps, dtype=np.int64),
                              np.array(msg.wall_times, dtype=np.float64),
                              np.array(msg.values, dtype=np.float64), file_id)
            return
        if field is None:
            return
        msg = getattr(entry, field)
        unit = registry.by_message(field)
        if unit is None:  # a plugin entry; one whose kind is not installed is skipped
            try:
                unit = registry.get(msg.kind)
            except KeyError:
                return
        read = unit.part("read")
        # Kinds without tags (hparams) belong to the run: one tag named after the kind.
        tag = msg.tag if "tag" in msg.DESCRIPTOR.fields_by_name else unit.name
        try:  # a kind's read part refuses inconsistent contents with a ValueError
            if unit.blob:
                size, meta = read.meta(msg)
                event: Any = BlobRef(unit.name, msg.tag, msg.step, msg.wall_time, size, path,
                                     offset, meta)
            else:
                event = read.build(msg)
        except (ValueError, TypeError, ArithmeticError, LookupError) as exc:
            raise ValueError(f"{unit.name} {tag!r} at step {getattr(msg, 'step', 0)}: "
                             f"{exc}") from exc
        self.events.setdefault(unit.name, {}).setdefault(tag, _Events()).add(file_id, event)

    def add_event(self, kind: str, tag: str, file_id: int, event: Any) -> None:
        """Add an event a source made without an ``Entry`` (a PyTorch trace's profile)."""
        self.events.setdefault(kind, {}).setdefault(tag, _Events()).add(file_id, event)

    def _add_scalars(self, tag: str, steps: np.ndarray, walls: np.ndarray, values: np.ndarray,
                     file_id: int) -> None:
        per_file = self.scalars.setdefault(tag, {})
        series = per_file.get(file_id)
        if series is None:
            series = per_file[file_id] = _Series()
        series.extend(steps, walls, values)
        self._merged.pop(tag, None)

    # -- reading ------------------------------------------------------------------
    def tags(self) -> dict[str, list[str]]:
        """``{kind: sorted tags}``, kinds in the registry's order."""
        out: dict[str, list[str]] = {}
        if self.scalars:
            out["scalar"] = sorted(self.scalars)
        for kind in sorted(self.events, key=registry.position):
            out[kind] = sorted(self.events[kind])
        return out

    def scalar_view(self, tag: str) -> Scalars:
        per_file = self.scalars[tag]
        if len(per_file) == 1:
            return next(iter(per_file.values())).view()
        total = sum(s.n for s in per_file.values())
        cached = self._merged.get(tag)
        if cached is not None and cached[0] == total:
            return cached[1]
        views = [s.view() for s in per_file.values()]
        walls = np.concatenate([v.wall_times for v in views])
        order = np.argsort(walls, kind="stable")
        merged = Scalars(
            readonly(np.concatenate([v.steps for v in views])[order]),
            readonly(walls[order]),
            readonly(np.concatenate([v.values for v in views])[order]),
        )
        self._merged[tag] = (total, merged)
        return merged

    def event_list(self, kind: str, tag: str) -> list:
        return self.events[kind][tag].snapshot()

    # -- the persistent scalar cache (visualdl.reader.scalar_persist) ----------------
    def file_series(self, file_id: int) -> dict[str, "_Series"]:
        """Every scalar series one file fed, by tag."""
        return {tag: per_file[file_id] for tag, per_file in self.scalars.items()
                if file_id in per_file}

    def restore_series(self, tag: str, file_id: int,
                       spilled: scalar_cache.SpilledSeries | None = None,
                       columns: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> None:
        """Put back a series a previous process cached (spilled, or small columns)."""
        series = _Series()
        if spilled is not None:
            series.spilled, series.n = spilled, spilled.n
        elif columns is not None and len(columns[0]):
            series.chunks, series.n = [columns], len(columns[0])
        self.scalars.setdefault(tag, {})[file_id] = series
        self._merged.pop(tag, None)
