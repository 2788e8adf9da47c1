"""What one run holds once read: scalars as growable arrays, small events as lists, and
blobs as an index of file offsets (their bytes stay on disk)."""

from __future__ import annotations

from typing import Any

import numpy as np

from visualdl.format.record_pb2 import Entry
from visualdl.format.scalar_codec import CompactSeries, DecodedSeries, full_columns
from visualdl.kinds import registry
from visualdl.reader import scalar_cache
from visualdl.sources.values import BlobRef, Scalars, readonly


class _Series:
    """Append-only columns kept as a list of chunks, joined on first read.

    Loading a file appends one chunk per record (no copying); a query joins the chunks
    once and keeps the result as the single chunk, so a series is copied at most once per
    reload that added to it. Arrays handed out are never written to again, so readers can
    hold them across reloads.

    Chunks may be compact (see :class:`visualdl.format.scalar_codec.CompactSeries`: int32
    steps, float32 values, float32 wall-time offsets from a float64 base, each only where
    exact): 2,000 runs x 20 tags x 1,000 steps are 40M points, 960 MB at 24 bytes a point.
    A chunk is ``(steps, walls, values, wall_base)``; ``wall_base`` is None when ``walls``
    are the wall times themselves. The first read turns the chunks into one chunk of int64 /
    float64 columns (the view handed out), so only series that are read grow back to 24
    bytes a point.

    A series longer than ``scalar_cache.SPILL_POINTS`` (500,000) moves to the disk cache (memory-
    mapped columns and a min/max pyramid: see :mod:`visualdl.reader.scalar_cache`); small
    ones never do, so small logdirs keep their speed.
    """

    __slots__ = ("chunks", "n", "spilled", "cached")

    def __init__(self) -> None:
        self.chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray, float | None]] = []
        self.n = 0
        self.spilled: scalar_cache.SpilledSeries | None = None
        # the last view, handed out again until the series grows (a run table asks for
        # 40,000 series of 2,000 runs: building read-only views was most of its time)
        self.cached: Scalars | None = None

    def extend(self, steps: np.ndarray, walls: np.ndarray, values: np.ndarray,
               wall_base: float | None = None) -> None:
        k = len(steps)
        if len(walls) != k or len(values) != k:
            raise ValueError("scalar series columns differ in length")
        if not k:
            return
        self.n += k
        self.cached = None
        if self.spilled is not None:
            self.spilled.append(*full_columns(steps, walls, values, wall_base))
            return
        self.chunks.append((steps, walls, values, wall_base))
        if self.n > scalar_cache.SPILL_POINTS:
            self._spill()

    def own_last_chunk(self) -> None:
        """Copy the last chunk's columns, views of a record's arrays (scalar_codec slices
        one array per column for all of a record's series), so that a short series does not
        keep alive the arrays of the long ones that went to the disk cache (RAM would grow
        with every record file read)."""
        if self.chunks:
            steps, walls, values, base = self.chunks[-1]
            self.chunks[-1] = (steps.copy(), walls.copy(), values.copy(), base)

    def _spill(self) -> None:
        """Move the columns to the disk cache; on any error (no space, no permission) the
        series stays in memory, as it would without a cache."""
        try:
            spilled = scalar_cache.SpilledSeries()
            for cols in self.chunks:
                spilled.append(*full_columns(*cols))
            spilled.flush()  # a write that failed (no space) fails here, not later
        except OSError:
            return
        self.spilled = spilled
        self.chunks = []

    def view(self) -> Scalars:
        if self.spilled is not None:
            return self.spilled.view()
        if not self.chunks:
            return _empty()
        if len(self.chunks) > 1 or self.chunks[0][3] is not None or \
                self.chunks[0][0].dtype != np.int64 or self.chunks[0][2].dtype != np.float64:
            self.chunks = [_join(self.chunks)]
        if self.cached is None:
            steps, walls, values, _ = self.chunks[0]
            self.cached = Scalars(readonly(steps), readonly(walls), readonly(values))
        return self.cached


def _wall(chunk: tuple, i: int) -> float:
    """One wall time of a chunk, as :func:`full_columns` computes it (float32 -> float64
    is exact, and Python's float addition is the same IEEE double addition)."""
    base = chunk[3]
    return float(chunk[1][i]) + base if base is not None else float(chunk[1][i])


def _join(chunks: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, None]:
    """Chunks (compact or not) as one int64 / float64 chunk, written in one pass into
    arrays of the final size (widening int32 and float32 is exact, and a wall time is
    ``float64(offset) + base``: the addition :func:`full_columns` does)."""
    n = sum(len(c[0]) for c in chunks)
    steps, walls, values = np.empty(n, np.int64), np.empty(n), np.empty(n)
    i = 0
    for st, wa, va, base in chunks:
        j = i + len(st)
        steps[i:j] = st
        values[i:j] = va
        if base is None:
            walls[i:j] = wa
        else:
            np.add(wa, base, out=walls[i:j], dtype=np.float64)
        i = j
    return steps, walls, values, None


def _empty() -> Scalars:
    return Scalars(*(readonly(np.empty(0, t)) for t in (np.int64, np.float64, np.float64)))


def _merge(views: list[Scalars]) -> Scalars:
    """Several files' series of one tag as one, in wall-time order (stable: a file's own
    order is kept on ties)."""
    walls = np.concatenate([v.wall_times for v in views])
    order = np.argsort(walls, kind="stable")
    return Scalars(
        readonly(np.concatenate([v.steps for v in views])[order]),
        readonly(walls[order]),
        readonly(np.concatenate([v.values for v in views])[order]),
    )


class _Events:
    """A list of events per tag; merged in wall-time order when several files feed it.
    ``listed``: some event is more than a declaration (an hparams experiment, which only
    declares for the runs below): a tag of declarations alone is not listed."""

    __slots__ = ("items", "files", "sorted", "listed")

    def __init__(self) -> None:
        self.items: list = []
        self.files: set[int] = set()
        self.sorted = True
        self.listed = False

    def add(self, file_id: int, event: Any) -> None:
        self.items.append(event)
        self.listed = self.listed or not getattr(event, "declaration", False)
        self.files.add(file_id)
        if len(self.files) > 1:
            self.sorted = False

    def snapshot(self) -> list:
        if not self.sorted:
            self.items.sort(key=lambda e: e.wall_time)  # stable: keeps write order on ties
            self.sorted = True
        return list(self.items)


class RunStore:
    """One run's data. Series are kept per file (``scalars[tag][file_id]``) and merged when
    read: a run of one process has its files merged into one series per tag. In a
    data-parallel run each rank writes files of its own, each starting with a ``Worker``
    record (``file_ranks``): a tag's series is then the merge of one rank's files only, rank
    0 (with any file that names no rank) by default, so that ranks never mix."""

    def __init__(self) -> None:
        self.scalars: dict[str, dict[int, _Series]] = {}
        self.events: dict[str, dict[str, _Events]] = {}
        self._merged: dict[str, tuple[int, Scalars]] = {}
        #: file id -> the offset of its last close marker (its writer was closed)
        self.closed: dict[int, int] = {}
        #: file id -> the rank its Worker record names (files of a data-parallel run only)
        self.file_ranks: dict[int, int] = {}
        self._rank_merged: dict[tuple[str, int], tuple[int, Scalars]] = {}

    # -- adding -------------------------------------------------------------------
    def add_entry(self, entry: Entry | DecodedSeries | CompactSeries, file_id: int, path: str,
                  offset: int, source: str = "visualdl") -> None:
        """Add one entry: a protobuf ``Entry``, or a series scalar_codec decoded (blobs are
        indexed by ``path`` and ``offset``, read back by ``source``)."""
        if isinstance(entry, (DecodedSeries, CompactSeries)):
            base = entry.wall_base if isinstance(entry, CompactSeries) else None
            self._add_scalars(entry[0], entry[1], entry[2], entry[3], file_id, base)
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
        if field == "close":  # the file's close marker: not a kind's data
            self.closed[file_id] = max(offset, self.closed.get(file_id, -1))
            return
        if field == "worker" and file_id not in self.file_ranks:  # the file's rank
            self.file_ranks[file_id] = entry.worker.rank
            self._merged.clear()  # a merge made before may have mixed this file in
            self._rank_merged.clear()
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
                                     offset, meta, source)
            else:
                event = read.build(msg)
        except (ValueError, TypeError, ArithmeticError, LookupError) as exc:
            raise ValueError(f"{unit.name} {tag!r} at step {getattr(msg, 'step', 0)}: "
                             f"{exc}") from exc
        self.events.setdefault(unit.name, {}).setdefault(tag, _Events()).add(file_id, event)

    def add_compact(self, series: list[CompactSeries], file_id: int) -> list[str]:
        """Add one record's series (the loop of :meth:`add_entry`, without its per-entry
        dispatch: 2,000 runs x 20 tags are 80,000 calls); returns why any was refused."""
        refused = []
        scalars, merged = self.scalars, self._merged
        kept, spilled = [], False
        for tag, steps, walls, values, base in series:
            per_file = scalars.get(tag)
            if per_file is None:
                per_file = scalars[tag] = {}
            one = per_file.get(file_id)
            if one is None:
                one = per_file[file_id] = _Series()
            try:
                one.extend(steps, walls, values, base)
            except ValueError as exc:
                refused.append(str(exc))
            merged.pop(tag, None)
            if one.spilled is None:
                kept.append(one)
            spilled = spilled or one.spilled is not None
        if spilled:  # the record's arrays went to the disk cache: views of them would pin them
            for one in kept:
                one.own_last_chunk()
        return refused

    def declare_scalars(self, tags: Any, file_id: int) -> None:
        """Make (empty) series for tags a file holds whose points come later: the first
        load lists every tag after its first pass (see visualdl.reader.first_load)."""
        scalars = self.scalars
        for tag in tags:  # (an empty series leaves a merged view as it is)
            per_file = scalars.get(tag)
            if per_file is None:
                scalars[tag] = {file_id: _Series()}
            elif file_id not in per_file:
                per_file[file_id] = _Series()

    def add_event(self, kind: str, tag: str, file_id: int, event: Any) -> None:
        """Add an event a source made without an ``Entry`` (a PyTorch trace's profile)."""
        self.events.setdefault(kind, {}).setdefault(tag, _Events()).add(file_id, event)

    def _add_scalars(self, tag: str, steps: np.ndarray, walls: np.ndarray, values: np.ndarray,
                     file_id: int, wall_base: float | None = None) -> None:
        per_file = self.scalars.get(tag)
        if per_file is None:
            per_file = self.scalars[tag] = {}
        series = per_file.get(file_id)
        if series is None:
            series = per_file[file_id] = _Series()
        series.extend(steps, walls, values, wall_base)
        self._merged.pop(tag, None)

    # -- reading ------------------------------------------------------------------
    def tags(self) -> dict[str, list[str]]:
        """``{kind: sorted tags}``, kinds in the registry's order."""
        out: dict[str, list[str]] = {}
        if self.scalars:  # system metrics are scalars listed as a kind of their own
            out.update(registry.split_scalar_tags(sorted(self.scalars)))
        for kind in sorted(self.events, key=registry.position):
            tags = sorted(tag for tag, events in self.events[kind].items() if events.listed)
            if tags:
                out[kind] = tags
        return out

    def ranks(self) -> list[int]:
        """The ranks whose files this run holds; [] for a run of one process."""
        return sorted(set(self.file_ranks.values()))

    def _files_of(self, tag: str, rank: int | None) -> dict[int, _Series]:
        """The per-file series of ``tag`` that make up one rank's series (``rank`` None:
        the default one, see :meth:`default_rank`). KeyError for a rank the run does not
        have."""
        per_file = self.scalars[tag]
        if not self.file_ranks:  # one process: every file (rank 0 is the run itself)
            if rank:
                raise KeyError(f"the run has no rank {rank} (it has no ranked files)")
            return per_file
        if rank and rank not in self.file_ranks.values():
            raise KeyError(f"the run has no rank {rank}; its ranks: {self.ranks()}")
        want = self.default_rank(tag) if rank is None else rank
        ranks = self.file_ranks
        return {fid: s for fid, s in per_file.items() if ranks.get(fid, 0) == want}

    def default_rank(self, tag: str) -> int:
        """The rank whose series of ``tag`` is shown when none is asked for: rank 0's (with
        files that name no rank), or, when rank 0 never logged the tag, the lowest rank
        that did -- a tag only another rank logs, or a run of whose ranks only some wrote
        files, is shown, not left empty."""
        ranks = self.file_ranks
        present = {ranks.get(fid, 0) for fid in self.scalars.get(tag, ())}
        return 0 if 0 in present or not present else min(present)

    def scalar_view(self, tag: str, rank: int | None = None) -> Scalars:
        """The series of ``tag`` (of one rank: see :meth:`_files_of`), the files it
        came from merged in wall-time order."""
        if rank is not None or self.file_ranks:
            return self._rank_view(tag, rank)
        per_file = self.scalars[tag]  # a run of one process: the path it always took
        if len(per_file) == 1:
            return next(iter(per_file.values())).view()
        total = sum(s.n for s in per_file.values())
        cached = self._merged.get(tag)
        if cached is not None and cached[0] == total:
            return cached[1]
        merged = _merge([s.view() for s in per_file.values()])
        self._merged[tag] = (total, merged)
        return merged

    def _rank_view(self, tag: str, rank: int | None) -> Scalars:
        per_file = self._files_of(tag, rank)
        if len(per_file) == 1:
            return next(iter(per_file.values())).view()
        if not per_file:
            return _empty()
        total = sum(s.n for s in per_file.values())
        key = (tag, self.default_rank(tag) if rank is None else rank)
        cached = self._rank_merged.get(key)
        if cached is not None and cached[0] == total:
            return cached[1]
        merged = _merge([s.view() for s in per_file.values()])
        self._rank_merged[key] = (total, merged)
        return merged

    def scalar_ends(self, tag: str, rank: int | None = None,
                    ) -> tuple[int, float, float, float] | None:
        """(points, first wall time, last wall time, last value) of a series, None when
        it is empty: what a run table shows, read from the chunks' ends without building
        the series' int64/float64 view (which would undo the compaction of every tag of
        every run). Several files: from the merged view."""
        if rank is None and not self.file_ranks:
            per_file = self.scalars[tag]
        else:
            per_file = self._files_of(tag, rank)
        if len(per_file) == 1:
            series = next(iter(per_file.values()))
            if series.spilled is None and series.chunks:
                first, last = series.chunks[0], series.chunks[-1]
                return (series.n, _wall(first, 0), _wall(last, -1), float(last[2][-1]))
        view = self.scalar_view(tag, rank)
        if not view.steps.shape[0]:
            return None
        return (int(view.steps.shape[0]), float(view.wall_times[0]),
                float(view.wall_times[-1]), float(view.values[-1]))

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
            series.chunks, series.n = [(*columns, None)], len(columns[0])
        self.scalars.setdefault(tag, {})[file_id] = series
        self._merged.pop(tag, None)
