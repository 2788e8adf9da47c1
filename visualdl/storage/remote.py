"""``RemoteFS``: what visualdl needs from an fsspec filesystem, with every request counted.

Four operations, chosen so that the cost in requests is known in advance:

* ``find(url)``: one recursive listing of a prefix (S3: ``ListObjectsV2`` pages of 1,000
  keys, each counted; pages of segments the last listing showed are skipped, see
  :mod:`visualdl.storage.listing`), with each object's size, ETag and time; new segments
  are fetched concurrently right after (the reader reads them next).
* ``read(url, start, end)``: one ranged GET.
* ``write(url, data)``: one PUT of a whole object (object stores cannot append).
* ``cached(key, fetch)`` / ``read_whole(url, size)``: a blob's bytes (a record, read by
  its source through ranged GETs) or a whole object, kept in a bounded :class:`BlobCache`
  so that a page reload fetches nothing again.

The counters (:class:`Stats`) are what ``/api/info`` shows per reload.
"""

from __future__ import annotations

import posixpath
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable, Iterator

#: New segments fetched concurrently after a listing: each at most PREFETCH_ITEM bytes,
#: PREFETCH_BYTES in all (the rest is read one by one, as it comes).
PREFETCH_ITEM = 4 << 20
PREFETCH_BYTES = 64 << 20

__all__ = ["BlobCache", "ObjectInfo", "RemoteFS", "Stats", "RangeFile"]


@dataclass
class Stats:
    """Requests made and bytes moved (since the filesystem was opened, or a ``snapshot``),
    and the blob reads answered from the :class:`BlobCache` without a request."""

    lists: int = 0
    gets: int = 0
    puts: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    cache_hits: int = 0    # blob reads served from the cache (no request)
    cache_bytes: int = 0   # the bytes they would have fetched

    @property
    def requests(self) -> int:
        return self.lists + self.gets + self.puts

    def minus(self, other: "Stats") -> "Stats":
        return Stats(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))

    def __add__(self, other: "Stats") -> "Stats":
        return Stats(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def as_dict(self) -> dict[str, int]:
        return {"requests": self.requests, **asdict(self)}


@dataclass(frozen=True)
class ObjectInfo:
    url: str
    size: int
    etag: str = ""
    mtime: float = 0.0  # last modified (seconds since the epoch), 0 when not listed


class BlobCache:
    """The bytes of blobs read from object storage (a record, a whole trace or graph file),
    by ``(url, offset, size)``, least recently used first out, at most ``max_bytes`` in all.

    Blob bytes never change once written (a segment is immutable; an object that is
    rewritten gets a new size or ETag in the listing, and its blobs new references), so a
    cached copy is always right: a page reload, a second browser tab or a revalidation then
    costs no request. Items larger than ``max_item`` are not kept (a 1 GB trace would push
    everything else out)."""

    def __init__(self, max_bytes: int = 256 << 20, max_item: int | None = None) -> None:
        self.max_bytes = max_bytes
        self.max_item = max_bytes // 2 if max_item is None else max_item
        self.size = 0
        self._items: OrderedDict[tuple, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> bytes | None:
        with self._lock:
            data = self._items.get(key)
            if data is not None:
                self._items.move_to_end(key)
            return data

    def put(self, key: tuple, data: bytes) -> None:
        if len(data) > self.max_item:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.size -= len(old)
            self._items[key] = data
            self.size += len(data)
            while self.size > self.max_bytes:
                _, dropped = self._items.popitem(last=False)
                self.size -= len(dropped)

    def __len__(self) -> int:
        return len(self._items)


@dataclass
class RemoteFS:
    """One fsspec filesystem, addressed by full URLs (``s3://bucket/key``)."""

    fs: Any
    protocol: str
    stats: Stats = field(default_factory=Stats)
    #: url -> ObjectInfo of the last listing (set by run discovery)
    listed: dict = field(default_factory=dict)
    #: blob bytes already fetched (see :class:`BlobCache`)
    cache: BlobCache = field(default_factory=BlobCache)
    #: S3: prefix -> ({key: ObjectInfo}, listing.Known) of its last listing
    _listings: dict = field(default_factory=dict, repr=False)
    #: url -> bytes of a new segment fetched with the listing, until the reader reads it
    _prefetched: dict = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- names -------------------------------------------------------------------
    def strip(self, url: str) -> str:
        """The filesystem's own path for ``url`` (no protocol, no trailing slash)."""
        path = self.fs._strip_protocol(url)
        return path.rstrip("/") or path

    def url(self, path: str) -> str:
        path = path.lstrip("/") if not path.startswith("//") else path
        return f"{self.protocol}://{path}"

    def join(self, url: str, name: str) -> str:
        return url.rstrip("/") + "/" + name

    @staticmethod
    def relpath(url: str, root_url: str) -> str:
        """``url`` relative to ``root_url`` (as ``posixpath.relpath``; the common case,
        a plain key below the root, by slicing: discovery asks once per object listed)."""
        a, b = url.split("://", 1)[-1].strip("/"), root_url.split("://", 1)[-1].strip("/")
        if a.startswith(b + "/"):
            rest = a[len(b) + 1:]
            if rest and rest[0] != "/" and "//" not in rest and not any(part in (".", "..")
                                                     for part in rest.split("/")):
                return rest
        return posixpath.relpath("/" + a, "/" + b)

    # -- requests ----------------------------------------------------------------
    def _count(self, **deltas: int) -> None:
        with self._lock:
            for key, value in deltas.items():
                setattr(self.stats, key, getattr(self.stats, key) + value)

    def snapshot(self) -> Stats:
        with self._lock:
            return Stats(**asdict(self.stats))

    def find(self, url: str) -> list[ObjectInfo]:
        """Every object below ``url`` (recursively), with size and ETag; [] when none.
        Directory markers are left out. On S3, the pages of segments the last listing of
        ``url`` showed are skipped (see :mod:`visualdl.storage.listing`)."""
        if self.protocol in ("s3", "s3a") and hasattr(self.fs, "call_s3"):
            return self._find_s3(url)
        path = self.strip(url)
        try:
            self.fs.invalidate_cache(path)
        except Exception:  # noqa: BLE001 - a filesystem without a cache
            pass
        self._count(lists=1)
        try:
            found = self.fs.find(path, detail=True, withdirs=False)
        except FileNotFoundError:
            return []
        out = []
        for key, info in found.items():
            if info.get("type") == "directory":
                continue
            size = info.get("size")
            if size is None:
                continue
            etag = info.get("ETag") or info.get("etag") or info.get("mtime") or \
                info.get("LastModified") or info.get("created") or ""
            out.append(ObjectInfo(self.url(info.get("name", key)), int(size), str(etag),
                                  _seconds(info)))
        return out

    def _find_s3(self, url: str) -> list[ObjectInfo]:
        from visualdl.storage.listing import Known, list_prefix
        from visualdl.format.names import segment_key

        path = self.strip(url)
        bucket, key, _ = self.fs.split_path(path)
        prefix = f"{key.rstrip('/')}/" if key else ""
        previous, known = self._listings.get(path) or ({}, Known())
        try:
            found, skipped = list_prefix(
                lambda **kwargs: self.fs.call_s3("list_objects_v2", **kwargs), bucket,
                prefix, known, lambda: self._count(lists=1))
        except FileNotFoundError:
            return []
        infos = {k: ObjectInfo(self.url(f"{bucket}/{k}"), int(item["Size"]),
                               str(item.get("ETag", "")), _seconds(item))
                 for k, item in found.items() if not k.endswith("/")}
        infos.update((k, previous[k]) for k in skipped)
        if infos.keys() != previous.keys():
            known = Known(infos)
        self._listings[path] = (infos, known)
        self._prefetch([info for k, info in sorted(infos.items())
                        if k not in previous and segment_key(k)])
        return list(infos.values())

    def _prefetch(self, new: list[ObjectInfo]) -> None:
        """Fetch new segments (immutable, and read whole by the reader right after the
        listing) concurrently, up to ``PREFETCH_BYTES`` in all: a first load of 20,000
        segments is then not 20,000 GETs one after the other. What the reload does not
        read is dropped at the next listing."""
        self._prefetched = {}
        urls, total = [], 0
        for info in new:
            if info.size > PREFETCH_ITEM or total + info.size > PREFETCH_BYTES:
                continue
            urls.append(info.url)
            total += info.size
        if len(urls) < 2:
            return
        try:
            got = self.fs.cat([self.strip(u) for u in urls], on_error="return")
        except Exception:  # noqa: BLE001 - read one by one instead, as without prefetch
            return
        for url in urls:
            data = got.get(self.strip(url))
            if isinstance(data, bytes):
                self._prefetched[url] = data
                self._count(gets=1, bytes_read=len(data))

    def exists(self, url: str) -> bool:
        self._count(lists=1)
        return bool(self.fs.exists(self.strip(url)))

    def isfile(self, url: str) -> bool:
        self._count(lists=1)
        try:
            return bool(self.fs.isfile(self.strip(url)))
        except Exception:  # noqa: BLE001 - treated as "not a file"
            return False

    def read(self, url: str, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of an object, in one request (none when the listing
        prefetched the whole object: see :meth:`_prefetch`)."""
        if end <= start:
            return b""
        ready = self._prefetched.get(url)
        if ready is not None:
            if start == 0 and end >= len(ready):  # read whole: not kept any longer
                del self._prefetched[url]
                return ready
            if end <= len(ready):  # its first bytes, looked at before it is read
                return ready[start:end]
        data = self.fs.cat_file(self.strip(url), start=start, end=end)
        self._count(gets=1, bytes_read=len(data))
        return data

    def write(self, url: str, data: bytes) -> None:
        """Create (or replace) the object ``url`` holding ``data``, in one request."""
        self.fs.pipe_file(self.strip(url), data)
        self._count(puts=1, bytes_written=len(data))

    def cached(self, key: tuple, fetch: Callable[[], bytes]) -> bytes:
        """``fetch()``'s bytes, kept in :attr:`cache` under ``key`` (a blob's ``(url,
        offset, size)``): fetched once, then served without a request (counted as
        ``cache_hits``)."""
        data = self.cache.get(key)
        if data is not None:
            self._count(cache_hits=1, cache_bytes=len(data))
            return data
        data = fetch()
        self.cache.put(key, data)
        return data

    def read_whole(self, url: str, size: int) -> bytes:
        """The whole object (``size`` bytes as listed), in one GET, through the cache."""
        return self.cached((url, 0, size), lambda: self.read(url, 0, size))


class RangeFile:
    """A read-only file over ``[start, size)`` of one object, fetched in blocks of
    ``block`` bytes by ranged GETs, for the sources' scanners (which read forward in
    chunks). Reads before ``start`` are an error: what lies there was
    read by an earlier reload."""

    BLOCK = 32 << 20

    def __init__(self, remote: RemoteFS, url: str, start: int, size: int,
                 block: int = BLOCK) -> None:
        self.remote, self.url, self.start, self.size, self.block = remote, url, start, size, block
        self._pos = start
        self._base = start
        self._buf = b""

    def preload(self, data: bytes) -> None:
        """Bytes from ``start`` already fetched (the object's first block)."""
        self._base, self._buf = self.start, data

    def close(self) -> None:
        self._buf = b""

    def seek(self, pos: int, whence: int = 0) -> int:
        self._pos = pos if whence == 0 else (self._pos + pos if whence == 1 else self.size + pos)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def _ensure(self, pos: int, n: int) -> None:
        if self._base <= pos and pos + n <= self._base + len(self._buf):
            return
        if pos < self.start:
            raise ValueError(f"{self.url}: read before offset {self.start}")
        end = min(self.size, max(pos + n, pos + self.block))
        self._buf = self.remote.read(self.url, pos, end)
        self._base = pos

    def read(self, n: int = -1) -> bytes:
        if n < 0:
            n = self.size - self._pos
        n = max(0, min(n, self.size - self._pos))
        if not n:
            return b""
        self._ensure(self._pos, n)
        i = self._pos - self._base
        out = self._buf[i:i + n]
        self._pos += len(out)
        return out

    def readinto(self, view: Any) -> int:
        data = self.read(len(view))
        view[:len(data)] = data
        return len(data)


def chunks(data: list[bytes], limit: int) -> Iterator[list[bytes]]:
    """Split ``data`` into runs whose total size stays under ``limit`` (one item at least)."""
    run, size = [], 0
    for item in data:
        if run and size + len(item) > limit:
            yield run
            run, size = [], 0
        run.append(item)
        size += len(item)
    if run:
        yield run


def _seconds(info: dict) -> float:
    """An object's last-modified time from a listing entry (s3fs: a datetime under
    ``LastModified``; memory://, local: a number under ``created``/``mtime``); 0 if none."""
    for key in ("LastModified", "last_modified", "mtime", "created"):
        value = info.get(key)
        if value is None:
            continue
        if hasattr(value, "timestamp"):
            return float(value.timestamp())
        try:
            return float(value)
        except (TypeError, ValueError):
            try:
                from datetime import datetime

                return datetime.fromisoformat(str(value)).timestamp()
            except ValueError:
                continue
    return 0.0
