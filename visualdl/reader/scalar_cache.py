"""Long scalar series kept on disk, memory-mapped, with a min/max pyramid.

A run of 20 tags x 10M steps is 200M points: about 5 GB as numpy columns, more than a
server should hold. Beyond ``SPILL_POINTS`` points, a series' columns are appended to three
files in a cache folder (``steps.i64``, ``walls.f64``, ``values.f64``) and read back through
``numpy.memmap``: the kernel pages in only what a query touches. So that a chart of the
whole series does not touch every page, each series keeps a pyramid of min/max per block
(level 0: blocks of ``BASE`` points, each level above: ``FANOUT`` blocks of the one below),
built from the points as they are appended (never by reading the files back). A window of
any size is answered from the level whose blocks fit the chart's width, plus the partial
blocks at the window's two ends read from the files: a few thousand stored values.

A series starts in this process's own folder (under ``visualdl --cache-dir``, else
``$VISUALDL_CACHE_DIR``, else ``$XDG_CACHE_HOME/visualdl``, else ``~/.cache/visualdl``,
removed at exit). Once its record file is read, :mod:`visualdl.reader.scalar_persist`
moves it into that file's persistent folder, so a restarted server maps it again instead of
decoding the records (validated against the file's identity and offsets; never trusted
over the records). ``--no-cache`` (``VISUALDL_NO_CACHE=1``) keeps only the private folders.
"""

from __future__ import annotations

import atexit
import collections
import mmap
import os
import shutil
import tempfile
import threading
from pathlib import Path

import numpy as np

from visualdl.sources.values import Scalars, readonly
from visualdl.storage import cache_folder

__all__ = ["SpilledSeries", "SpilledScalars", "SPILL_POINTS", "BASE", "FANOUT"]

#: a series longer than this moves to the disk cache (small logdirs never do); the
#: environment variable VISUALDL_SPILL_POINTS overrides it (a huge value: never spill)
SPILL_POINTS = int(os.environ.get("VISUALDL_SPILL_POINTS") or 500_000)
BASE = 1024
#: a window of at most this many points per point asked is bucketed from the file itself
RAW_WINDOW = 256
FANOUT = 2

_lock = threading.Lock()
_session: Path | None = None
_counter = [0]
_broken: list[str] = []  # why the cache folder could not be made (then never tried again)
_made_under = 0  # the cache folder setting the session folder was made under
_TRIM_BYTES = 256 << 20
_since_trim = [0]


_WRITES_IN_FLIGHT = 16  # chunks queued for the writer thread at most (~16 x 3 x 80 KB)
_writer: list = []
_inflight: collections.deque = collections.deque()


def _submit(fn, *args):  # noqa: ANN001, ANN202 - a function and its arguments; a Future
    """Run ``fn`` on the one cache-writer thread, in order. Copying 24 bytes a point into
    the page cache is a large part of a cache build; the thread does it while the reader
    decodes the next records (``write`` lets go of the GIL)."""
    if not _writer:
        from concurrent.futures import ThreadPoolExecutor

        _writer.append(ThreadPoolExecutor(1, thread_name_prefix="visualdl-cache-write"))
    future = _writer[0].submit(fn, *args)
    _inflight.append(future)
    while len(_inflight) > _WRITES_IN_FLIGHT:  # bounded: memory stays bounded
        _inflight.popleft().result()
    return future


#: the file's data to the disk (its size too; not its times): fsync where there is no fdatasync
datasync = getattr(os, "fdatasync", os.fsync)


def sync_all(fds: list[int]) -> None:
    """``datasync`` every descriptor, several at once: the file system joins concurrent
    syncs into one journal commit, so many files take little longer than one."""
    if len(fds) <= 1:
        for fd in fds:
            datasync(fd)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(16, len(fds)), thread_name_prefix="visualdl-cache-sync") as ex:
        for done in [ex.submit(datasync, fd) for fd in fds]:
            done.result()


def submit(fn, *args):  # noqa: ANN001, ANN201 - a function and its arguments; a Future
    """Queue ``fn`` after every cache write queued so far (the persistent cache's commits:
    they describe only what was written before them)."""
    return _submit(fn, *args)


def wait_writes() -> None:
    """Wait until every queued cache write and commit of this process is done (a commit's
    own errors are its business: see scalar_persist)."""
    while _inflight:
        future = _inflight.popleft()
        try:
            future.result()
        except Exception:  # noqa: BLE001 - a failed series write surfaces at its series
            pass


def _load_trim():  # noqa: ANN202 - a C function or None
    """glibc's malloc_trim, or None elsewhere. The decoded chunks a spilled series drops are
    small arrays from the C heap, which glibc keeps after they are freed (most of what a
    long load grew the heap by); trimming hands those pages back to the system."""
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_trim = _load_trim()


def _note_spilled(nbytes: int) -> None:
    _since_trim[0] += nbytes
    if _since_trim[0] >= _TRIM_BYTES:
        _since_trim[0] = 0
        if _trim is not None:
            _trim(0)


def _new_dir() -> Path:
    """A fresh folder for one series inside this process's session folder."""
    global _session, _made_under
    with _lock:
        if _made_under != cache_folder.generation():  # the setting changed: start afresh
            _session, _made_under = None, cache_folder.generation()
            _broken.clear()
        if _broken and _session is None:
            raise OSError(_broken[0])
        if _session is None:
            root = cache_folder.cache_root()
            try:
                root.mkdir(parents=True, exist_ok=True)
                _session = Path(tempfile.mkdtemp(prefix=f"scalars-{os.getpid()}-", dir=root))
            except OSError as exc:
                _broken.append(f"{root}: {exc}")
                raise
            atexit.register(shutil.rmtree, _session, True)
        _counter[0] += 1
        path = _session / f"s{_counter[0]}"
    path.mkdir()
    return path


def block_extremes(block: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per row of ``block``: the index of its minimum and of its maximum and those values,
    NaN ignored (a row of NaN only: index 0, value NaN).

    ``argmin`` / ``argmax`` straight on the rows, one pass each, and the rows holding a NaN
    (where numpy's argmin stops at the NaN) done again with the NaN masked: masking every
    row first would cost many times more, on the main thread of a cache build.
    """
    rows = np.arange(len(block))
    lo, hi = block.argmin(axis=1), block.argmax(axis=1)
    lo_v, hi_v = block[rows, lo], block[rows, hi]
    bad = np.flatnonzero(np.isnan(lo_v) | np.isnan(hi_v))
    if len(bad):
        sub = block[bad]
        nan = np.isnan(sub)
        lo[bad] = np.where(nan, np.inf, sub).argmin(axis=1)
        hi[bad] = np.where(nan, -np.inf, sub).argmax(axis=1)
        lo_v[bad], hi_v[bad] = block[bad, lo[bad]], block[bad, hi[bad]]
    return lo, hi, lo_v, hi_v


class SpilledScalars(Scalars):
    """``Scalars`` over memory-mapped columns that can also answer a downsampled window
    from the pyramid (``minmax_window``) without reading the whole series."""

    series: "SpilledSeries"

    def minmax_window(self, start: int | None, end: int | None,
                      points: int) -> tuple[np.ndarray, int]:
        return self.series.minmax_window(self, start, end, points)

    def minmax_range(self, i0: int, i1: int, points: int) -> tuple[np.ndarray, int]:
        """``minmax_window`` for the index range ``[i0, i1)`` (a wall-time window)."""
        return self.series.minmax_range(self, i0, i1, points)

    def ordered(self, column: str) -> bool:
        """Whether ``steps`` or ``wall_times`` never decreases, known without a read."""
        return self.series.ordered(self, column)

    def release(self) -> None:
        """Let go of the file pages a read touched (see ``take``)."""
        _release(self)

    def take(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The points at ``idx`` as arrays of their own; then the pages the query touched
        are let go. (Each touch maps a file page and its neighbours into the process: a
        thousand scattered points can keep much of a long series resident until the kernel
        needs the memory back.)"""
        out = tuple(np.asarray(col[idx]) for col in self)
        _release(self)
        return out  # type: ignore[return-value]


def _release(columns) -> None:  # noqa: ANN001 - memory-mapped arrays or views of them
    """Unmap the resident pages of memory-mapped columns (MADV_DONTNEED: the data stays in
    the file and the page cache; a later read maps it again)."""
    for col in columns:
        base = col
        while base is not None and not isinstance(base, np.memmap):
            base = base.base
        handle = getattr(base, "_mmap", None)
        if handle is not None and hasattr(handle, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
            try:
                handle.madvise(mmap.MADV_DONTNEED)
            except (OSError, ValueError):
                pass


class _Level:
    __slots__ = ("min_idx", "max_idx", "min_val", "max_val")

    def __init__(self, min_idx, max_idx, min_val, max_val) -> None:
        self.min_idx, self.max_idx, self.min_val, self.max_val = min_idx, max_idx, min_val, max_val


class SpilledSeries:
    """One series' columns in files, appended to; the min/max of every full block of BASE
    points kept in RAM (16 bytes a point / 1024: 160 KB for 10M points)."""

    def __init__(self, where: Path | None = None) -> None:
        self.dir = where if where is not None else _new_dir()
        self.n = 0
        # read + append: the maps are made from these handles, not from the paths, so a
        # cache folder removed while the server runs ("clean the cache") breaks nothing
        self._files = {name: open(self.dir / name, "a+b") for name in
                       ("steps.i64", "walls.f64", "values.f64")}
        self._view: tuple[int, SpilledScalars] | None = None
        self._pending = None  # the Future of this series' last queued write
        self._tail = np.empty(0)  # values after the last full block
        self._l0: list[tuple[np.ndarray, ...]] = []
        # the step at every BASE-th point, in RAM: a window's ends are found in it and then
        # in one block of the file (a binary search over the mapped steps touches a cold
        # page at nearly every probe)
        self._firsts: list[np.ndarray] = []
        self._levels: tuple[int, list[_Level]] | None = None
        self.sorted = True
        self._last_step: int | None = None
        # wall times never decreasing, as steps: None when unknown (a series restored from
        # the cache folder), found by one pass over the file the first time it is asked
        self._walls_sorted: bool | None = True
        self._last_wall: float | None = None

    def append(self, steps: np.ndarray, walls: np.ndarray, values: np.ndarray) -> None:
        k = len(steps)
        if not k:
            return
        steps = np.ascontiguousarray(steps, dtype="<i8")
        if self.sorted and (bool(np.any(steps[1:] < steps[:-1])) or (
                self._last_step is not None and int(steps[0]) < self._last_step)):
            self.sorted = False
        self._last_step = int(steps[-1])
        if self._walls_sorted:
            w = np.asarray(walls, dtype=np.float64)
            self._walls_sorted = bool(np.all(w[1:] >= w[:-1])) and (
                self._last_wall is None or bool(w[0] >= self._last_wall))
        self._last_wall = float(walls[-1])
        self._firsts.append(steps[(-self.n) % BASE::BASE].copy())
        values = np.ascontiguousarray(values, dtype="<f8")
        self._raise_failed()
        self._pending = _submit(self._write, steps, np.ascontiguousarray(walls, dtype="<f8"),
                                values)
        self._blocks(values)
        self.n += k
        _note_spilled(24 * k)

    def _blocks(self, values: np.ndarray) -> None:
        """Level 0 of the pyramid from the points being appended."""
        first = self.n - len(self._tail)  # index of the tail's first point
        pending = np.concatenate((self._tail, values)) if len(self._tail) else values
        full = len(pending) // BASE
        if full:
            lo, hi, lo_v, hi_v = block_extremes(pending[: full * BASE].reshape(full, BASE))
            base = first + np.arange(full, dtype=np.int64) * BASE
            self._l0.append((base + lo, base + hi, lo_v, hi_v))
        self._tail = pending[full * BASE:].copy()

    def _write(self, steps: np.ndarray, walls: np.ndarray, values: np.ndarray) -> None:
        # the arrays' own buffers, no copies; run on the writer thread, in order
        self._files["steps.i64"].write(steps)
        self._files["walls.f64"].write(walls)
        self._files["values.f64"].write(values)

    def _raise_failed(self) -> None:
        """Wait for the queued writes of this series; a failed one (disk full) raises here,
        as a direct write would have."""
        pending, self._pending = self._pending, None
        if pending is not None and pending.done():
            pending.result()
        elif pending is not None:
            self._pending = pending

    def _drain(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()
        for f in self._files.values():
            f.flush()

    def view(self) -> SpilledScalars:
        """Read-only memory maps of every point appended so far."""
        if self._view is not None and self._view[0] == self.n:
            return self._view[1]
        self._drain()
        cols = [np.memmap(self._files[name], dtype=dtype, mode="r", shape=(self.n,))
                if self.n else np.empty(0, dtype)
                for name, dtype in (("steps.i64", "<i8"), ("walls.f64", "<f8"),
                                    ("values.f64", "<f8"))]
        out = SpilledScalars(*(readonly(c) for c in cols))
        out.series = self
        self._view = (self.n, out)
        return out

    def levels(self) -> list[_Level]:
        """Level 0 joined, and each level above from the one below."""
        blocks = sum(len(c[0]) for c in self._l0)
        if self._levels is not None and self._levels[0] == blocks:
            return self._levels[1]
        if len(self._l0) > 1:
            self._l0 = [tuple(np.concatenate(cols) for cols in zip(*self._l0))]
        out: list[_Level] = []
        if self._l0:
            level = _Level(*self._l0[0])
            out.append(level)
            while len(level.min_idx) >= 2 * FANOUT:
                m = len(level.min_idx) // FANOUT
                rows = np.arange(m)
                lo = level.min_val[: m * FANOUT].reshape(m, FANOUT)
                hi = level.max_val[: m * FANOUT].reshape(m, FANOUT)
                lo_at = np.where(np.isnan(lo), np.inf, lo).argmin(axis=1)
                hi_at = np.where(np.isnan(hi), -np.inf, hi).argmax(axis=1)
                pick_lo = rows * FANOUT + lo_at
                pick_hi = rows * FANOUT + hi_at
                level = _Level(level.min_idx[pick_lo], level.max_idx[pick_hi],
                               level.min_val[pick_lo], level.max_val[pick_hi])
                out.append(level)
        self._levels = (blocks, out)
        return out

    def minmax_window(self, data: SpilledScalars, start: int | None, end: int | None,
                      points: int) -> tuple[np.ndarray, int]:
        """Indices of at most about ``points`` points of the step window (every point when
        it holds no more than ``points``), and the window's length."""
        n = len(data.steps)
        if self.sorted:
            i0 = 0 if start is None else self._search(data.steps, start, "left")
            i1 = n if end is None else self._search(data.steps, end, "right")
        else:  # a resumed run logged steps twice: find the window by a scan
            from visualdl.series.downsample import minmax_indices  # noqa: PLC0415

            mask = np.ones(n, dtype=bool)
            if start is not None:
                mask &= data.steps >= start
            if end is not None:
                mask &= data.steps <= end
            idx = np.flatnonzero(mask)
            return idx[minmax_indices(np.asarray(data.values[idx]), points)], len(idx)
        return self.minmax_range(data, i0, i1, points)

    def ordered(self, data: SpilledScalars, column: str) -> bool:
        """Whether a column never decreases (steps: tracked on append; wall times too,
        or found by one pass over the file, in slices whose pages are let go)."""
        if column == "steps":
            return self.sorted
        if self._walls_sorted is None:
            walls, ok, prev = data.wall_times, True, -np.inf
            for a in range(0, len(walls), 1 << 20):
                part = np.asarray(walls[a:a + (1 << 20)])
                if not (part[0] >= prev and bool(np.all(part[1:] >= part[:-1]))):
                    ok = False
                    break
                prev = part[-1]
            _release(data)
            self._walls_sorted = ok
            if ok and len(walls):
                self._last_wall = float(prev)
        return self._walls_sorted

    def minmax_range(self, data: SpilledScalars, i0: int, i1: int,
                     points: int) -> tuple[np.ndarray, int]:
        """``minmax_window`` over the points ``i0`` to ``i1 - 1``."""
        span = max(0, i1 - i0)
        if span <= points:
            return np.arange(i0, i0 + span, dtype=np.int64), span
        if span <= points * RAW_WINDOW:
            # a window too narrow for level 0 to fill the chart (a 10,000-step window is
            # 10 blocks: 22 points where 1,000 were asked): its own min/max buckets, from
            # the file (at most RAW_WINDOW x points values, let go of by ``take``)
            from visualdl.series.downsample import minmax_indices  # noqa: PLC0415

            return i0 + minmax_indices(np.asarray(data.values[i0:i1]), points), span
        budget = max(1, (points - 14) // 2)  # blocks; the two partial ends add up to 12
        chosen, size = None, BASE
        for level in self.levels():
            if (span // size) <= budget:
                chosen = level
                break
            size *= FANOUT
        if chosen is None:  # only when no level exists yet (fewer than BASE points)
            from visualdl.series.downsample import minmax_indices  # noqa: PLC0415

            return i0 + minmax_indices(np.asarray(data.values[i0:i1]), points), span
        b0 = -(-i0 // size)  # first block wholly inside
        b1 = min(i1 // size, len(chosen.min_idx))  # end of the last block wholly inside
        parts = [np.array([i0, i1 - 1], dtype=np.int64)]
        if b1 > b0:
            parts += [chosen.min_idx[b0:b1], chosen.max_idx[b0:b1]]
            edges = ((i0, b0 * size), (b1 * size, i1))
        else:
            edges = ((i0, i1),)
        for lo, hi in edges:
            parts += self._extremes(data.values, lo, hi)
        picked = np.unique(np.concatenate(parts))
        return picked, span

    def block_firsts(self) -> np.ndarray:
        """The step of every BASE-th point."""
        if len(self._firsts) > 1:
            self._firsts = [np.concatenate(self._firsts)]
        return self._firsts[0] if self._firsts else np.empty(0, np.int64)

    def _search(self, steps: np.ndarray, x: int, side: str) -> int:
        """``np.searchsorted(steps, x, side)`` from the in-RAM block steps and one block of
        the file."""
        b = int(np.searchsorted(self.block_firsts(), x, side))
        if b == 0:
            return 0
        lo = (b - 1) * BASE
        seg = np.asarray(steps[lo:min(len(steps), b * BASE)])
        return lo + int(np.searchsorted(seg, x, side))

    def _extremes(self, values: np.ndarray, lo: int, hi: int) -> list[np.ndarray]:
        """Indices of the minimum and maximum of ``values[lo:hi]``: whole level-0 blocks from
        the pyramid, only the partial blocks at both ends read from the file (at most
        2 x BASE values; a coarse level's partial block can span hundreds of pages)."""
        if hi <= lo:
            return []
        out = []
        c0, c1 = -(-lo // BASE), hi // BASE
        l0 = self.level0()
        if c1 > c0 and c1 <= len(l0[0]):
            lo_v = np.where(np.isnan(l0[2][c0:c1]), np.inf, l0[2][c0:c1])
            hi_v = np.where(np.isnan(l0[3][c0:c1]), -np.inf, l0[3][c0:c1])
            out.append(np.array([l0[0][c0 + int(lo_v.argmin())], l0[1][c0 + int(hi_v.argmax())]]))
            raw = ((lo, c0 * BASE), (c1 * BASE, hi))
        else:
            raw = ((lo, hi),)
        for a, b in raw:
            if b > a:
                vals = np.asarray(values[a:b])
                nan = np.isnan(vals)
                out.append(np.array([a + np.where(nan, np.inf, vals).argmin(),
                                     a + np.where(nan, -np.inf, vals).argmax()]))
        return out

    def close(self) -> None:
        self._drain()
        for f in self._files.values():
            f.close()

    # -- kept across restarts (see visualdl.reader.scalar_persist) -----------------------
    @classmethod
    def attach(cls, where: Path, n: int, l0: tuple[np.ndarray, ...], firsts: np.ndarray,
               sorted_: bool, last_step: int | None) -> "SpilledSeries":
        """The series a previous process left in ``where``: its files cut to ``n`` points
        (anything after was appended past the saved offset and is read again) and its
        level 0 as saved; the points after the last full block are read back."""
        for name in ("steps.i64", "walls.f64", "values.f64"):
            path = where / name
            if path.stat().st_size < 8 * n:
                raise ValueError(f"{path}: shorter than {n} points")
            os.truncate(path, 8 * n)
        out = cls(where)
        out.n = n
        out.sorted = sorted_
        out._last_step = last_step
        out._walls_sorted = None  # not saved: found when first asked
        out._last_wall = None
        if len(firsts) != -(-n // BASE):
            raise ValueError(f"{where}: {len(firsts)} block steps for {n} points")
        if len(l0[0]):
            out._l0 = [tuple(np.asarray(c) for c in l0)]
        out._firsts = [np.asarray(firsts, dtype=np.int64)]
        full = n // BASE
        tail = out.view().values[full * BASE:]
        out._tail = np.array(tail)
        return out

    def level0(self) -> tuple[np.ndarray, ...]:
        """Level 0 of the pyramid (min index, max index, min value, max value per block)."""
        if len(self._l0) > 1:
            self._l0 = [tuple(np.concatenate(cols) for cols in zip(*self._l0))]
        if not self._l0:
            return (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0), np.empty(0))
        return self._l0[0]

    def move_to(self, where: Path) -> None:
        """Move the series' folder (same file system: open handles and maps stay valid)."""
        self._drain()
        os.rename(self.dir, where)
        self.dir = where

    def flush(self) -> None:
        self._drain()

    def flushed(self) -> list[int]:
        """The column files' descriptors, their buffers flushed: to be synced to the disk by
        a commit (on the writer thread, after the writes queued before it)."""
        out = []
        for f in self._files.values():
            f.flush()
            out.append(f.fileno())
        return out

    @property
    def last_step(self) -> int | None:
        return self._last_step
