"""``LogReader``: reads record files incrementally and tolerantly.

Each file's read offset is remembered, so ``reload()`` reads only what was appended. A
record cut short at a file's tail is "not yet written" and is read once complete; damaged
bytes (a bad CRC, a length pointing past the end of the file with good records after it)
are skipped up to the next good record and counted, and so is an undecodable payload; a
file of garbage is refused with a message. Nothing a file holds makes ``reload()`` raise.
Files are read in chunks (see :func:`visualdl.format.framing.scan_file`).

TensorBoard event files (``events.out.tfevents.*``) share the framing; each of their events
is translated by :mod:`visualdl.sources.tfevents.decode` into the entries our records hold,
so a run's data looks the same whichever wrote it. VisualDL 2.x's ``vdlrecords`` files are
told from ours by their first bytes and read with their own framing and decoder
(:mod:`visualdl.sources.vdl2`).

A logdir may be a URL (``s3://bucket/prefix``, any fsspec filesystem): each reload then
lists the prefix once and fetches only what the listing shows to be new (segments not read
yet, or the bytes appended to an object since the stored offset, by a ranged GET); an
object whose size and ETag were read already costs no request (see
:mod:`visualdl.storage`). Local paths are read with ``open`` as always.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Union

from google.protobuf.message import DecodeError

import visualdl.storage as storage
from visualdl.reader import discovery
from visualdl.kinds import registry
from visualdl.sources.values import BlobRef, FileInfo, Scalars
from visualdl.reader.run_store import RunStore
from visualdl.reader import first_load, scalar_cache, scalar_persist
from visualdl.format.framing import HEADER_SIZE, length_at, read_record_at, scan_file
from visualdl.format.version import FORMAT_MAJOR
from visualdl.format.record_pb2 import FileHeader, Record
from visualdl.format.scalar_codec import CompactSeries, DecodedSeries, decode_scalar_record
from visualdl.sources import vdl2
from visualdl.sources.tfevents import bulk, is_tfevents_file
from visualdl.storage import objects
from visualdl.storage.remote import RangeFile, Stats
from visualdl.format.names import segment_key
from visualdl.sources.tfevents.decode import HEADER, FileDecoder, ScalarPoint, gather
from visualdl.sources import torchtrace

_CHUNK = 2 << 20  # bytes per read; a buffer this size stays in cache
_MAX_MESSAGES = 200


@dataclass
class FileState:
    path: str
    run: str
    file_id: int
    offset: int = 0
    header: FileHeader | None = None
    refused: str = ""      # why the file is not read, when it is not
    errors: int = 0
    records: int = 0
    decoder: FileDecoder | None = None  # TensorBoard event files and VisualDL 2.x files
    remote: Any = None     # the RemoteFS of a file in object storage, None when local
    seen: tuple = ()       # (size, etag) of the remote object last read
    torch_trace: bool = False  # a PyTorch profiler trace: indexed whole, loaded on demand
    vdl2_graph: bool = False   # a VisualDL 2.x model graph (JSON): likewise
    cache: Any = None      # its scalar_persist.FileCache, once looked at
    cache_checked: bool = False  # whether a previous start's cache was looked for
    # offsets of records holding more than scalars, while the file has no cache (it gets
    # one when a series spills: then they are the cache's, see scalar_persist.note_record)
    others: list = field(default_factory=list)


class LogReader:
    """Read the runs under one or more logdirs.

    >>> reader = LogReader("runs")
    >>> reader.runs()
    ['exp1', 'exp2']
    >>> steps, wall_times, values = reader.scalars("exp1", "train/loss")
    """

    def __init__(self, logdir: str | os.PathLike | list | tuple, load: bool = True,
                 storage_options: dict[str, Any] | None = None) -> None:
        """``load=False`` reads nothing yet: a server builds the reader at once and lets
        ``reload()`` fill it in the background, answering from what is loaded so far.
        ``storage_options`` go to the fsspec filesystem of logdirs that are URLs."""
        logdirs = list(logdir) if isinstance(logdir, (list, tuple)) else [logdir]
        if not logdirs:
            raise ValueError("logdir must name at least one directory or record file")
        self._roots = discovery.make_roots([os.fspath(d) for d in logdirs], storage_options)
        self._file_ids: dict[str, int] = {}  # a file, or a stream of segments -> its id
        self._lock = threading.RLock()  # guards the data below
        self._reload_lock = threading.Lock()  # one reload at a time
        self._files: dict[str, FileState] = {}
        self._runs: dict[str, RunStore] = {}
        self._messages: list[str] = []
        self.errors = 0
        self.version = 0
        # The first load of many small files goes in two passes (see first_load):
        self._phase = "waiting"  # -> "first" / "second" (two passes) or "load" -> "done"
        self._priority: set[str] = set()  # tags pass 1 decodes
        self._pending: dict[str, int] = {}  # tag -> files whose points of it wait for pass 2
        self._deferred: list[tuple[FileState, int, frozenset[str], frozenset[str]]] = []
        self._restore_possible = False  # a folder of cached files exists (scalar_persist)
        self._batch = first_load.Batch()  # pass 1's series of many records, decoded at once
        # Called between files of the first load's second pass (a server lets the requests
        # being answered go first: LogReaderProvider._yield_to_requests).
        self.pause_hook: Callable[[], None] | None = None
        if load:
            self.reload()

    # -- reading files ------------------------------------------------------------
    def reload(self) -> int:
        """Read what was appended since the last call; return the number of new records.

        Bytes are read and decoded without holding the data lock, which is taken only to
        add each chunk's records: a server keeps answering from what is loaded so far
        while a large logdir loads. The first load of many small files reads the
        priority tags of every file first (see :mod:`visualdl.reader.first_load`).
        """
        with self._reload_lock:
            self._restore_possible = _cache_folder_exists()
            states: list[FileState] = []
            for root in self._roots:
                try:
                    found = discovery.find_record_files(root)
                except OSError as exc:
                    self._error(f"{root.path}: cannot list directory: {exc}")
                    continue
                except Exception as exc:  # noqa: BLE001 - any storage error (botocore's, ...)
                    self._error(f"{root.path}: cannot list: {type(exc).__name__}: {exc}")
                    continue
                for run_dir, paths in found.items():
                    run = discovery.run_name(root, run_dir)
                    states.extend(self._file_state(path, run, root.fs) for path in paths)
            if self._phase != "waiting":
                return sum(self._read_file(state) for state in states)
            try:
                return self._first_load(states)
            finally:
                with self._lock:
                    self._phase = "done"
                    self._pending.clear()
                    self._deferred.clear()
                    self.version += 1  # answers flagged "loading" are stale now

    # -- the first load ---------------------------------------------------------------
    def prioritize(self, tags: Any) -> None:
        """Ask the first load to read these scalar tags of every run before the others
        (a server calls it for the tags a browser asks for while the logdir loads); no
        effect once the first load is past its first pass."""
        with self._lock:
            if self._phase in ("waiting", "first"):
                self._priority.update(tags)

    def scalar_pending(self, tag: str) -> bool:
        """Whether the first load may still add points of ``tag`` that it has read from
        disk (then an answer about it is partial); False once the first load is done."""
        with self._lock:
            if self._phase == "done":
                return False
            if self._phase == "second":
                return self._pending.get(tag, 0) > 0
            return True

    @property
    def loading(self) -> bool:
        """True until the first load is done."""
        return self._phase != "done"

    def _first_load(self, states: list[FileState]) -> int:
        compact = type(self)._add_entries is LogReader._add_entries
        candidates = sum(1 for s in states if _may_defer(s))
        if not compact or candidates < first_load.MIN_FILES:
            with self._lock:
                self._phase = "load"
            return sum(self._read_file(state) for state in states)
        with self._lock:
            self._phase = "first"
        self._batch = first_load.Batch()
        new = 0
        for state in states:
            with self._lock:  # fixed for the whole file: its series keep their order
                keep = frozenset(self._priority)
            new += self._read_file(state, keep if keep and _may_defer(state) else None)
            if self._batch.full():
                self._take_batch()
            if not keep:  # the first run read names the first chart: its first tag
                store = self._runs.get(state.run)
                with self._lock:
                    if store is not None and store.scalars and not self._priority:
                        self._priority.add(min(store.scalars))
        self._take_batch()
        with self._lock:
            self._phase = "second"
            self.version += 1
        for state, end, keep, pending in list(self._deferred):
            if self.pause_hook is not None:
                self.pause_hook()
            new += self._second_pass(state, end, keep)
            with self._lock:
                for tag in pending:
                    self._pending[tag] -= 1
            new += self._read_file(state)  # what was appended since
        return new

    def _second_pass(self, state: FileState, end: int, keep: frozenset[str]) -> int:
        """Add the series pass 1 left (the tags not in ``keep``) of the records before
        ``end``; records pass 1 took whole are skipped, and so are errors (counted then)."""
        try:
            with open(state.path, "rb") as f:
                for result in scan_file(f, 0, end, _CHUNK):
                    batch = []
                    for offset, payload in result.records:
                        got = first_load.decode_some(payload, lambda t: t not in keep)
                        if got is not None and got[0]:
                            batch.append((offset, got[0]))
                    if batch:
                        with self._lock:
                            for offset, series in batch:
                                self._add_decoded(state, offset, series)
                            self.version += 1
        except OSError as exc:
            self._error(f"{state.path}: cannot read: {exc}")
        self._save(state)
        return 0

    def _file_state(self, path: str, run: str, remote: Any = None) -> FileState:
        with self._lock:
            state = self._files.get(path)
            if state is None:
                # The segments of one writer are one stream: one id, so that its points
                # append to one series in order (see visualdl.writer.segments).
                key = segment_key(path)
                file_id = self._file_ids.setdefault(key[0] if key else path,
                                                    len(self._file_ids))
                state = FileState(path, run, file_id, remote=remote)
                if is_tfevents_file(os.path.basename(path)):
                    state.decoder = FileDecoder()
                state.torch_trace = torchtrace.is_torch_trace_file(os.path.basename(path))
                state.vdl2_graph = vdl2.graph.is_graph_file(os.path.basename(path))
                self._files[path] = state
            return state

    def _read_file(self, state: FileState, keep: frozenset[str] | None = None) -> int:
        """Read on from the file's offset; ``keep``: the first pass of the first load,
        which decodes only these scalar tags (see :mod:`visualdl.reader.first_load`)."""
        if state.refused:
            return 0
        if state.torch_trace:
            return self._index_torch_trace(state)
        if state.vdl2_graph:
            return self._index_vdl2_graph(state)
        if state.remote is not None:
            return self._read_remote(state)
        try:
            with open(state.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if not state.cache_checked:  # first read: series a previous start cached
                    state.cache_checked = True
                    if self._restore_possible and _may_be_cached(size):
                        scalar_persist.restore(self, state, f)
                f.seek(state.offset)
                if keep is not None and (state.offset or size > first_load.MAX_FILE_BYTES):
                    keep = None
                plan = _FirstPass(keep, state, self._batch) if keep is not None else None
                count = self._read_stream(state, f, size, plan)
            if plan is not None and plan.seen - keep:
                with self._lock:
                    pending = frozenset(plan.seen - keep)
                    self._store_for(state.run).declare_scalars(pending, state.file_id)
                    self._deferred.append((state, state.offset, keep, pending))
                    for tag in pending:
                        self._pending[tag] = self._pending.get(tag, 0) + 1
                return count  # saved after its second pass
            if count:
                if plan is not None:
                    self._take_batch()  # its series, before looking for spilled ones
                self._save(state)
            return count
        except OSError as exc:
            self._error(f"{state.path}: cannot read: {exc}")
            return 0

    def _take_batch(self) -> None:
        """Decode the first pass's batch and add its series (see first_load.Batch)."""
        got = self._batch.take()
        if not got:
            return
        with self._lock:
            for state, offset, series in got:
                if not state.refused:
                    self._add_decoded(state, offset, series)
            self.version += 1

    def _add_decoded(self, state: FileState, offset: int, series: Any) -> None:
        """Add a record's series decoded by the first load, or count why it could not be
        (the codec and protobuf both failed: ``series`` is the reason). Lock held."""
        if isinstance(series, str):
            state.errors += 1
            self._error(f"{state.path}: undecodable record at offset {offset}: {series}")
        else:
            self._add_entries(state, series, offset)

    def _save(self, state: FileState) -> None:
        """Persist the file's spilled series (its cache folder made on the first)."""
        if state.cache is None and self._spilled(state):
            state.cache = scalar_persist.FileCache(state.path)
            state.cache.others = state.others
        scalar_persist.save(self, state)

    def _spilled(self, state: FileState) -> bool:
        """Whether a series this file fed moved to the disk cache (then it is persisted)."""
        with self._lock:
            store = self._runs.get(state.run)
            return store is not None and any(
                s.spilled is not None for s in store.file_series(state.file_id).values())

    def _read_remote(self, state: FileState) -> int:
        """Read an object in storage from the stored offset, only when the last listing
        shows it changed (a segment read once is never fetched again)."""
        info = state.remote.listed.get(state.path)
        if info is None:
            return 0
        seen = (info.size, info.etag)
        if seen == state.seen:
            return 0
        try:
            f = RangeFile(state.remote, state.path, state.offset, info.size)
            count = self._read_stream(state, f, info.size)
        except Exception as exc:  # noqa: BLE001 - any storage error: tried again next reload
            self._error(f"{state.path}: cannot read: {type(exc).__name__}: {exc}")
            return 0
        state.seen = seen
        return count

    def _read_stream(self, state: FileState, f: Any, size: int,
                     plan: "_FirstPass | None" = None) -> int:
        count = 0
        if size <= state.offset:
            return 0
        if state.offset == 0 and not self._looks_like_records(state, f):
            return 0
        # scan_file reuses one buffer per file for each chunk: records are decoded into
        # objects of their own (protobuf copies, numpy copies) before the next chunk. Each
        # read starts at the first byte not yet used, so a record cut by the previous read
        # is read again whole (from the page cache) instead of being glued to the next.
        if vdl2.is_vdl2(state):
            scan = vdl2.scan_file
        else:
            scan = bulk.scan_events if state.decoder is not None else scan_file
        # Series that go into a RunStore are kept compact; a subclass that takes the
        # entries itself (visualdl convert) gets the plain int64/float64 columns.
        compact = type(self)._add_entries is LogReader._add_entries
        for result in scan(f, state.offset, size, _CHUNK):
            if state.decoder is not None:
                added = self._add_events(state, result)
                if vdl2.is_vdl2(state):
                    added += self._add_series(state, result.series, result.scalar_records)
                count += added
                if state.refused:
                    return count
                state.offset = result.end
                continue
            if plan is None:
                decoded = [(offset, _decode(payload, compact))
                           for offset, payload in result.records]
            else:
                decoded = [(offset, plan.decode(offset, payload))
                           for offset, payload in result.records]
            with self._lock:
                for message in result.errors:
                    state.errors += 1
                    self._error(f"{state.path}: {message}")
                added = 0
                for offset, record in decoded:
                    if plan is not None and isinstance(record, Record) and len(plan.batch) \
                            and any(e.WhichOneof("kind") == "scalars" for e in record.entries):
                        self._take_batch()  # its scalars come after those of the batch
                    added += self._handle_record(state, offset, record)
                    if state.refused:
                        return count + added
                if added:
                    self.version += 1
            count += added
            state.offset = result.end  # a torn tail waits there for the next reload
        return count

    def _index_torch_trace(self, state: FileState) -> int:
        """Index a PyTorch trace once it is complete (or settled while broken, so that
        its error shows): one profile ``BlobRef`` whose bytes stay in the file."""
        if state.records:
            return 0
        try:
            info = objects.scan_trace(state) if state.remote is not None \
                else torchtrace.scan(state.path)
        except OSError as exc:
            self._error(f"{state.path}: cannot read: {exc}")
            return 0
        if info is None:
            return 0  # still being written
        meta = {"end_step": info.end_step, "source": "pytorch", "error": info.error}
        ref = BlobRef("profile", info.tag, info.step, info.wall_time, info.size, state.path,
                      0, meta, "torchtrace")
        return self._add_whole_file(state, ref, info.error, count_error=False)

    def _index_vdl2_graph(self, state: FileState) -> int:
        """Index a VisualDL 2.x graph file once it parses (or settled while broken, so that
        the graph view says why): one graph ``BlobRef``, converted when opened."""
        if state.records:
            return 0  # written whole, never appended to
        try:
            info = objects.scan_graph(state) if state.remote is not None \
                else vdl2.graph.scan(state.path)
        except OSError as exc:
            self._error(f"{state.path}: cannot read: {exc}")
            return 0
        if info is None:
            return 0  # still being written
        ref = BlobRef("graph", info.tag, 0, info.wall_time, info.size, state.path, 0,
                      {"source": "VisualDL 2.x", "error": info.error}, "vdl2graph")
        return self._add_whole_file(state, ref, info.error, count_error=True)

    def _add_whole_file(self, state: FileState, ref: BlobRef, error: str,
                        count_error: bool) -> int:
        """Index a file read whole (a trace, a graph) as the one blob ``ref`` of its run;
        its error, if any, is reported (and counted against the file when asked)."""
        with self._lock:
            if error:
                state.errors += count_error
                self._error(f"{state.path}: {error}")
            self._store_for(state.run).add_event(ref.kind, ref.tag, state.file_id, ref)
            state.records = 1
            state.offset = ref.size
            self.version += 1
        return 1

    def _store_for(self, run: str) -> RunStore:
        """The run's store, made on its first entry (lock held)."""
        store = self._runs.get(run)
        if store is None:
            store = self._runs[run] = RunStore()
        return store

    def _add_events(self, state: FileState, result: Any) -> int:
        """Add one chunk of a TensorBoard event file; its scalar points are gathered into
        one series per tag (so a million one-value events are not a million arrays)."""
        decoder = state.decoder
        assert decoder is not None
        decoded = [(offset, decoder.decode(payload)) for offset, payload in result.records]
        fast, n_fast = bulk.settle(decoder, result, decoded)  # scalars decoded in bulk
        added = 0
        with self._lock:
            for message in result.errors:
                state.errors += 1
                self._error(f"{state.path}: {message}")
            points: list[ScalarPoint] = []
            for offset, items in decoded:
                if isinstance(items, str) and items is not HEADER:
                    state.errors += 1
                    self._error(f"{state.path}: undecodable event at offset {offset}: {items}")
                    continue
                state.records += 1
                added += 1
                if state.header is None:
                    if items is not HEADER:
                        self._refuse(state, "not a TensorBoard event file (no file_version "
                                            "event first)")
                        return added
                    state.header = FileHeader(writer_version=decoder.file_version)
                    continue
                if items is HEADER or not items:
                    continue
                # a ScalarPoint (a tuple) is gathered; anything else is an entry
                points.extend(item for item in items if isinstance(item, tuple))
                entries = [item for item in items if not isinstance(item, tuple)]
                if entries:  # re-read by offset when the file's scalars come from the cache
                    scalar_persist.note_offset(state, offset)
                self._add_entries(state, entries, offset)
            state.records += n_fast
            added += n_fast
            self._add_entries(state, (gather(points) if points else []) + fast, 0)
            if added:
                self.version += 1
        return added

    def _add_series(self, state: FileState, series: list, records: int) -> int:
        """Add scalar series a source decoded in bulk from ``records`` records (VisualDL
        2.x's one-point records, see visualdl.sources.vdl2.bulk)."""
        with self._lock:
            state.records += records
            self._add_entries(state, series, 0)
            if records:
                self.version += 1
        return records

    def _looks_like_records(self, state: FileState, f: Any) -> bool:
        """Refuse a file whose first bytes are not a framed record, without scanning it."""
        f.seek(0)
        head = f.read(HEADER_SIZE)
        if len(head) < HEADER_SIZE:
            return False  # too short to tell: wait for more
        if length_at(head) is None:
            if state.decoder is None and vdl2.sniff(f):
                vdl2.adopt(state)
                return True
            what = "TensorBoard event" if state.decoder is not None else "visualdl record"
            also = "" if state.decoder is not None else "; nor a VisualDL 2.x log"
            self._refuse(state, f"not a {what} file (bad framing at offset 0{also})")
            return False
        return True

    def _handle_record(self, state: FileState, offset: int, record: Decoded) -> int:
        """Add one decoded record (lock held); ``record`` is the decode error if any."""
        if isinstance(record, str):
            state.errors += 1
            self._error(f"{state.path}: undecodable record at offset {offset}: {record}")
            return 0
        state.records += 1
        if state.header is None:
            if isinstance(record, list) or not record.HasField("header"):
                self._refuse(state, "not a visualdl record file (no file header)")
                return 0
            state.header = record.header
            if record.header.format_major > FORMAT_MAJOR:
                self._refuse(
                    state,
                    f"written in record format {record.header.format_major}."
                    f"{record.header.format_minor}, newer than this visualdl reads "
                    f"({FORMAT_MAJOR}.x): upgrade visualdl to read it",
                )
                return 0
        if not isinstance(record, list):
            scalar_persist.note_record(state, offset, record)
        entries = record if isinstance(record, list) else record.entries
        self._add_entries(state, entries, offset)
        return 1

    def _add_entries(self, state: FileState, entries: Any, offset: int) -> None:
        """Add decoded entries to the file's run (lock held); a bad one is counted and the
        rest still go in."""
        if not entries:
            return
        store = self._store_for(state.run)
        if isinstance(entries, list) and isinstance(entries[0], CompactSeries):
            for why in store.add_compact(entries, state.file_id):  # a record's series
                state.errors += 1
                self._error(f"{state.path}: bad entry at offset {offset}: {why}")
            return
        for entry in entries:
            try:
                store.add_entry(entry, state.file_id, state.path, offset)
            except (ValueError, TypeError) as exc:
                state.errors += 1
                self._error(f"{state.path}: bad entry at offset {offset}: {exc}")

    def _refuse(self, state: FileState, why: str) -> None:
        state.refused = why
        self._error(f"{state.path}: {why}")

    def _error(self, message: str) -> None:
        with self._lock:
            self.errors += 1
            self._messages.append(message)
            del self._messages[:-_MAX_MESSAGES]

    # -- the public view ----------------------------------------------------------
    @property
    def error_messages(self) -> list[str]:
        with self._lock:
            return list(self._messages)

    def runs(self) -> list[str]:
        with self._lock:
            return sorted(self._runs)

    def tags(self, run: str) -> dict[str, list[str]]:
        """``{kind: [tags]}`` for one run; kinds are those in ``visualdl.reader.KINDS``."""
        with self._lock:
            return self._store(run).tags()

    def scalars(self, run: str, tag: str) -> Scalars:
        """All points of a scalar tag: (steps, wall_times, values) as read-only arrays."""
        with self._lock:
            store = self._store(run)
            if tag not in store.scalars:
                raise KeyError(f"run {run!r} has no scalar tag {tag!r}")
            return store.scalar_view(tag)

    def scalar_ends(self, run: str, tag: str) -> tuple[int, float, float, float] | None:
        """(points, first wall time, last wall time, last value) of a scalar tag, None when
        it has no points; cheaper than :meth:`scalars` (nothing is copied)."""
        with self._lock:
            store = self._store(run)
            if tag not in store.scalars:
                raise KeyError(f"run {run!r} has no scalar tag {tag!r}")
            return store.scalar_ends(tag)

    # Shorthands for the built-in kinds, as users of other readers expect them; every kind,
    # a plugin's too, is read with events(run, kind, tag).
    def texts(self, run: str, tag: str) -> list:
        return self.events(run, "text", tag)

    def histograms(self, run: str, tag: str) -> list:
        return self.events(run, "histogram", tag)

    def pr_curves(self, run: str, tag: str) -> list:
        return self.events(run, "pr_curve", tag)

    def roc_curves(self, run: str, tag: str) -> list:
        return self.events(run, "roc_curve", tag)

    def images(self, run: str, tag: str) -> list[BlobRef]:
        return self.events(run, "image", tag)

    def audio(self, run: str, tag: str) -> list[BlobRef]:
        return self.events(run, "audio", tag)

    def figures(self, run: str, tag: str) -> list[BlobRef]:
        return self.events(run, "figure", tag)

    def graphs(self, run: str, tag: str) -> list[BlobRef]:
        return self.events(run, "graph", tag)

    def embeddings(self, run: str, tag: str) -> list[BlobRef]:
        return self.events(run, "embedding", tag)

    def blobs(self, run: str, kind: str, tag: str) -> list[BlobRef]:
        """The index of one tag of a blob kind (image, audio, figure, graph, embedding, or a
        plugin's)."""
        if kind not in registry.blob_names():
            raise KeyError(f"{kind!r} is not a blob kind")
        return self.events(run, kind, tag)

    def hparams(self, run: str) -> Any:
        """The run's latest hyper-parameters (an ``HParamsEvent``), or None."""
        with self._lock:
            per_tag = self._store(run).events.get("hparams", {})
            found = per_tag["hparams"].snapshot() if "hparams" in per_tag else []
            return max(found, key=lambda h: h.wall_time) if found else None

    def load(self, ref: BlobRef) -> Any:
        """Read one blob's message (``Image``, ``Audio``, ...) from its file, by offset."""
        with self._lock:
            vdl2_state = self._files.get(ref.path)
        remote = vdl2_state.remote if vdl2_state is not None else None  # object storage
        if torchtrace.is_torch_trace_file(os.path.basename(ref.path)):
            return torchtrace.load(ref.path, objects.whole(remote, ref) if remote else None)
        field = registry.get(ref.kind).message
        if vdl2_state is not None and vdl2_state.vdl2_graph:
            return vdl2.graph.load(ref.path, ref.tag, ref.step, ref.wall_time,
                                   objects.whole(remote, ref) if remote else None)
        if vdl2_state is not None and vdl2.is_vdl2(vdl2_state):
            return vdl2.load(vdl2_state, ref, field,
                             objects.vdl2_payload(remote, ref) if remote else None)
        if is_tfevents_file(os.path.basename(ref.path)):
            with self._lock:
                state = self._files.get(ref.path)
            decoder = state.decoder if state is not None and state.decoder else FileDecoder()
            msg = decoder.entry_at(self._record_at(ref.path, ref.offset), field, ref.tag,
                                   ref.step)
            if msg is None:
                raise ValueError(f"{ref.path}: no {ref.kind} {ref.tag!r} at offset {ref.offset}")
            return msg
        record = Record.FromString(self._record_at(ref.path, ref.offset))
        for entry in record.entries:
            if entry.WhichOneof("kind") == field:
                msg = getattr(entry, field)
                if msg.tag == ref.tag and msg.step == ref.step and \
                        getattr(msg, "kind", ref.kind) == ref.kind:
                    return msg
        raise ValueError(f"{ref.path}: no {ref.kind} {ref.tag!r} at offset {ref.offset}")

    def _record_at(self, path: str, offset: int) -> bytes:
        """One record's bytes, from a local file or from object storage."""
        if storage.is_url(path):
            with self._lock:
                state = self._files.get(path)
            if state is None or state.remote is None:
                raise ValueError(f"{path}: not a file of this reader")
            return state.remote.read_record(path, offset)
        return read_record_at(path, offset)

    def scalars_frame(self, runs: str | list[str] | None = None,
                      tags: str | list[str] | None = None) -> Any:
        """Every point of the chosen runs and scalar tags (all by default) as a pandas
        DataFrame in long form: columns ``run``, ``tag`` (categoricals), ``step``,
        ``wall_time``, ``value``. Needs pandas (``pip install "visualdl[analysis]"``);
        see :mod:`visualdl.export`."""
        from visualdl.export import scalars_frame

        return scalars_frame(self, runs, tags)

    def storage_stats(self) -> Any:
        """Requests and bytes of the logdirs in object storage so far (a
        :class:`visualdl.storage.remote.Stats`), or None when every logdir is local."""
        remotes = [root.fs for root in self._roots if root.fs is not None]
        if not remotes:
            return None
        return sum((fs.snapshot() for fs in remotes), Stats())

    def files(self, run: str | None = None) -> list[FileState]:
        """The record files read so far (all, or one run's), with their headers and errors."""
        with self._lock:
            return [s for s in self._files.values() if run is None or s.run == run]

    def file_infos(self) -> list[FileInfo]:
        """What :meth:`files` says of each file, as plain values (see ``FileInfo``)."""
        with self._lock:
            return [FileInfo(s.path, s.run, _source_of(s), s.offset)
                    for s in self._files.values()]

    def _store(self, run: str) -> RunStore:
        store = self._runs.get(run)
        if store is None:
            raise KeyError(f"no run named {run!r}")
        return store

    def events(self, run: str, kind: str, tag: str) -> list:
        """Every event of one tag of any kind but scalars, in time order (hparams have one
        tag, ``"hparams"``)."""
        with self._lock:
            store = self._store(run)
            if tag not in store.events.get(kind, {}):
                raise KeyError(f"run {run!r} has no {kind} tag {tag!r}")
            return store.event_list(kind, tag)


class _FirstPass:
    """One file's first pass: the series of the ``keep`` tags of scalar-only records go
    to the batch (decoded with those of other files), the other series wait for the
    second pass; every tag those records hold is noted. Other records are decoded whole,
    as always."""

    __slots__ = ("keep", "seen", "state", "batch")

    def __init__(self, keep: frozenset[str], state: FileState, batch: Any) -> None:
        self.keep = keep
        self.seen: set[str] = set()
        self.state = state
        self.batch = batch

    def decode(self, offset: int, payload: memoryview) -> "Decoded":
        spans = first_load.entry_spans(payload)
        if spans is None:
            return _decode(payload, True)
        kept = []
        for span in spans:
            self.seen.add(span[0])
            if span[0] in self.keep:
                kept.append(span)
        if kept:
            self.batch.add(self.state, offset, payload, kept)
        return []  # the record counts now; its kept series are added with the batch


def _source_of(state: FileState) -> str:
    if state.torch_trace:
        return "torchtrace"
    if state.vdl2_graph:
        return "vdl2graph"
    if vdl2.is_vdl2(state):
        return "vdl2"
    if state.decoder is not None:
        return "tfevents"
    return "visualdl" if state.header is not None else ""


def _may_defer(state: FileState) -> bool:
    """A local visualdl record file not read yet: its first load may take two passes."""
    return (state.offset == 0 and not state.records and state.remote is None
            and state.decoder is None and not state.torch_trace and not state.vdl2_graph
            and not state.refused and segment_key(state.path) is None)


def _may_be_cached(size: int) -> bool:
    """Whether a file this size may have a persisted cache: only files holding a spilled
    series have one, and a series spills past ``SPILL_POINTS`` points of at least 17
    bytes each (a varint step and two doubles; 9 is the bound used)."""
    return size > scalar_cache.SPILL_POINTS * 9


def _cache_folder_exists() -> bool:
    """Whether any record file has a persisted scalar cache (one stat per reload rather
    than a cache lookup per file: 2,000 files spent 0.1 s on it)."""
    try:
        return scalar_persist.may_restore()
    except (OSError, RuntimeError):  # no home directory to find the cache in
        return False


#: What ``_decode`` makes of one record: scalar series decoded with numpy, a protobuf
#: ``Record`` for anything else, or the reason it cannot be decoded.
Decoded = Union[list[DecodedSeries], list[CompactSeries], Record, str]


def _decode(payload: memoryview, compact: bool = False) -> Decoded:
    """A record's contents; records of scalars only skip protobuf (see scalar_codec)."""
    series = decode_scalar_record(payload, compact)
    if series is not None:
        return series
    try:
        return Record.FromString(payload)
    except (DecodeError, ValueError, RuntimeError) as exc:
        return str(exc) or type(exc).__name__
