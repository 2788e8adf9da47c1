"""Locations: where logs are, a local folder or an fsspec URL, and the one way to list and
read their files.

A :class:`Location` lists the files below it that a caller wants (by name: this layer knows
no log format) and hands out a :class:`File` per path. A ``File`` says how big it is and
whether it changed (``stat``), opens a stream from an offset, reads byte ranges, and keeps
blobs a view reads again (``cached``): on a local disk that is ``open`` and ``os.stat``; in
object storage it is the last listing, ranged GETs and the filesystem's blob cache (see
:class:`~visualdl.storage.remote.RemoteFS`). The reader and the sources never ask which.
"""

from __future__ import annotations

import io
import os
import posixpath
from stat import S_ISLNK, S_ISREG
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Mapping

from visualdl.format.names import segment_key
from visualdl.storage.remote import RangeFile, RemoteFS, Stats

__all__ = ["Location", "File", "Stat", "open_location", "MAX_DEPTH", "WHOLE_LIMIT"]

#: Directories deeper than this below a location are not searched.
MAX_DEPTH = 64
#: Objects up to this size are fetched in one GET when read whole, and kept for the views
#: that read them again (a trace, a graph); larger ones are streamed by ranges.
WHOLE_LIMIT = 64 << 20


@dataclass(frozen=True)
class Stat:
    """A file's size and last change as last seen: ``token`` changes whenever its bytes may
    have (local: size and ``mtime_ns``; object storage: size and ETag)."""

    size: int
    mtime: float
    token: tuple


class File:
    """One file of a location, by path (a URL in object storage)."""

    def __init__(self, location: "Location", path: str) -> None:
        self.location = location
        self.path = path
        # an object's first block, fetched to look at its first bytes: the stream opened at
        # offset 0 next starts from it instead of fetching it again
        self._first: tuple[tuple, bytes] | None = None

    @property
    def local(self) -> bool:
        return self.location.remote is None

    def stat(self) -> Stat | None:
        """Size and change token now (local) or as last listed; None when it is gone."""
        remote = self.location.remote
        if remote is None:
            try:
                st = os.stat(self.path)
            except OSError:
                return None
            return Stat(st.st_size, st.st_mtime, (st.st_size, st.st_mtime_ns))
        info = remote.listed.get(self.path)
        if info is None:
            return None
        return Stat(info.size, info.mtime or 0.0, (info.size, info.etag))

    def open(self, start: int = 0, size: int | None = None, whole: bool = False) -> BinaryIO:
        """A binary stream of the file, to read forward from ``start`` (``size``: as
        stat says). ``whole``: the file is read whole and again later (a trace, a graph):
        an object in storage is then fetched in one GET and kept (up to ``WHOLE_LIMIT``)."""
        remote = self.location.remote
        if remote is None:
            f = open(self.path, "rb")
            f.seek(start)
            return f
        if size is None:
            st = self.stat()
            size = st.size if st is not None else 0
        if whole and size <= WHOLE_LIMIT:
            return io.BytesIO(self.whole(size))
        stream = RangeFile(remote, self.path, start, size)
        first, self._first = self._first, None
        if first is not None and start == 0 and first[0] == (size, self._etag()):
            stream.preload(first[1])
        return stream  # type: ignore[return-value]

    def head(self, n: int) -> bytes:
        """The first ``n`` bytes (fewer when the file is shorter). From object storage, the
        first block a stream would fetch is fetched and kept for that stream."""
        remote = self.location.remote
        if remote is None:
            return self.read(0, n)
        st = self.stat()
        size = st.size if st is not None else n
        if self._first is None or self._first[0] != (size, self._etag()):
            block = _storage_call(lambda: remote.read(self.path, 0, min(size, RangeFile.BLOCK)))
            self._first = ((size, self._etag()), block)
        return self._first[1][:n]

    def release(self) -> None:
        """Forget the first block kept by :meth:`head` (no stream will be opened)."""
        self._first = None

    def _etag(self) -> str:
        info = self.location.remote.listed.get(self.path) if self.location.remote else None
        return info.etag if info is not None else ""

    def read(self, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` (fewer at the end of the file), in one request remotely."""
        remote = self.location.remote
        if remote is None:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                f.seek(start)
                return f.read(max(0, min(end, size) - start))
        return _storage_call(lambda: remote.read(self.path, start, end))

    def whole(self, size: int | None = None) -> bytes:
        """The whole file; from object storage once, then from the blob cache."""
        remote = self.location.remote
        if remote is None:
            with open(self.path, "rb") as f:
                return f.read()
        if size is None:
            st = self.stat()
            size = st.size if st is not None else 0
        return _storage_call(lambda: remote.read_whole(self.path, size))

    def cached(self, key: Any, fetch: Callable[[], bytes]) -> bytes:
        """``fetch()``'s bytes, kept under ``key`` for objects in storage (a blob a view
        reads again costs no request); local files are read again, from the page cache."""
        remote = self.location.remote
        if remote is None:
            return fetch()
        return _storage_call(lambda: remote.cached((self.path, key), fetch))

    def __repr__(self) -> str:
        return f"File({self.path!r})"


def _storage_call(call: Callable[[], Any]) -> Any:
    """Storage libraries raise their own errors (botocore's, ...): as OSError here, so that
    callers handle one kind of failure."""
    try:
        return call()
    except (OSError, ValueError):
        raise
    except Exception as exc:  # noqa: BLE001
        raise OSError(f"{type(exc).__name__}: {exc}") from exc


class Location:
    """A folder of logs: ``path`` is absolute (a URL in object storage, with ``remote`` its
    :class:`RemoteFS`). ``recursive`` is False when the user named one file: then only
    that folder is listed, not below it (``named``: that file, listed even when it is a
    link out of the folder: the user chose it)."""

    def __init__(self, path: str, recursive: bool = True, remote: RemoteFS | None = None,
                 named: str | None = None) -> None:
        self.path = path
        self.recursive = recursive
        self.remote = remote
        self.named = named
        self._files: dict[str, File] = {}

    @property
    def name(self) -> str:
        """The last part of the path (the folder's own name)."""
        if self.remote is not None:
            return self.path.rstrip("/").rsplit("/", 1)[-1].split("://")[-1]
        return os.path.basename(self.path.rstrip(os.sep))

    def file(self, path: str) -> File:
        found = self._files.get(path)
        if found is None:
            found = self._files[path] = File(self, path)
        return found

    def relpath(self, path: str) -> str:
        """``path`` relative to the location, ``/``-separated (``.`` for the location)."""
        if self.remote is not None:
            return self.remote.relpath(path, self.path)
        inside = self.path.rstrip(os.sep) + os.sep
        if path.startswith(inside):  # as the walk gives it: no relpath (2,000 calls)
            return path[len(inside):].replace(os.sep, "/")
        return os.path.relpath(path, self.path).replace(os.sep, "/")

    def stats(self) -> Stats | None:
        """Requests and bytes so far (object storage), None for a local folder."""
        return self.remote.snapshot() if self.remote is not None else None

    def find(self, wanted: Callable[[str], bool]) -> dict[str, list[str]]:
        """Each folder below (or at) the location -> its files whose names ``wanted``
        accepts, sorted (the segments of one stream in segment order). Hidden files and
        folders are skipped."""
        if self.remote is not None:
            return self._find_remote(wanted)
        return self._find_local(wanted)

    def _find_local(self, wanted: Callable[[str], bool]) -> dict[str, list[str]]:
        """Symbolic links to folders are followed (a logdir of links to runs elsewhere is a
        normal setup), but no folder is visited twice, by device and inode: a link to ``.``
        or to a parent would otherwise make a copy of every run per pass through the loop
        (and two such links make the walk exponential). The walk also stops ``MAX_DEPTH``
        levels below the location.

        A link to a file is listed only when the file it resolves to lies inside the
        logdir, or inside the linked folder it was found in: anyone who can write into a
        logdir could otherwise name any file the server's user can read after a log
        (``x.pt.trace.json -> ~/.ssh/id_rsa``) and have it read and served. Not listed, it
        is never opened, whatever its kind (record, trace, graph...)."""
        found: dict[str, list[str]] = {}
        if not os.path.isdir(self.path):
            return found
        if self.recursive:
            walker: Any = os.walk(self.path, followlinks=True)
        else:
            walker = [(self.path, [], os.listdir(self.path))]
        visited: set[tuple[int, int]] = set()
        base_depth = self.path.rstrip(os.sep).count(os.sep)
        real_root = os.path.realpath(self.path)
        for dirpath, dirnames, filenames in walker:
            try:
                info = os.stat(dirpath)
            except OSError:  # vanished, or a link that no longer resolves
                dirnames[:] = []
                continue
            key = (info.st_dev, info.st_ino)
            if key in visited:
                dirnames[:] = []
                continue
            visited.add(key)
            if dirpath.count(os.sep) - base_depth >= MAX_DEPTH:
                dirnames[:] = []
            else:
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            files = self._listed(dirpath, filenames, wanted, real_root)
            if files:
                found[dirpath] = files
        return found

    def _listed(self, dirpath: str, filenames: list[str], wanted: Callable[[str], bool],
                real_root: str) -> list[str]:
        """The files of one folder to list: regular files, and links to files inside the
        logdir or inside the linked folder ``dirpath`` is part of (worked out only for a
        folder that holds a link: one ``lstat`` per file otherwise)."""
        files = []
        trees: tuple[str, ...] | None = None
        for name in filenames:
            if name.startswith(".") or not wanted(name):
                continue
            path = os.path.join(dirpath, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if S_ISLNK(mode) and path != self.named:
                if trees is None:
                    trees = (real_root, self._tree_of(dirpath, real_root))
                real = os.path.realpath(path)
                if not (os.path.isfile(real) and any(_inside(real, t) for t in trees)):
                    continue
            elif not S_ISLNK(mode) and not S_ISREG(mode):
                continue
            files.append(path)
        return sorted(files)

    def _tree_of(self, dirpath: str, real_root: str) -> str:
        """The real folder whose tree ``dirpath`` (a folder of the walk) is part of: the
        logdir's, or that of the last link on its way out of the tree before it."""
        tree, at = real_root, self.path
        rel = self.relpath(dirpath)
        for part in [] if rel == "." else rel.split("/"):
            at = os.path.join(at, part)
            if os.path.islink(at):
                real = os.path.realpath(at)
                if not _inside(real, tree):
                    tree = real
        return tree

    def _find_remote(self, wanted: Callable[[str], bool]) -> dict[str, list[str]]:
        """The same map from ONE recursive listing of the prefix (the sizes and ETags
        listed are kept in ``remote.listed``: ``File.stat`` answers from them, and nothing
        whose size and ETag were read already is fetched again)."""
        remote = self.remote
        assert remote is not None
        listing = remote.find(self.path)
        listed = {}
        found: dict[str, list[str]] = {}
        for info in listing:
            rel = remote.relpath(info.url, self.path)
            if rel.startswith(".."):
                continue
            parts = rel.split("/")
            name = parts[-1]
            if name.startswith(".") or not wanted(name) or \
                    any(p.startswith(".") for p in parts[:-1]):
                continue
            if len(parts) - 1 > MAX_DEPTH or (not self.recursive and len(parts) > 1):
                continue
            listed[info.url] = info
            found.setdefault(info.url.rsplit("/", 1)[0], []).append(info.url)
        remote.listed = listed

        def order(url: str) -> tuple[str, int]:
            return segment_key(url) or (url, 0)

        return {folder: sorted(urls, key=order) for folder, urls in sorted(found.items())}


def _inside(path: str, folder: str) -> bool:
    """Whether the real ``path`` is the real ``folder`` or lies below it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def open_location(logdir: str, storage_options: Mapping[str, Any] | None = None,
                  is_log_file: Callable[[str], bool] = lambda name: False) -> Location:
    """The location of one logdir the user named: a folder (searched recursively), a file
    (``is_log_file(name)``: its folder, not below), or a URL (``file://`` URLs are local;
    any other gets its fsspec filesystem, built with ``storage_options``; raises
    :class:`visualdl.storage.StorageUnavailable` when that is not installed)."""
    from visualdl.storage import is_url, local_path, open_fs

    logdir = local_path(os.fspath(logdir))
    if is_url(logdir):
        remote = open_fs(logdir, storage_options)
        url = logdir.rstrip("/")
        if is_log_file(posixpath.basename(url)):  # one file: its folder, not below
            return Location(url.rsplit("/", 1)[0], False, remote)
        return Location(url, True, remote)
    path = os.path.abspath(logdir)
    if os.path.isfile(path):
        return Location(os.path.dirname(path), False, named=path)
    return Location(path, True)
