"""The scalar disk cache kept across restarts: a record file's long series are mapped again
instead of decoded again, and kept up to date by appending, never by rewriting.

Decoding 200M points from the records takes the first start tens of seconds; the series
it spilled (see :mod:`visualdl.reader.scalar_cache`) are already on disk. So once a local
record file (ours, a TensorBoard event file, a VisualDL 2.x file) holding at least one
spilled series is read, its cache folder (``<cache root>/persist/<hash of the file's real
path>/``) holds:

- one folder per series: the spilled series' own folders, moved there (``steps.i64``,
  ``walls.f64``, ``values.f64``, appended to by the writer thread), with their level 0 of
  the pyramid and the step of every 1,024th point in append-only files (``lo_i.i64``,
  ``hi_i.i64``, ``lo_v.f64``, ``hi_v.f64``, ``firsts.i64``); the file's short series as
  the same three column files;
- ``others.i64``: the offsets of the records that held anything but scalars (append-only);
- ``manifest.json``: the offset read up to, the file's identity there (size, ``mtime_ns``,
  device and inode, a hash of its first 4 KiB and of the 4 KiB before the offset), its
  header (and the state of a TensorBoard or VisualDL 2.x file's decoder), and for every file in the folder how many
  items of it are valid, with a hash of its last 4 KiB of them.

A reload that adds k points to a series writes O(k) bytes: the points (appended by the
writer thread as they are read), the new level-0 rows and block steps, and a manifest of
O(tags) bytes. The commit (append the small files, ``fdatasync`` everything written since
the last commit, write the manifest to a temporary name, ``fsync`` it, rename it over the
old one, ``fsync`` the folder) runs on the writer thread after the writes it describes, so
the reader never waits for the disk. A crash at any point leaves either the old manifest,
whose counts are a prefix of every file (anything after is cut off at the next start), or
the new one, whose data reached the disk first.

On the next start the reader checks all of it against the file before reading: same inode,
not shorter, same bytes at both ends of the cached part (and, when not grown, the same
``mtime_ns``); every cache file at least as long as counted, its last counted bytes as
hashed, the series' values agreeing with their level 0 at a few blocks. Then the series are
mapped, the non-scalar records re-read by offset (images, texts, hparams: a few records,
their bytes stay in the file), and the file read on from the stored offset. Anything that
does not check out (a corrupt, truncated or stale cache, a manifest of another format, a
file replaced, shrunk or rewritten) drops the folder and reads the file from its start: the
cache is never trusted over the records.

A lock file (``flock``) makes one process the owner of a file's folder; another server on
the same cache folder reads that file itself, into a private folder, as without a cache.
Removing the cache folder at any time is safe: the next start rebuilds it. Folders of
record files that no longer exist, and private folders of servers that are gone, are
removed at the first use of the cache root in a process (:func:`prune`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from visualdl.format.names import segment_key
from visualdl.format.record_pb2 import FileHeader
from visualdl.reader import scalar_cache
from visualdl.storage import cache_folder

try:
    import fcntl
except ImportError:  # Windows: no lock, no reuse
    fcntl = None  # type: ignore[assignment]

__all__ = ["FileCache", "restore", "save", "may_restore", "others_of", "eligible", "stats",
           "prune"]

# 4: event files' experiments (hparams_config) became entries of their own; a cache of
# format 3 does not list them among the file's other records.
FORMAT = 4
MANIFEST = "manifest.json"
OTHERS = "others.i64"
COLUMNS = ("steps.i64", "walls.f64", "values.f64")
LEVEL0 = ("lo_i.i64", "hi_i.i64", "lo_v.f64", "hi_v.f64")
FIRSTS = "firsts.i64"
_SPAN = 4096
#: what the last restores did, for tests and benches: files restored, records skipped,
#: caches rejected, commits written and the bytes they appended
stats = {"restored": 0, "skipped_records": 0, "skipped_bytes": 0, "rejected": 0,
         "commits": 0, "commit_bytes": 0}


def _dtype(name: str) -> str:
    return "<i8" if name.endswith(".i64") else "<f8"


@dataclass
class _Saved:
    """What a series' folder holds (as queued to the writer thread): points in its column
    files, rows of its level-0 files and of its block steps."""

    dir: str
    spilled: bool
    n: int = 0
    blocks: int = 0
    firsts: int = 0


class FileCache:
    """One record file's persistent folder, owned (locked) by this process."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.dir: Path | None = None
        self.saved = -1  # the offset of the last commit queued
        self.gen = 0
        self.series: dict[str, _Saved] = {}
        self.others: list[int] = []
        self.others_saved = 0
        # why the last commit failed, reported at the next save (the writer thread's commit
        # holds this, not the cache: the lock goes with the reader, not with the thread)
        self.failed: dict[str, str] = {}
        self.off = not cache_folder.persist_enabled() or fcntl is None
        self._lock_file: Any = None
        key = hashlib.sha256(os.path.realpath(path).encode()).hexdigest()[:32]
        self.where = cache_folder.cache_root() / "persist" / key

    def acquire(self, create: bool) -> bool:
        """Own the folder (made when ``create``; a small logdir never makes one). False
        when another process owns it: this one then keeps nothing for this file."""
        if self.dir is not None:
            return True
        if self.off or not (create or self.where.is_dir()):
            return False
        try:
            self.where.mkdir(parents=True, exist_ok=True)
            lock = open(self.where / "lock", "a+b")
        except OSError:
            self.off = True
            return False
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another server owns it
            lock.close()
            self.off = True
            return False
        self._lock_file = lock
        self.dir = self.where
        return True

    @property
    def usable(self) -> bool:
        return self.dir is not None

    def disable(self) -> None:
        self.dir = None
        self.off = True

    def reset(self) -> None:
        """Drop everything but the lock (a cache that did not check out)."""
        if self.dir is None:
            return
        for child in self.dir.iterdir():
            if child.name == "lock":
                continue
            with contextlib.suppress(OSError):
                if child.is_dir():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        self.saved = -1
        self.series = {}
        self.others_saved = 0

    def new_dir(self) -> str:
        self.gen += 1
        return f"series-{self.gen}"


def eligible(state: Any) -> bool:
    """Local files of a source that lets its series be cached (ours, TensorBoard event
    files, VisualDL 2.x files), segment streams excepted."""
    return (state.file.local and state.reader is not None and state.reader.source.cacheable
            and segment_key(state.path) is None)


def may_restore() -> bool:
    """Whether any record file may have a persisted cache: one, or a commit of this
    process still on its way to the disk (a reader started right after another)."""
    if not cache_folder.persist_enabled():
        return False
    return bool(_commits) or (cache_folder.cache_root() / "persist").is_dir()


def others_of(state: Any) -> list[int] | None:
    """Where a file's records holding more than scalars are noted (re-read by offset on
    restore): its cache's list, or, while the file has no cache (none is made before a
    series spills), the file's own, which becomes the cache's when one is made; None when
    the cache is off."""
    cache = state.cache
    if cache is None:
        return state.others
    return None if cache.off else cache.others


# -- identity ----------------------------------------------------------------------------------
def _digest(f: Any, start: int, end: int) -> str:
    f.seek(start)
    return hashlib.blake2b(f.read(max(0, end - start)), digest_size=16).hexdigest()


def _identity(f: Any, offset: int) -> dict:
    st = os.fstat(f.fileno())
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "dev": st.st_dev, "ino": st.st_ino,
            "head": _digest(f, 0, min(_SPAN, offset)),
            "tail": _digest(f, max(0, offset - _SPAN), offset)}


def _still_same(saved: dict, f: Any, offset: int) -> bool:
    st = os.fstat(f.fileno())
    if (st.st_dev, st.st_ino) != (saved["dev"], saved["ino"]) or st.st_size < offset:
        return False
    if st.st_size == saved["size"] and st.st_mtime_ns != saved["mtime_ns"]:
        return False  # rewritten in place, same length
    if st.st_size < saved["size"]:
        return False  # shrunk (then perhaps grown again)
    now = _identity(f, offset)
    return now["head"] == saved["head"] and now["tail"] == saved["tail"]


def _tail_hash(path: Path, nbytes: int) -> str:
    with open(path, "rb") as f:
        return _digest(f, max(0, nbytes - _SPAN), nbytes)


def _counted(path: Path, items: int, tail: str) -> None:
    """Cut a cache file to ``items`` 8-byte items (what a commit that did not finish
    appended goes), after checking that it holds them and ends as hashed."""
    nbytes = 8 * items
    size = path.stat().st_size
    if size < nbytes:
        raise ValueError(f"{path.name}: {size} bytes, {nbytes} counted")
    if _tail_hash(path, nbytes) != tail:
        raise ValueError(f"{path.name}: not the bytes counted")
    if size > nbytes:
        os.truncate(path, nbytes)


# -- restore -----------------------------------------------------------------------------------
def restore(reader: Any, state: Any) -> bool:
    """Before a file is first read: take its cached series and offset, if they check out.
    False when a cache was there and did not (the file's source reader may have been told
    part of it: the caller starts a fresh one)."""
    state.cache = cache = FileCache(state.path)
    if not eligible(state):
        cache.off = True
        return True
    if cache.off:  # --no-cache: nothing kept, nothing looked at
        return True
    prune()
    pending = _commits.get(cache.where)
    if pending is not None:  # an earlier reader's commit in this process comes first
        with contextlib.suppress(Exception):
            pending.result()
    if not cache.acquire(create=False):
        return True
    try:
        with open(state.path, "rb") as f:
            loaded = _load(cache, state, f)
    except Exception as exc:  # noqa: BLE001 - whatever is wrong with a cache, it is dropped
        loaded = None
        reason = f"{type(exc).__name__}: {exc}"
    else:
        reason = "stale"
    if loaded is None:
        rejected = (cache.dir / MANIFEST).exists()  # type: ignore[operator]
        if rejected:
            stats["rejected"] += 1
            reader._error(f"{state.path}: scalar cache ignored and rebuilt ({reason})")
        cache.reset()
        return not rejected
    manifest, series, events = loaded
    with reader._lock:
        store = reader._store_for(state.run)
        for tag, spilled, columns in series:
            store.restore_series(tag, state.file_id, spilled=spilled, columns=columns)
        for offset, entry in events:
            store.add_entry(entry, state.file_id, state.path, offset, state.source)
        state.reader.restore(int(manifest["offset"]),
                             FileHeader.FromString(bytes.fromhex(manifest["header"])),
                             manifest["decoder"]["state"])
        state.records = manifest["records"]
        reader.version += 1
    cache.saved = manifest["offset"]
    cache.gen = manifest["gen"]
    stats["restored"] += 1
    stats["skipped_records"] += manifest["records"]
    stats["skipped_bytes"] += manifest["offset"]
    return True


def _load(cache: FileCache, state: Any, f: Any):  # noqa: ANN202 - see restore
    where = cache.dir
    assert where is not None
    try:
        manifest = json.loads((where / MANIFEST).read_text())
    except FileNotFoundError:
        return None
    if manifest.get("format") != FORMAT or manifest.get("source") != os.path.realpath(state.path):
        return None
    if (manifest.get("decoder") or {}).get("source") != state.source:
        return None
    offset = int(manifest["offset"])
    if not _still_same(manifest["identity"], f, offset):
        return None
    saved: dict[str, _Saved] = {}
    series = []
    for item in manifest["series"]:
        folder = where / item["dir"]
        n, tails = int(item["n"]), item["tails"]
        for name in COLUMNS:
            _counted(folder / name, n, tails[name])
        record = _Saved(item["dir"], bool(item["spilled"]), n)
        if item["spilled"]:
            blocks, firsts_n = int(item["blocks"]), -(-n // scalar_cache.BASE)
            if blocks != n // scalar_cache.BASE:
                return None
            for name in LEVEL0:
                _counted(folder / name, blocks, tails[name])
            _counted(folder / FIRSTS, firsts_n, tails[FIRSTS])
            l0 = tuple(np.fromfile(folder / name, _dtype(name), blocks) for name in LEVEL0)
            firsts = np.fromfile(folder / FIRSTS, "<i8", firsts_n)
            spilled = scalar_cache.SpilledSeries.attach(folder, n, l0, firsts,
                                                        bool(item["sorted"]), item["last"])
            if not _agrees(spilled, l0, item["last"]):
                return None
            record.blocks, record.firsts = blocks, firsts_n
            series.append((item["tag"], spilled, None))
        else:
            cols = tuple(np.fromfile(folder / name, _dtype(name), n) for name in COLUMNS)
            series.append((item["tag"], None, cols))
        saved[item["tag"]] = record
    n_others = int(manifest["others"])
    _counted(where / OTHERS, n_others, manifest["others_tail"])
    others = np.fromfile(where / OTHERS, "<i8", n_others).tolist() if n_others else []
    events = state.reader.entries_at(state.file, others)
    cache.series, cache.others, cache.others_saved = saved, others, n_others
    return manifest, series, events


def _agrees(spilled: scalar_cache.SpilledSeries, l0: tuple, last: Any) -> bool:
    """Spot checks of a series' files against its level 0 and last step (a full check would
    read every page: 240 MB for 10M points)."""
    data = spilled.view()
    if spilled.n and last is not None and int(data.steps[-1]) != int(last):
        return False
    blocks = len(l0[0])
    picks = sorted({0, blocks // 3, blocks // 2, 2 * blocks // 3, blocks - 1}) if blocks else []
    for b in picks:
        block = np.asarray(data.values[b * scalar_cache.BASE:(b + 1) * scalar_cache.BASE])
        got = scalar_cache.block_extremes(block.reshape(1, -1))
        want = (l0[0][b] - b * scalar_cache.BASE, l0[1][b] - b * scalar_cache.BASE,
                l0[2][b], l0[3][b])
        if not all(np.array_equal(g, [w], equal_nan=True) for g, w in zip(got, want)):
            return False
    scalar_cache._release(data)
    return True


# -- save --------------------------------------------------------------------------------------
def save(reader: Any, state: Any) -> None:
    """After a file was read: queue the commit of what its cache now covers (when it has a
    long series and nothing about it is in doubt)."""
    cache = state.cache
    if cache is None or cache.off or not eligible(state):
        return
    if cache.failed:  # the last commit failed (the cache folder removed, the disk full)
        reader._error(f"{state.path}: scalar cache not kept: {cache.failed['why']}")
        cache.disable()
        return
    if state.refused or state.errors or state.header is None or state.offset == cache.saved:
        return
    try:
        _save(reader, state, cache)
    except (OSError, TypeError) as exc:  # the folder removed or full; hparams JSON lacks
        cache.disable()
        reader._error(f"{state.path}: scalar cache not kept: {exc}")


def _save(reader: Any, state: Any, cache: FileCache) -> None:
    with reader._lock:
        store = reader._runs.get(state.run)
        found = store.file_series(state.file_id) if store is not None else {}
        if not any(s.spilled is not None for s in found.values()):
            return
        if cache.dir is None:
            if not cache.acquire(create=True):
                return
            cache.reset()  # what another process left there: this one's data is newer
        where = cache.dir
        items, writes, syncs, dropped = [], [], [], []
        for tag, series in sorted(found.items()):
            old = cache.series.get(tag)
            if series.spilled is not None:
                sp = series.spilled
                if sp.dir.parent != where:
                    sp.move_to(where / cache.new_dir())
                if old is None or old.dir != sp.dir.name:
                    if old is not None:
                        dropped.append(old.dir)  # a short series that spilled since
                    old = _Saved(sp.dir.name, True)
                now = _Saved(old.dir, True, sp.n, len(sp.level0()[0]), len(sp.block_firsts()))
                folder = where / now.dir
                writes += [(folder / name, col[old.blocks:now.blocks])
                           for name, col in zip(LEVEL0, sp.level0())]
                writes.append((folder / FIRSTS, sp.block_firsts()[old.firsts:now.firsts]))
                if now.n != old.n:
                    syncs.append(sp)
            else:
                if old is None:
                    old = _Saved(cache.new_dir(), False)
                now = _Saved(old.dir, False, series.n)
                folder = where / now.dir
                writes += [(folder / name, np.asarray(col[old.n:now.n]))
                           for name, col in zip(COLUMNS, series.view())]
            order = (series.spilled.sorted, series.spilled.last_step) if now.spilled else None
            items.append((tag, now, order))
            cache.series[tag] = now
        writes.append((where / OTHERS, np.asarray(cache.others[cache.others_saved:], np.int64)))
        cache.others_saved = len(cache.others)
        manifest = {"format": FORMAT, "source": os.path.realpath(state.path), "run": state.run,
                    "offset": state.offset, "records": state.records,
                    "header": state.header.SerializeToString().hex(),
                    "decoder": _decoder_state(state.reader), "others": cache.others_saved,
                    "gen": cache.gen}
    with open(state.path, "rb") as f:
        manifest["identity"] = _identity(f, state.offset)
    cache.saved = state.offset
    _commits[where] = scalar_cache.submit(_commit, cache.failed, where, manifest, items,
                                          writes, syncs, dropped)


def _decoder_state(source_file: Any) -> dict:
    """What the file's source reader remembers from the records before the offset (a
    TensorBoard tag's plugin comes with its first value only; VisualDL's ``add_scalars``
    chart keys so far): a copy (the commit is written on the writer thread while the
    reader goes on); what JSON does not hold is refused here (TypeError: the file is not
    cached)."""
    out = {"source": source_file.source.name, "state": source_file.cache_state()}
    return json.loads(json.dumps(out))


def _commit(failed: dict, where: Path, manifest: dict, items: list, writes: list,
            syncs: list, dropped: list) -> None:
    """On the writer thread, after the writes the manifest counts: append, sync, then
    replace the manifest. A failure leaves the last manifest, which still holds."""
    handles = []
    try:
        written = 0
        for path, array in writes:
            if not len(array) and path.exists():
                continue  # not grown: not touched
            path.parent.mkdir(exist_ok=True)
            fh = open(path, "ab")
            handles.append(fh)
            fh.write(np.ascontiguousarray(array, _dtype(path.name)))
            fh.flush()
            written += array.nbytes
        scalar_cache.sync_all([fh.fileno() for fh in handles] +
                              [fd for sp in syncs for fd in sp.flushed()])
        series = []
        for tag, now, order in items:
            folder = where / now.dir
            counts = {name: now.n for name in COLUMNS}
            if now.spilled:
                counts.update({name: now.blocks for name in LEVEL0}, **{FIRSTS: now.firsts})
            tails = {name: _tail_hash(folder / name, 8 * count) for name, count in counts.items()}
            entry = {"tag": tag, "dir": now.dir, "spilled": now.spilled, "n": now.n,
                     "tails": tails}
            if now.spilled:
                entry.update(blocks=now.blocks, sorted=order[0], last=order[1])
            series.append(entry)
        manifest.update(series=series,
                        others_tail=_tail_hash(where / OTHERS, 8 * manifest["others"]))
        written += _atomic(where / MANIFEST, json.dumps(manifest).encode())
        for name in dropped:
            shutil.rmtree(where / name, ignore_errors=True)
        stats["commits"] += 1
        stats["commit_bytes"] += written
    except (OSError, ValueError) as exc:
        failed["why"] = f"{type(exc).__name__}: {exc}"
    finally:
        for fh in handles:
            fh.close()


def _atomic(path: Path, data: bytes) -> int:
    """Write ``data`` to a temporary file, sync it, rename it over ``path``, sync the
    folder: a crash leaves the old file or the new one, whole."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself, on file systems that allow it
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return len(data)


#: each folder's last commit queued by this process (a restart in the same process waits
#: for it; other folders' reads do not wait for a sync of this one)
_commits: dict[Path, Any] = {}


# -- eviction ----------------------------------------------------------------------------------
_pruned: set[Path] = set()
_prune_lock = threading.Lock()


def prune() -> None:
    """Once per cache root and process: remove the folders of record files that no longer
    exist (a deleted run) and the private folders of servers that are gone (killed before
    their exit could remove them). A folder another process holds is left alone."""
    root = cache_folder.cache_root()
    with _prune_lock:
        if root in _pruned or fcntl is None:
            return
        _pruned.add(root)
    with contextlib.suppress(OSError):
        for folder in (root / "persist").iterdir():
            _prune_persisted(folder)
    with contextlib.suppress(OSError):
        for folder in root.glob("scalars-*-*"):
            pid = folder.name.split("-")[1]
            if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
                shutil.rmtree(folder, ignore_errors=True)


def _prune_persisted(folder: Path) -> None:
    """Remove a folder whose record file is gone, or that never got a manifest (a server
    stopped before its first commit), unless its owner is at work in it."""
    try:
        source = json.loads((folder / MANIFEST).read_text()).get("source")
    except FileNotFoundError:
        source = None
    except (OSError, ValueError, AttributeError):
        return  # not ours to judge
    if isinstance(source, str) and os.path.exists(source):
        return
    try:
        lock = open(folder / "lock", "a+b")
    except OSError:
        return
    with lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # in use
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True
