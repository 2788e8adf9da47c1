"""The scalar disk cache kept across restarts: a record file's long series are mapped again
instead of decoded again.

Decoding 200M points from the records takes the first start tens of seconds; the series
it spilled (see :mod:`visualdl.reader.scalar_cache`) are already on disk. So once a local
visualdl record file holding at least one spilled series is read, its cache folder
(``<cache root>/persist/<hash of the file's real path>/``) gets:

- the spilled series' folders, moved there (append-only column files),
- ``arrays-<gen>.npz``: every series' level 0 of the pyramid and the file's short series
  (a file's series are cached all together, or the file is read again),
- ``manifest.json`` (written to a temporary name, then renamed): the offset read up to,
  the file's identity there (size, ``mtime_ns``, device and inode, a hash of its first
  4 KiB and of the 4 KiB before the offset), its header, how many points each series had
  at that offset, and the offsets of the records that held anything but scalars.

On the next start the reader checks all of it against the file before reading: same inode,
not shorter, same bytes at both ends of the cached part (and, when not grown, the same
``mtime_ns``); the series' files are long enough and agree with their level 0 at a few
blocks. Then the series are mapped, the non-scalar records re-read by offset (images,
texts, hparams: a few records, their bytes stay in the file), and the file read on from the
stored offset. Anything that does not check out (a corrupt, truncated or stale cache, a
file replaced, shrunk or rewritten) drops the folder and reads the file from its start:
the cache is never trusted over the records.

A lock file (``flock``) makes one process the owner of a file's folder; another server on
the same cache folder reads that file itself, into a private folder, as without a cache.
Removing the cache folder at any time is safe: the next start rebuilds it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from visualdl.format.framing import read_record_at
from visualdl.format.record_pb2 import FileHeader, Record
from visualdl.reader import scalar_cache
from visualdl.sources import vdl2
from visualdl.writer.segments import segment_key

try:
    import fcntl
except ImportError:  # Windows: no lock, no reuse
    fcntl = None  # type: ignore[assignment]

__all__ = ["FileCache", "restore", "save", "note_record", "stats"]

FORMAT = 1
MANIFEST = "manifest.json"
_SPAN = 4096
#: what the last restores did, for tests and benches: files restored, records skipped
stats = {"restored": 0, "skipped_records": 0, "skipped_bytes": 0, "rejected": 0}


class FileCache:
    """One record file's persistent folder, owned (locked) by this process."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.dir: Path | None = None
        self.saved = -1  # the offset of the manifest on disk
        self.gen = 0
        self.arrays: str = ""
        self.others: list[int] = []
        self.off = not scalar_cache.persist_enabled() or fcntl is None
        self._lock_file: Any = None
        key = hashlib.sha256(os.path.realpath(path).encode()).hexdigest()[:32]
        self.where = scalar_cache.cache_root() / "persist" / key

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


def eligible(state: Any) -> bool:
    """Local visualdl record files only (event files, VisualDL 2.x files, traces and
    segment streams are read as before)."""
    return (state.remote is None and state.decoder is None and not state.torch_trace
            and segment_key(state.path) is None)


def note_record(state: Any, offset: int, record: Record) -> None:
    """Remember a record holding anything but scalars: it is re-read on restore."""
    cache = state.cache
    if cache is None or cache.off:
        return
    if any(e.WhichOneof("kind") not in ("scalars", None) for e in record.entries):
        cache.others.append(offset)


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


# -- restore -----------------------------------------------------------------------------------
def restore(reader: Any, state: Any, f: Any) -> None:
    """Before a file is first read: take its cached series and offset, if they check out."""
    state.cache = cache = FileCache(state.path)
    if not eligible(state):
        cache.off = True
        return
    if not cache.acquire(create=False):
        return
    try:
        loaded = _load(cache, state, f)
    except Exception as exc:  # noqa: BLE001 - whatever is wrong with a cache, it is dropped
        loaded = None
        reason = f"{type(exc).__name__}: {exc}"
    else:
        reason = "stale"
    if loaded is None:
        if (cache.dir / MANIFEST).exists():  # type: ignore[operator]
            stats["rejected"] += 1
            reader._error(f"{state.path}: scalar cache ignored and rebuilt ({reason})")
        cache.reset()
        return
    manifest, series, events = loaded
    with reader._lock:
        store = reader._store_for(state.run)
        for tag, spilled, columns in series:
            store.restore_series(tag, state.file_id, spilled=spilled, columns=columns)
        for offset, entry in events:
            store.add_entry(entry, state.file_id, state.path, offset)
        state.offset = manifest["offset"]
        state.header = FileHeader.FromString(bytes.fromhex(manifest["header"]))
        state.records = manifest["records"]
        reader.version += 1
    cache.saved = manifest["offset"]
    cache.gen = manifest["gen"]
    cache.arrays = manifest["arrays"]
    cache.others = list(manifest["others"])
    stats["restored"] += 1
    stats["skipped_records"] += manifest["records"]
    stats["skipped_bytes"] += manifest["offset"]


def _load(cache: FileCache, state: Any, f: Any):  # noqa: ANN202 - see restore
    where = cache.dir
    assert where is not None
    try:
        manifest = json.loads((where / MANIFEST).read_text())
    except FileNotFoundError:
        return None
    if manifest.get("format") != FORMAT or manifest.get("source") != os.path.realpath(state.path):
        return None
    offset = int(manifest["offset"])
    if not _still_same(manifest["identity"], f, offset):
        return None
    with np.load(where / manifest["arrays"], allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    series = []
    for i, item in enumerate(manifest["series"]):
        n = int(item["n"])
        if item["spilled"]:
            l0 = tuple(arrays[f"{i}_{c}"] for c in ("lo_i", "hi_i", "lo_v", "hi_v"))
            if any(len(c) != n // scalar_cache.BASE for c in l0):
                return None
            spilled = scalar_cache.SpilledSeries.attach(
                where / item["dir"], n, l0, arrays[f"{i}_f"], bool(item["sorted"]),
                item["last"])
            if not _agrees(spilled, l0, item["last"]):
                return None
            series.append((item["tag"], spilled, None))
        else:
            cols = tuple(arrays[f"{i}_{c}"] for c in ("s", "w", "v"))
            if any(len(c) != n for c in cols):
                return None
            series.append((item["tag"], None, cols))
    events = []
    for off in manifest["others"]:
        record = Record.FromString(read_record_at(state.path, off))
        events += [(off, e) for e in record.entries if e.WhichOneof("kind") not in ("scalars", None)]
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
        lo_i, hi_i = int(l0[0][b]), int(l0[1][b])
        got = np.asarray(data.values[[lo_i, hi_i]])
        want = np.array([l0[2][b], l0[3][b]])
        if not np.array_equal(got, want, equal_nan=True):
            return False
        block = np.asarray(data.values[b * scalar_cache.BASE:(b + 1) * scalar_cache.BASE])
        if not np.array_equal(np.array([np.nanmin(block) if not np.all(np.isnan(block)) else np.nan,
                                        np.nanmax(block) if not np.all(np.isnan(block)) else np.nan]),
                              want, equal_nan=True):
            return False
    scalar_cache._release(data)
    return True


# -- save --------------------------------------------------------------------------------------
def save(reader: Any, state: Any) -> None:
    """After a file was read: record what its cache now covers (when it has a long series
    and nothing about it is in doubt)."""
    cache = state.cache
    if cache is None or cache.off or not eligible(state) or vdl2.is_vdl2(state):
        return
    if state.refused or state.errors or state.header is None or state.offset == cache.saved:
        return
    try:
        _save(reader, state, cache)
    except OSError as exc:  # the cache folder removed or full: go on without it
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
        offset, records, header = state.offset, state.records, state.header
        items, arrays = [], {}
        for i, (tag, series) in enumerate(sorted(found.items())):
            if series.spilled is not None:
                sp = series.spilled
                if sp.dir.parent != where:
                    sp.move_to(where / f"series-{cache.gen}-{i}")
                sp.flush()
                for c, col in zip(("lo_i", "hi_i", "lo_v", "hi_v"), sp.level0()):
                    arrays[f"{i}_{c}"] = col
                arrays[f"{i}_f"] = sp.block_firsts()
                items.append({"tag": tag, "spilled": True, "dir": sp.dir.name, "n": sp.n,
                              "sorted": sp.sorted, "last": sp.last_step})
            else:
                view = series.view()
                for c, col in zip(("s", "w", "v"), view):
                    arrays[f"{i}_{c}"] = np.asarray(col)
                items.append({"tag": tag, "spilled": False, "n": series.n})
    with open(state.path, "rb") as f:
        identity = _identity(f, offset)
    cache.gen += 1
    name = f"arrays-{cache.gen}.npz"
    _atomic(where / name, lambda fh: np.savez(fh, **arrays))
    manifest = {"format": FORMAT, "source": os.path.realpath(state.path), "run": state.run,
                "offset": offset, "records": records, "header": header.SerializeToString().hex(),
                "identity": identity, "others": cache.others, "series": items, "arrays": name,
                "gen": cache.gen}
    _atomic(where / MANIFEST, lambda fh: fh.write(json.dumps(manifest).encode()))
    if cache.arrays and cache.arrays != name:
        with contextlib.suppress(OSError):
            (where / cache.arrays).unlink()
    cache.arrays, cache.saved = name, offset


def _atomic(path: Path, write) -> None:  # noqa: ANN001 - a function of a binary file
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
