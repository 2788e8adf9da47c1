"""Built trace models kept on disk, so that a restarted server shows a big trace at once.

Parsing a trace of a million events and building its model takes seconds; reading the
model back is memory-mapping a few ``.npy`` files (milliseconds). A model is saved once it
is built (on a background thread, so no request waits for the write) under the user's cache
folder, the scalar cache's (``visualdl --cache-dir``, ``$VISUALDL_CACHE_DIR``,
``$XDG_CACHE_HOME/visualdl`` or ``~/.cache/visualdl``), in ``profiles/<key>/``; nothing is
written beside the user's traces, so a read-only logdir works the same. ``--no-cache``
(``VISUALDL_NO_CACHE=1``) turns it off.

A saved model is never trusted over the trace: it is keyed by what identifies the trace's
bytes, checked when it is read. A PyTorch trace file by its path, size, modification time
and inode (such files are written once, then left alone); a profile in a record file by a
hash of its stored (gzip'd) bytes, which are read anyway and are small next to the JSON.
Small traces (they parse in milliseconds) are not saved. The models of traces that no
longer exist are removed (:func:`prune`, after each save).
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from visualdl.kinds.profile.model import TraceModel
from visualdl.storage import cache_folder

__all__ = ["Source", "source", "identity", "saved", "read", "begin", "args_file", "columns_in",
           "read_folder", "save",
           "save_later", "write_folder", "folder_for", "write_overview", "overview",
           "prune", "MIN_EVENTS", "FORMAT"]

#: Bumped whenever what a saved model holds, or how it is built, changes.
FORMAT = 1
#: Traces with fewer events than this are parsed again instead (cheaper than the files).
MIN_EVENTS = int(os.environ.get("VISUALDL_PROFILE_CACHE_EVENTS") or 100_000)
_INFO, _ARGS, _OVERVIEW = "model.json", "args.bin", "overview.json"
_writing: set[str] = set()
_lock = threading.Lock()


def _root() -> Path | None:
    if not cache_folder.persist_enabled():
        return None
    return cache_folder.cache_root() / "profiles"


def identity(path: str, offset: int, tag: str, step: int,
             blob: Callable[[], Any] | None = None) -> dict[str, Any] | None:
    """What the saved model of this profile must match: the trace file's stat for a file
    of its own (``blob`` None), else a hash of the stored blob's bytes (``blob()`` returns
    them). None when the file cannot be looked at (then nothing is read or saved)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    ident: dict[str, Any] = {"format": FORMAT, "path": os.path.abspath(path),
                             "offset": int(offset), "tag": str(tag), "step": int(step)}
    if blob is None:
        ident.update(size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino)
    else:
        ident["blake2b"] = hashlib.blake2b(blob(), digest_size=20).hexdigest()
    return ident


@dataclass(frozen=True)
class Source:
    """Where a profile's trace is, and what its saved model must match."""

    ident: dict[str, Any] | None
    path: str | None      # a trace file of its own (PyTorch's, or ``.vf.trace.json``)...
    blob: Any = None      # ...or the profile loaded from a record file
    kind: str = "pytorch"  # the model's source: "pytorch" or "visualdl"

    @property
    def stored(self) -> bytes | None:
        """The record's gzip'd trace (None for a trace file)."""
        return None if self.blob is None else self.blob.trace_gz


def source(ref: Any, load_blob: Callable[[Any], Any]) -> Source:
    """The :class:`Source` of a profile ``BlobRef``: a trace file stays where it is (keyed by
    its stat); a profile in a record file is loaded with ``load_blob(ref)`` (its stored
    bytes are small: keyed by their hash)."""
    if ref.source == "torchtrace":
        return Source(identity(ref.path, ref.offset, ref.tag, ref.step), ref.path)
    blob = load_blob(ref)
    return Source(identity(ref.path, ref.offset, ref.tag, ref.step, blob=lambda: blob.trace_gz),
                  None, blob, "visualdl")


def _folder(ident: dict[str, Any]) -> Path | None:
    root = _root()
    if root is None:
        return None
    where = repr((ident["path"], ident["offset"], ident["tag"], ident["step"]))
    return root / hashlib.blake2b(where.encode("utf-8", "surrogatepass"),
                                  digest_size=12).hexdigest()


def read(ident: dict[str, Any] | None) -> TraceModel | None:
    """The saved model of the profile ``ident`` names, or None (none saved, or saved for
    other bytes, or unreadable: then the caller parses the trace)."""
    folder = _folder(ident) if ident else None
    return None if folder is None else read_folder(folder, ident)


def saved(ident: dict[str, Any] | None) -> bool:
    """Whether a model is saved for ``ident`` (its description only is read; :func:`read`
    still checks the rest)."""
    folder = _folder(ident) if ident else None
    if folder is None:
        return False
    try:
        return json.loads((folder / _INFO).read_text("utf-8")).get("identity") == ident
    except (OSError, ValueError, AttributeError):
        return False


def read_folder(folder: Path, ident: dict[str, Any] | None) -> TraceModel | None:
    """The model :func:`write_folder` wrote in ``folder`` for ``ident``, memory-mapped;
    None when the folder holds another identity's model, or is damaged."""
    try:
        info = json.loads((folder / _INFO).read_text("utf-8"))
        if info.get("identity") != ident:
            return None
        arrays = {k: np.load(folder / f"{k}.npy", mmap_mode="r", allow_pickle=False)
                  for k in TraceModel.SAVED}
        if any(len(a) != info["model"]["n"] for a in arrays.values()):
            return None
        with open(folder / _ARGS, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            blob = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        model = TraceModel.from_state(arrays, blob, info["model"])
        model.folder = folder
        return model
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_overview(folder: Path, overview: dict[str, Any]) -> bool:
    """Keep a model's overview beside it (it depends on the model alone)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(overview, f)
        os.replace(tmp, folder / _OVERVIEW)
        return True
    except (OSError, TypeError, ValueError):
        return False


def overview(model: TraceModel, wait: float = 120.0) -> dict[str, Any] | None:
    """The overview saved beside ``model``'s files (by the worker that built it: waited
    for, up to ``wait`` seconds, while it is still computing it), or None."""
    folder = getattr(model, "folder", None)
    if folder is None:
        return None
    proc = getattr(model, "worker", None)
    if proc is not None:
        try:
            proc.wait(wait)
        except Exception:  # noqa: BLE001 - still running: compute it here instead
            return None
    try:
        return json.loads((folder / _OVERVIEW).read_text("utf-8"))
    except (OSError, ValueError):
        return None


def save(ident: dict[str, Any] | None, model: TraceModel) -> Path | None:
    """Write ``model`` for ``ident`` (replacing what was saved for an older version of the
    same trace). Returns the folder, or None when not saved (too small, caching off, or
    the cache folder cannot be written)."""
    folder = _folder(ident) if ident else None
    if folder is None or model.n < MIN_EVENTS:
        return None
    prune()
    return folder if write_folder(folder, ident, model) else None


def folder_for(ident: dict[str, Any] | None) -> Path | None:
    """Where the model of ``ident`` is saved (None when caching is off)."""
    return _folder(ident) if ident else None


def begin(folder: Path) -> Path | None:
    """A folder beside ``folder`` to build a model in (:func:`columns_in`), then renamed to
    it by :func:`write_folder`; None when it cannot be made, and on Windows (where files
    still mapped keep their folder from being renamed)."""
    if os.name != "posix":
        return None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=".tmp-", dir=folder.parent))
    except OSError:
        return None


def args_file(tmp: Path) -> Path:
    """Where the parse writes the args of a model built in ``tmp`` (``parse_trace``'s
    ``args_to``)."""
    return tmp / _ARGS


def columns_in(tmp: Path) -> Callable[[str, int, Any], np.ndarray]:
    """``new(key, n, dtype)`` for :class:`TraceModel`: each saved column built straight
    into its ``.npy`` file in ``tmp`` (memory-mapped): the model is written as it is built,
    not copied into files after (a hundred MB for a million events)."""
    def new(key: str, n: int, dtype: Any) -> np.ndarray:
        if not n:  # (an empty file cannot be mapped)
            return np.empty(0, dtype)
        return np.lib.format.open_memmap(tmp / f"{key}.npy", mode="w+", dtype=dtype,
                                         shape=(n,))
    return new


def write_folder(folder: Path, ident: dict[str, Any] | None, model: TraceModel,
                 tmp: Path | None = None) -> bool:
    """Write ``model`` into ``folder``, which appears whole or not at all (written beside
    it, then renamed). ``tmp``: the folder of :func:`begin` where the model was built
    (:func:`columns_in`): the columns already there are not written again. False when it
    could not be written."""
    arrays, args_blob, info = model.state()
    built = tmp is not None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        if tmp is None:
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=folder.parent))
        for key, array in arrays.items():
            if isinstance(array, np.memmap) and array.filename is not None and \
                    Path(array.filename) == (tmp / f"{key}.npy").resolve():
                continue  # built there (a shared mapping: its pages are the file's)
            np.save(tmp / f"{key}.npy", np.ascontiguousarray(array), allow_pickle=False)
        if not (built and (tmp / _ARGS).exists()):  # (else written by the parse: args_file)
            with open(tmp / _ARGS, "wb") as f:
                f.write(args_blob)
        (tmp / _INFO).write_text(json.dumps({"identity": ident, "model": info}), "utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(tmp, folder)
        return True
    except (OSError, TypeError, ValueError):  # full disk, read-only cache, odd meta
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        return False


#: A folder being built (``.tmp-*``) older than this was left by a process that died.
STALE_SECONDS = 3600.0
_swept: set[Path] = set()


def prune() -> None:
    """Once per cache folder and process: remove the saved models of traces that no longer
    exist (a deleted run or trace file) and folders left half-built by a worker that died,
    so that the cache does not grow by a hundred MB for every big trace ever opened."""
    root = _root()
    with _lock:
        if root is None or root in _swept:
            return
        _swept.add(root)
    try:
        folders = list(root.iterdir())
    except OSError:
        return
    now = time.time()
    for folder in folders:
        try:
            if folder.name.startswith(".tmp-"):
                if now - folder.stat().st_mtime > STALE_SECONDS:
                    shutil.rmtree(folder, ignore_errors=True)
                continue
            source = json.loads((folder / _INFO).read_text("utf-8"))["identity"]["path"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not ours to judge
        if isinstance(source, str) and not os.path.exists(source):
            shutil.rmtree(folder, ignore_errors=True)


def save_later(ident: dict[str, Any] | None, model: TraceModel) -> threading.Thread | None:
    """:func:`save` on a daemon thread (writing a hundred MB must not hold up the request
    that built the model); at most one write per trace at a time."""
    folder = _folder(ident) if ident else None
    if folder is None or model.n < MIN_EVENTS:
        return None
    with _lock:
        if str(folder) in _writing:
            return None
        _writing.add(str(folder))

    def run() -> None:
        try:
            save(ident, model)
        finally:
            with _lock:
                _writing.discard(str(folder))

    thread = threading.Thread(target=run, name="visualdl-profile-save", daemon=True)
    thread.start()
    return thread
