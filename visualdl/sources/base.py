"""What a source is: one log format, which files it takes and what it makes of them.

A :class:`Source` says which files are its own: by name (``claims``, asked of every file a
listing shows, so it must be cheap) and, when several sources claim a name (our record
files and VisualDL 2.x's share ``vdlrecords``), by their first bytes (``accepts``). For each
of its files it makes a :class:`SourceFile`, which remembers how far it has read and turns
the file's bytes into :class:`Chunk`\\ s of the entries our records hold (protobuf
``Entry`` messages, scalar series) or of blob references (:class:`~.values.BlobRef`) for
files read whole. It reads through a :class:`visualdl.storage.File`, so it never knows
whether the file is on a local disk or in object storage, and it knows no reader: the
reader (or ``visualdl convert``) takes the chunks.

A new format is a subclass of each, registered in :mod:`visualdl.sources.registry`
(built-in) or through the ``visualdl.sources`` entry-point group (a plugin): see
``docs/adding_a_source.md``.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterator

__all__ = ["Source", "SourceFile", "WholeFile", "Chunk", "HEAD_BYTES", "READ_CHUNK"]

#: The most a source's ``accepts`` is shown of a file's first bytes.
HEAD_BYTES = 1 << 16
#: Bytes a stream source reads at a time (a buffer this size stays in the CPU's cache);
#: read when a scan starts, so a test may change it.
READ_CHUNK = 2 << 20


@dataclass
class Chunk:
    """What a source read of a file in one go; the reader adds it under one lock.

    ``entries``: ``(offset, [entries])`` in file order (``offset``: the record they came
    from, for blobs read back by offset; 0 for series gathered over many records);
    ``records``: the good records read; ``errors``: damage met (each counted against the
    file); ``notes``: problems shown but not counted; ``end``: the offset read up to (a
    torn tail waits there); ``refused``: why the file is not read at all (reading stops);
    ``others``: offsets of records that held more than scalars (the reader's disk cache
    re-reads those by offset instead of keeping them)."""

    entries: list[tuple[int, list]] = field(default_factory=list)
    records: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    end: int = -1
    refused: str = ""
    others: list[int] = field(default_factory=list)


class Source(ABC):
    """One log format. ``name`` is its key in the registry and in every ``BlobRef.source``;
    ``label`` is what a person calls its files ("TensorBoard event file"). ``whole``:
    its files are read once, whole (a trace, a graph), not tailed from an offset.
    ``cacheable``: the reader's scalar disk cache may keep the long series of its local
    files (then its ``SourceFile`` implements ``cache_state``/``restore``/``entries_at``)."""

    name: str = ""
    label: str = ""
    whole: bool = False
    cacheable: bool = False
    #: its files may be read in two passes by the reader's first load (see SourceFile)
    two_pass: bool = False

    @abstractmethod
    def claims(self, name: str) -> bool:
        """Whether a file called ``name`` (a base name, never hidden) may be of this
        format."""

    def accepts(self, head: bytes) -> bool | str | None:
        """Whether a file whose first bytes are ``head`` (at most ``HEAD_BYTES``; the whole
        file when shorter) is of this format: True; None when ``head`` is too short to
        tell (ask again when the file has grown); or why not (a short phrase: "bad
        framing at offset 0"). Asked only when another source claims the name too, or
        when ``sniffs`` is set."""
        return True

    #: Ask ``accepts`` even when no other source claims the name (a format told by content).
    sniffs: bool = False
    #: How many first bytes ``accepts`` needs to decide (at most ``HEAD_BYTES``).
    head_bytes: int = HEAD_BYTES

    def tentative(self, name: str) -> bool:
        """Whether this source claims ``name`` only for files whose first bytes it
        accepts: a name many other files share (``*.json``). Run discovery lists such a
        file only once ``accepts`` says True (no refusal is reported for the others), and
        ``accepts`` decides it even when no other source claims the name."""
        return False

    @abstractmethod
    def open(self, path: str) -> "SourceFile":
        """The reader of one file (nothing is read yet)."""


class SourceFile(ABC):
    """One file of a source, read on from where it stopped.

    ``offset``: the first byte not read yet; ``header``: the file's header (a
    ``visualdl.FileHeader``, for those that have one or are given one), None until read.
    ``two_pass``: the reader's first load of many files may read this one in two passes
    (``first_pass`` then ``second_pass``, see :mod:`visualdl.reader.first_load`)."""

    offset: int = 0
    header: Any = None
    two_pass: bool = False

    def __init__(self, source: Source, path: str) -> None:
        self.source = source
        self.path = path

    def due(self, stat: Any, seen: tuple | None) -> bool:
        """Whether there may be something new to read: ``stat`` is the file's
        :class:`visualdl.storage.Stat` now, ``seen`` its token when the last read ended."""
        return stat.token != seen

    def read(self, file: Any, stat: Any) -> Iterator[Chunk]:
        """Read on from ``offset`` up to ``stat.size`` (``file``: a
        :class:`visualdl.storage.File`), a chunk at a time."""
        stream = file.open(self.offset, stat.size, whole=self.source.whole)
        try:
            yield from self.scan(stream, stat)
        finally:
            stream.close()

    @abstractmethod
    def scan(self, stream: BinaryIO, stat: Any) -> Iterator[Chunk]:
        """The chunks of ``stream`` (positioned at ``offset``), up to ``stat.size``."""

    @abstractmethod
    def load(self, file: Any, ref: Any, field: str) -> Any:
        """One blob's message (``Image``, ``Audio``, ...), read back by its reference;
        ``field`` is the ``Entry`` field its kind travels in (``"plugin"`` for a plugin
        kind, whose message names the kind). ValueError or OSError when it cannot be."""

    # -- the reader's scalar disk cache (sources with ``cacheable``) ---------------------
    def cache_state(self) -> dict:
        """What the file's decoder remembers of the records before ``offset`` (JSON
        values), for the cache's manifest."""
        return {}

    def restore(self, offset: int, header: Any, state: dict) -> None:
        """Go on from a cached ``offset``: the records before it are not read again."""
        self.offset, self.header = offset, header

    def entries_at(self, file: Any, offsets: list[int]) -> list[tuple[int, Any]]:
        """The entries other than scalars of the records at ``offsets`` (the cache keeps
        only their offsets), read again in order from the file's start state."""
        return []


class WholeFile(SourceFile):
    """A file read once, whole, into one blob reference (a trace, a graph): indexed as soon
    as it is complete; one that does not look complete is indexed anyway once it has not
    changed for ``settle`` seconds (so that a broken file shows with its error instead of
    never showing up). Never read again once indexed: such files are written whole."""

    settle = 10.0

    def __init__(self, source: Source, path: str) -> None:
        super().__init__(source, path)
        self.done = False
        #: take the file as it is now, settled or not (``visualdl convert``)
        self.as_is = False

    def settled(self, stat: Any) -> bool:
        return self.as_is or time.time() - stat.mtime >= self.settle

    def due(self, stat: Any, seen: tuple | None) -> bool:
        if self.done:
            return False
        return stat.token != seen or self.settled(stat)

    def scan(self, stream: BinaryIO, stat: Any) -> Iterator[Chunk]:
        settled = self.settled(stat)
        found = self.index(stream, stat, settled)
        if found is None:
            return  # still being written
        ref, error = found
        chunk = Chunk(entries=[(0, [ref])], records=1, end=stat.size)
        if error:
            (chunk.errors if self.count_errors else chunk.notes).append(error)
        self.done = True
        self.offset = stat.size
        yield chunk

    #: whether a broken file counts as an error of the logdir (graphs do; traces show
    #: their error in the profiler instead)
    count_errors = True

    @abstractmethod
    def index(self, stream: BinaryIO, stat: Any, settled: bool) -> tuple[Any, str] | None:
        """``(BlobRef, error)`` for the file, or None while it still looks unfinished and
        is not ``settled``."""
