"""``LogReader``: reads the logs under one or more logdirs, incrementally and tolerantly.

The reader knows no log format: run discovery lists the files some source claims (see
:mod:`visualdl.sources.registry`), each file's source is picked by its name and first bytes,
and the source turns the file into chunks of entries, which the reader adds to its runs
(:class:`~visualdl.reader.run_store.RunStore`). Each file's read offset is remembered, so
``reload()`` reads only what was appended. A record cut short at a file's tail is "not yet
written" and is read once complete; damaged bytes are skipped and counted; a file no source
accepts is refused with a message. Nothing a file holds makes ``reload()`` raise.

A logdir may be a URL (``s3://bucket/prefix``, any fsspec filesystem): the sources read its
files through :mod:`visualdl.storage` as they read local ones, and each reload lists the
prefix once and reads only what the listing shows to be new.
"""

from __future__ import annotations

import os
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from visualdl.format.names import file_start, segment_key
from visualdl.format.scalar_codec import CompactSeries
from visualdl.kinds import registry as kinds
from visualdl.reader import discovery, first_load, run_health, scalar_cache, scalar_persist
from visualdl.reader.run_health import FileFacts, RunHealth
from visualdl.reader.run_store import RunStore
from visualdl.sources import registry as sources
from visualdl.sources.base import Chunk, SourceFile
from visualdl.sources.ours.first_pass import Batch
from visualdl.sources.values import BlobRef, FileInfo, Scalars
from visualdl.storage.location import File
from visualdl.storage.remote import Stats

__all__ = ["LogReader", "FileState"]

_MAX_MESSAGES = 200


@dataclass
class FileState:
    """One file a reader found: its run, the source file reading it (``reader``, None until
    its first bytes told which source it is), and what reading it gave."""

    path: str
    run: str
    file_id: int
    file: File = field(repr=False)
    reader: SourceFile | None = field(default=None, repr=False)
    refused: str = ""      # why the file is not read, when it is not
    errors: int = 0
    records: int = 0
    seen: tuple | None = field(default=None, repr=False)  # its stat token at the last read
    cache: Any = field(default=None, repr=False)  # its scalar_persist.FileCache, once looked at
    cache_checked: bool = False  # whether a previous start's cache was looked for
    # offsets of records holding more than scalars, while the file has no cache (it gets
    # one when a series spills: then they are the cache's, see scalar_persist)
    others: list = field(default_factory=list, repr=False)
    stat: Any = field(default=None, repr=False)  # its Stat at the last reload (run health)
    last_offset: int = -1  # the offset of the last record whose entries were added

    @property
    def source(self) -> str:
        """The name of the source reading it ("" while that is not known)."""
        return self.reader.source.name if self.reader is not None else ""

    @property
    def offset(self) -> int:
        return self.reader.offset if self.reader is not None else 0

    @property
    def header(self) -> Any:
        """Its ``FileHeader`` (made up for formats that have none), None until read."""
        return self.reader.header if self.reader is not None else None


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
        self._run_files: dict[str, list[FileState]] = {}  # run -> its files (run health)
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
        self._batch: Batch | None = None  # pass 1's series, decoded many at once
        # Called between files of the first load's second pass (a server lets the requests
        # being answered go first: LogReaderProvider._yield_to_requests).
        self.pause_hook: Callable[[], None] | None = None
        self._health = run_health.NonFiniteScan()
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
            states = self._discover()
            if self._phase != "waiting":
                return sum(self._read_file(state) for state in states)
            try:
                new = self._first_load(states)
            finally:
                self._batch = None  # (it holds a method of this reader: no cycle kept)
                with self._lock:
                    self._phase = "done"
                    self._pending.clear()
                    self._deferred.clear()
                    self.version += 1  # answers flagged "loading" are stale now
            if not sources.plugins_loaded() and sources.load_plugins():
                # plugins' formats: looked up once the built-in ones are loaded (the
                # entry-point scan would delay the first chart), then read like the rest
                new += sum(self._read_file(state) for state in self._discover())
            return new

    def _discover(self) -> list[FileState]:
        listed: list[tuple[str, str, discovery.Root]] = []
        complete = True
        for root in self._roots:
            try:
                found = discovery.find_files(root)
            except OSError as exc:
                self._error(f"{root.path}: cannot list directory: {exc}")
                complete = False
                continue
            except Exception as exc:  # noqa: BLE001 - any storage error (botocore's, ...)
                self._error(f"{root.path}: cannot list: {type(exc).__name__}: {exc}")
                complete = False
                continue
            for run_dir, paths in found.items():
                run = discovery.run_name(root, run_dir)
                listed.extend((path, run, root) for path in paths)
        if complete:
            self._forget_vanished({path for path, _, _ in listed})
        return [self._file_state(path, run, root) for path, run, root in listed]

    def _forget_vanished(self, listed: set[str]) -> None:
        """Forget each run with a file that a complete listing no longer shows, whole: its
        remaining files are read again from their start. Writers never delete files, so a
        file gone was removed by a user, most often with its run folder to run the job
        again while the dashboard is open; its points must not stay beside the new run's."""
        with self._lock:
            gone = {state.run for path, state in self._files.items() if path not in listed}
            for run in gone:
                for state in self._run_files.pop(run, ()):
                    self._files.pop(state.path, None)
                self._runs.pop(run, None)
                self._health.forget(run)
            if gone:
                self.version += 1

    def _file_state(self, path: str, run: str, root: discovery.Root) -> FileState:
        with self._lock:
            state = self._files.get(path)
            if state is None:
                # The segments of one writer are one stream: one id, so that its points
                # append to one series in order (see visualdl.format.names).
                key = segment_key(path)
                file_id = self._file_ids.setdefault(key[0] if key else path,
                                                    len(self._file_ids))
                state = FileState(path, run, file_id, root.location.file(path))
                self._files[path] = state
                self._run_files.setdefault(run, []).append(state)
            return state

    def _read_file(self, state: FileState, keep: frozenset[str] | None = None) -> int:
        """Read on from the file's offset; ``keep``: the first pass of the first load,
        which decodes only these scalar tags (see :mod:`visualdl.reader.first_load`)."""
        if state.refused:
            return 0
        try:
            stat = state.stat = state.file.stat()
            if stat is None or (state.reader is None and not self._pick(state)):
                return 0
            sf = state.reader
            assert sf is not None
            if not sf.due(stat, state.seen):
                return 0
            if not state.cache_checked:  # first read: series a previous start cached
                state.cache_checked = True
                if self._restore_possible and _may_be_cached(stat.size):
                    if not scalar_persist.restore(self, state):  # what it was told: forgotten
                        self._open(state, sf.source)
                    sf = state.reader
            if keep is not None and _may_defer(state) and not sf.offset and \
                    stat.size <= first_load.MAX_FILE_BYTES:
                return self._first_pass(state, stat, keep)
            count = self._apply(state, sf.read(state.file, stat))
            if not state.refused:
                state.seen = stat.token
            if count:
                self._save(state)
            return count
        except OSError as exc:
            self._error(f"{state.path}: cannot read: {exc}")
        except Exception as exc:  # noqa: BLE001 - a storage library's error, a plugin's bug
            self._error(f"{state.path}: cannot read: {type(exc).__name__}: {exc}")
        return 0

    def _pick(self, state: FileState) -> bool:
        """Choose the file's source by its name and first bytes; False while they are too
        few to tell, or when no source takes the file (then it is refused)."""
        picked = sources.pick(os.path.basename(state.path), state.file.head)
        if picked is None:
            return False
        if isinstance(picked, sources.Refused):
            state.file.release()
            self._refuse(state, str(picked))
            return False
        self._open(state, picked)
        return True

    def _open(self, state: FileState, source: Any) -> None:
        state.reader = source.open(state.path)
        if hasattr(state.reader, "compact"):  # the run store keeps series compact
            state.reader.compact = True

    def _apply(self, state: FileState, chunks: Iterable[Chunk]) -> int:
        """Add each chunk under the lock as it comes; the number of records read."""
        count = 0
        for chunk in chunks:
            with self._lock:
                self._add_chunk(state, chunk)
                if chunk.records or chunk.entries:
                    self.version += 1
            count += chunk.records
            if chunk.refused:
                break
        return count

    def _add_chunk(self, state: FileState, chunk: Chunk) -> None:
        """Add one chunk of a file (lock held)."""
        for message in chunk.errors:
            state.errors += 1
            self._error(f"{state.path}: {message}")
        for message in chunk.notes:
            self._error(f"{state.path}: {message}")
        state.records += chunk.records
        others = scalar_persist.others_of(state)
        if others is not None:
            others.extend(chunk.others)
        for offset, entries in chunk.entries:
            self._add_entries(state, entries, offset)
        if chunk.refused:
            self._refuse(state, chunk.refused)

    def _add_entries(self, state: FileState, entries: list, offset: int) -> None:
        """Add decoded entries to the file's run (lock held); a bad one is counted and the
        rest still go in."""
        if not entries:
            return
        state.last_offset = max(state.last_offset, offset)
        store = self._store_for(state.run)
        if isinstance(entries[0], CompactSeries):
            for why in store.add_compact(entries, state.file_id):  # a record's series
                state.errors += 1
                self._error(f"{state.path}: bad entry at offset {offset}: {why}")
            return
        if isinstance(entries[0], BlobRef):  # a file read whole: one blob of its run
            for ref in entries:
                store.add_event(ref.kind, ref.tag, state.file_id, ref)
            return
        source = state.source
        for entry in entries:
            try:
                store.add_entry(entry, state.file_id, state.path, offset, source)
            except (ValueError, TypeError) as exc:
                state.errors += 1
                self._error(f"{state.path}: bad entry at offset {offset}: {exc}")

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
        candidates = sum(1 for s in states if _may_defer(s, before_pick=True))
        if candidates < first_load.MIN_FILES:
            with self._lock:
                self._phase = "load"
            return sum(self._read_file(state) for state in states)
        with self._lock:
            self._phase = "first"
        self._batch = Batch(self._add_batched)
        new = 0
        for state in states:
            with self._lock:  # fixed for the whole file: its series keep their order
                keep = frozenset(self._priority)
            new += self._read_file(state, keep or None)
            if not keep:  # the first run read names the first chart: its first tag
                store = self._runs.get(state.run)
                with self._lock:
                    if store is not None and store.scalars and not self._priority:
                        self._priority.add(min(store.scalars))
        self._batch.flush()
        with self._lock:
            self._phase = "second"
            self.version += 1
        for state, end, keep, pending in list(self._deferred):
            if self.pause_hook is not None:
                self.pause_hook()
            self._second_pass(state, end, keep)
            with self._lock:
                for tag in pending:
                    self._pending[tag] -= 1
            new += self._read_file(state)  # what was appended since
        return new

    def _first_pass(self, state: FileState, stat: Any, keep: frozenset[str]) -> int:
        sf = state.reader
        count = self._apply(state, sf.first_pass(state.file, stat, keep, self._batch, state))
        if not state.refused:
            state.seen = stat.token
        if sf.left and not state.refused:
            with self._lock:
                self._store_for(state.run).declare_scalars(sf.left, state.file_id)
                self._deferred.append((state, sf.offset, keep, sf.left))
                for tag in sf.left:
                    self._pending[tag] = self._pending.get(tag, 0) + 1
            return count  # saved after its second pass
        if count:
            self._batch.flush()  # its series, before looking for spilled ones
            self._save(state)
        return count

    def _second_pass(self, state: FileState, end: int, keep: frozenset[str]) -> None:
        """Add the series pass 1 left of the records before ``end``."""
        try:
            self._apply(state, state.reader.second_pass(state.file, end, keep))
        except OSError as exc:
            self._error(f"{state.path}: cannot read: {exc}")
        except Exception as exc:  # noqa: BLE001 - as in _read_file
            self._error(f"{state.path}: cannot read: {type(exc).__name__}: {exc}")
        self._save(state)

    def _add_batched(self, state: FileState, offset: int, series: Any) -> None:
        """Add a record's series decoded by the first pass's batch, or count why it could
        not be (the codec and protobuf both failed: ``series`` is the reason)."""
        with self._lock:
            if state.refused:
                return
            if isinstance(series, str):
                state.errors += 1
                self._error(f"{state.path}: undecodable record at offset {offset}: {series}")
            else:
                self._add_entries(state, series, offset)
            self.version += 1

    # -- the scalar disk cache -----------------------------------------------------------
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

    def _store_for(self, run: str) -> RunStore:
        """The run's store, made on its first entry (lock held)."""
        store = self._runs.get(run)
        if store is None:
            store = self._runs[run] = RunStore()
        return store

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

    def scalars(self, run: str, tag: str, rank: int | None = None) -> Scalars:
        """All points of a scalar tag: (steps, wall_times, values) as read-only arrays.
        In a data-parallel run, those of one ``rank`` (by default rank 0's, with those of
        files that name no rank; see :meth:`default_rank`): ranks are never merged (see
        :meth:`ranks`)."""
        with self._lock:
            store = self._store(run)
            if tag not in store.scalars:
                raise KeyError(f"run {run!r} has no scalar tag {tag!r}")
            return store.scalar_view(tag, rank)

    def scalar_ends(self, run: str, tag: str, rank: int | None = None,
                    ) -> tuple[int, float, float, float] | None:
        """(points, first wall time, last wall time, last value) of a scalar tag (of one
        ``rank``, as for :meth:`scalars`), None when it has no points; cheaper than
        :meth:`scalars` (nothing is copied)."""
        with self._lock:
            store = self._store(run)
            if tag not in store.scalars:
                raise KeyError(f"run {run!r} has no scalar tag {tag!r}")
            return store.scalar_ends(tag, rank)

    def ranks(self, run: str) -> list[int]:
        """The ranks of a data-parallel run whose files are read, from their ``Worker``
        records; [] for a run of one process."""
        with self._lock:
            return self._store(run).ranks()

    def default_rank(self, run: str, tag: str) -> int | None:
        """The rank whose series :meth:`scalars` gives for ``tag`` when none is asked for:
        rank 0's, or the lowest rank that logged the tag when rank 0 did not; None for a
        run of one process."""
        with self._lock:
            store = self._store(run)
            return store.default_rank(tag) if store.file_ranks else None

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

    def boxes(self, ref: BlobRef) -> Any:
        """The boxes recorded over an image (a ref of ``images``): a
        ``visualdl.reader.Boxes`` of N x 4 pixels, labels and scores (N = 0 for none)."""
        return kinds.get("image").part("read").load_boxes(self.load(ref))

    def audio(self, run: str, tag: str) -> list[BlobRef]:
        return self.events(run, "audio", tag)

    def videos(self, run: str, tag: str) -> list[BlobRef]:
        """Every video of one tag; ``load(ref)`` gives its ``Video`` (``data``, ``mime``)."""
        return self.events(run, "video", tag)

    def meshes(self, run: str, tag: str) -> list[BlobRef]:
        """Every mesh of one tag; ``visualdl.kinds.mesh.read.arrays(load(ref))`` unpacks one."""
        return self.events(run, "mesh", tag)

    def figures(self, run: str, tag: str) -> list[BlobRef]:
        return self.events(run, "figure", tag)

    def graphs(self, run: str, tag: str) -> list[BlobRef]:
        return self.events(run, "graph", tag)

    def embeddings(self, run: str, tag: str) -> list[BlobRef]:
        return self.events(run, "embedding", tag)

    def tables(self, run: str, tag: str) -> list:
        """Every step's table, loaded (``visualdl.kinds.table.read.TableData``: columns,
        cells, ``rows``, ``to_pandas()``). A step whose cells do not add up (a damaged
        record) is left out with a warning naming it, so the others stay readable."""
        decode = kinds.get("table").part("read").decode
        found = []
        for ref in self.events(run, "table", tag):
            try:
                found.append(decode(self.load(ref)))
            except ValueError as err:
                warnings.warn(f"run {run!r}, table {tag!r} at step {ref.step} ({ref.path}) "
                              f"cannot be read: {err}", RuntimeWarning, stacklevel=2)
        return found

    def tensors(self, run: str, tag: str) -> list:
        """Every step's tensor, loaded (``TensorEvent``: step, wall_time, numpy ``value``)."""
        decode = kinds.get("tensor").part("read").decode
        return [decode(self.load(ref)) for ref in self.events(run, "tensor", tag)]

    def blobs(self, run: str, kind: str, tag: str) -> list[BlobRef]:
        """The index of one tag of a blob kind (image, audio, figure, graph, embedding, or a
        plugin's)."""
        if kind not in kinds.blob_names():
            raise KeyError(f"{kind!r} is not a blob kind")
        return self.events(run, kind, tag)

    def hparams(self, run: str) -> Any:
        """The run's latest hyper-parameters (an ``HParamsEvent``), or None; with the metrics
        and domains of the experiment above it (TensorBoard's ``hparams_config`` in a parent
        folder: its trials in the folders below take them, as in the HParams view); an
        experiment (a declaration, no values) only when the run has nothing else."""
        return kinds.get("hparams").part("table").run_hparams(self, run)

    def config(self, run: str) -> Any:
        """The run's config view (a ``visualdl.kinds.config.merge.RunConfig``): its
        ``add_config`` configs merged (``.nested``), its hparams (``.hparams``), and both as
        dotted keys (``.flat``); KeyError for an unknown run."""
        return kinds.get("config").part("merge").run_config(self, run)

    def load(self, ref: BlobRef) -> Any:
        """Read one blob's message (``Image``, ``Audio``, ...) back, by the source that
        read it (a trace's JSON, for a PyTorch trace)."""
        with self._lock:
            state = self._files.get(ref.path)
        if state is None or state.reader is None:
            raise ValueError(f"{ref.path}: not a file of this reader")
        return state.reader.load(state.file, ref, kinds.get(ref.kind).message)

    def scalars_frame(self, runs: str | list[str] | None = None,
                      tags: str | list[str] | None = None) -> Any:
        """Every point of the chosen runs and scalar tags (all by default) as a pandas
        DataFrame in long form: columns ``run``, ``tag`` (categoricals), ``step``,
        ``wall_time``, ``value``. Needs pandas (``pip install "visualdl[analysis]"``);
        see :mod:`visualdl.reader.frame`."""
        from visualdl.reader.frame import scalars_frame

        return scalars_frame(self, runs, tags)

    def storage_stats(self) -> Any:
        """Requests and bytes of the logdirs in object storage so far (a
        :class:`visualdl.storage.remote.Stats`), or None when every logdir is local."""
        found = [root.location.stats() for root in self._roots]
        remotes = [s for s in found if s is not None]
        if not remotes:
            return None
        return sum(remotes, Stats())

    def files(self, run: str | None = None) -> list[FileState]:
        """The files read so far (all, or one run's), with their headers and errors."""
        with self._lock:
            return [s for s in self._files.values() if run is None or s.run == run]

    def file_infos(self) -> list[FileInfo]:
        """What :meth:`files` says of each file, as plain values (see ``FileInfo``)."""
        with self._lock:
            return [FileInfo(s.path, s.run, s.source, s.offset) for s in self._files.values()]

    def run_health(self, run: str, now: float | None = None) -> RunHealth:
        """The run's state (running, finished, stalled, crashed) and its first non-finite
        scalar: see :mod:`visualdl.reader.run_health`. KeyError for an unknown run."""
        with self._lock:
            store = self._store(run)
            files = [_file_facts(s, store) for s in self._run_files.get(run, ())
                     if s.reader is not None and not s.refused]
            tags = list(store.scalars)
            ends = {tag: store.scalar_ends(tag) for tag in tags}  # one lock for all tags
        nan = self._health.first_nonfinite(run, tags, lambda t: self.scalars(run, t),
                                           {t: e[0] for t, e in ends.items() if e})
        return run_health.assess(files, [e for e in ends.values() if e], nan, now)

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


def _file_facts(state: FileState, store: RunStore) -> FileFacts:
    """What run health needs to know of one file (lock held)."""
    stat = state.stat
    header = state.header
    # a stream of segments (object storage) gets no close marker: judged by its age
    marked = state.source == "visualdl" and header is not None and \
        header.format_minor >= run_health.CLOSE_MARKER_MINOR and segment_key(state.path) is None
    close = store.closed.get(state.file_id)
    return FileFacts(
        path=state.path,
        marked=marked,
        closed=close is not None and close >= state.last_offset,
        torn=stat is not None and not state.reader.source.whole and state.offset < stat.size,
        mtime=stat.mtime if stat is not None else None,
        started=file_start(state.path), rank=store.file_ranks.get(state.file_id))


def _may_defer(state: FileState, before_pick: bool = False) -> bool:
    """A local file not read yet whose source reads it in two passes (``before_pick``:
    counted before any file is opened, by the names alone: a file only our source claims
    by name may)."""
    if state.records or state.refused or not state.file.local:
        return False
    if state.reader is not None:
        return state.reader.two_pass
    return before_pick and segment_key(state.path) is None and \
        bool(_two_pass_sources(os.path.basename(state.path)))


def _two_pass_sources(name: str) -> list:
    return [s for s in sources.claimants(name) if s.two_pass]


def _may_be_cached(size: int) -> bool:
    """Whether a file this size may have a persisted cache: only files holding a spilled
    series have one, and a series spills past ``SPILL_POINTS`` points of at least 17
    bytes each (a varint step and two doubles; 9 is the bound used)."""
    return size > scalar_cache.SPILL_POINTS * 9


def _cache_folder_exists() -> bool:
    """Whether any record file has a persisted scalar cache (one stat per reload rather
    than a cache lookup per file, which adds up over thousands of files)."""
    try:
        return scalar_persist.may_restore()
    except (OSError, RuntimeError):  # no home directory to find the cache in
        return False
