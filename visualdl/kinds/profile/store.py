"""Built trace models kept on disk, so that a restarted server shows a big trace without
parsing it again: reading a model back is memory-mapping its ``.npy`` files.

Models live under the user's cache folder, the scalar cache's (``visualdl --cache-dir``,
``$VISUALDL_CACHE_DIR``, ``$XDG_CACHE_HOME/visualdl`` or ``~/.cache/visualdl``), in
``profiles/<key>/``; nothing is written beside the user's traces, so a read-only logdir
works the same. ``--no-cache`` (``VISUALDL_NO_CACHE=1``) turns it off.

A saved model is never trusted over the trace: it is keyed by what identifies the trace's
bytes, checked when it is read. A PyTorch trace file by its path, size, modification time
and inode (such files are written once, then left alone); a profile in a record file by a
hash of its stored (gzip'd) bytes, which are read anyway and are small next to the JSON.
Small traces parse faster than their files are written, so they are not saved. The models
of traces that no longer exist are removed after each save (:func:`prune`), or each big
trace ever opened would stay in the cache folder.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from visualdl.kinds.profile.model import TraceModel
from visualdl.storage import cache_folder

__all__ = ["identity", "folder_for", "read", "read_folder", "write", "write_folder", "prune",
           "MIN_EVENTS", "FORMAT", "STALE_SECONDS"]

#: Bumped whenever what a saved model holds, or how it is built, changes.
FORMAT = 3  # 2: times far from zero kept after a base (TraceModel.base); 3: self times
#              exact at the trace's resolution (TraceModel.scale)
#: Traces with fewer events than this are parsed again instead (cheaper than the files).
MIN_EVENTS = 100_000
#: A folder being written (``.tmp-*``) older than this was left by a process that died.
STALE_SECONDS = 3600.0
_INFO, _ARGS = "model.json", "args.bin"


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


def folder_for(ident: dict[str, Any] | None) -> Path | None:
    """Where the model of ``ident`` is saved (None when caching is off)."""
    root = _root() if ident else None
    if root is None:
        return None
    where = repr((ident["path"], ident["offset"], ident["tag"], ident["step"]))
    return root / hashlib.blake2b(where.encode("utf-8", "surrogatepass"),
                                  digest_size=12).hexdigest()


def read(ident: dict[str, Any] | None) -> TraceModel | None:
    """The saved model of the profile ``ident`` names, or None (none saved, or saved for
    other bytes, or unreadable: then the caller parses the trace)."""
    folder = folder_for(ident)
    return None if folder is None else read_folder(folder, ident)


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
        return TraceModel.from_state(arrays, blob, info["model"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write(ident: dict[str, Any] | None, model: TraceModel) -> bool:
    """Save ``model`` for ``ident`` (replacing what was saved for an older version of the
    same trace), then :func:`prune`. False when not saved (too small, caching off, or the
    cache folder cannot be written)."""
    folder = folder_for(ident)
    if folder is None or model.n < MIN_EVENTS:
        return False
    saved = write_folder(folder, ident, model)
    prune()
    return saved


def write_folder(folder: Path, ident: dict[str, Any] | None, model: TraceModel) -> bool:
    """Write ``model`` into ``folder``, which appears whole or not at all (written beside
    it, then renamed). False when it could not be written."""
    arrays, args_blob, info = model.state()
    tmp = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=folder.parent))
        for key, array in arrays.items():
            np.save(tmp / f"{key}.npy", np.ascontiguousarray(array), allow_pickle=False)
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


def prune() -> None:
    """Remove the saved models of traces that no longer exist (a deleted run or trace
    file) and folders left half-written by a process that died."""
    root = _root()
    try:
        folders = list(root.iterdir()) if root is not None else []
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
