"""``RemoteFS``: what visualdl needs from an fsspec filesystem, with every request counted.

Four operations, chosen so that the cost in requests is known in advance:

* ``find(url)``: one recursive listing of a prefix (S3: ``ListObjectsV2`` pages of 1,000
  keys), with each object's size and ETag; the listing cache of the filesystem is dropped
  first, so a reload always sees new objects.
* ``read(url, start, end)``: one ranged GET.
* ``write(url, data)``: one PUT of a whole object (object stores cannot append).
* ``read_record(url, offset)``: a blob's record, by two ranged GETs (its length, its data).

The counters (:class:`Stats`) are what ``/api/info`` shows per reload.
"""

from __future__ import annotations

import posixpath
import threading
from dataclasses import dataclass, field
from typing import Any, Iterator

from visualdl.format.framing import FOOTER_SIZE, HEADER_SIZE, length_at, masked_crc

__all__ = ["ObjectInfo", "RemoteFS", "Stats", "RangeFile"]


@dataclass
class Stats:
    """Requests made and bytes moved (since the filesystem was opened, or a ``snapshot``)."""

    lists: int = 0
    gets: int = 0
    puts: int = 0
    bytes_read: int = 0
    bytes_written: int = 0

    @property
    def requests(self) -> int:
        return self.lists + self.gets + self.puts

    def minus(self, other: "Stats") -> "Stats":
        return Stats(*(getattr(self, f) - getattr(other, f) for f in
                       ("lists", "gets", "puts", "bytes_read", "bytes_written")))

    def as_dict(self) -> dict[str, int]:
        return {"requests": self.requests, "lists": self.lists, "gets": self.gets,
                "puts": self.puts, "bytes_read": self.bytes_read,
                "bytes_written": self.bytes_written}


@dataclass(frozen=True)
class ObjectInfo:
    url: str
    size: int
    etag: str = ""


@dataclass
class RemoteFS:
    """One fsspec filesystem, addressed by full URLs (``s3://bucket/key``)."""

    fs: Any
    protocol: str
    stats: Stats = field(default_factory=Stats)
    #: url -> ObjectInfo of the last listing (set by run discovery)
    listed: dict = field(default_factory=dict)
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
        a, b = url.split("://", 1)[-1], root_url.split("://", 1)[-1]
        return posixpath.relpath("/" + a.strip("/"), "/" + b.strip("/"))

    # -- requests ----------------------------------------------------------------
    def _count(self, **deltas: int) -> None:
        with self._lock:
            for key, value in deltas.items():
                setattr(self.stats, key, getattr(self.stats, key) + value)

    def snapshot(self) -> Stats:
        with self._lock:
            return Stats(**{f: getattr(self.stats, f) for f in
                            ("lists", "gets", "puts", "bytes_read", "bytes_written")})

    def find(self, url: str) -> list[ObjectInfo]:
        """Every object below ``url`` (recursively), with size and ETag; [] when none.
        Directory markers are left out."""
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
            out.append(ObjectInfo(self.url(info.get("name", key)), int(size), str(etag)))
        return out

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
        """Bytes ``[start, end)`` of an object, in one request."""
        if end <= start:
            return b""
        data = self.fs.cat_file(self.strip(url), start=start, end=end)
        self._count(gets=1, bytes_read=len(data))
        return data

    def write(self, url: str, data: bytes) -> None:
        """Create (or replace) the object ``url`` holding ``data``, in one request."""
        self.fs.pipe_file(self.strip(url), data)
        self._count(puts=1, bytes_written=len(data))

    def read_record(self, url: str, offset: int) -> bytes:
        """The record framed at ``offset`` of ``url``, CRC-checked (two ranged GETs)."""
        head = self.read(url, offset, offset + HEADER_SIZE)
        if len(head) < HEADER_SIZE:
            raise ValueError(f"{url}: no record at offset {offset}")
        length = length_at(head, 0)
        if length is None:
            raise ValueError(f"{url}: bad record length CRC at offset {offset}")
        start = offset + HEADER_SIZE
        rest = self.read(url, start, start + length + FOOTER_SIZE)
        if len(rest) < length + FOOTER_SIZE:
            raise ValueError(f"{url}: record at offset {offset} is incomplete")
        data = rest[:length]
        if masked_crc(data) != int.from_bytes(rest[length:], "little"):
            raise ValueError(f"{url}: bad record data CRC at offset {offset}")
        return data


class RangeFile:
    """A read-only file over ``[start, size)`` of one object, fetched in blocks of
    ``block`` bytes by ranged GETs, for :func:`visualdl.format.framing.scan_file` (which
    reads forward in chunks). Reads before ``start`` are an error: what lies there was
    read by an earlier reload."""

    def __init__(self, remote: RemoteFS, url: str, start: int, size: int,
                 block: int = 32 << 20) -> None:
        self.remote, self.url, self.start, self.size, self.block = remote, url, start, size, block
        self._pos = start
        self._base = start
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
