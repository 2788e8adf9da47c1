"""``LogWriter``: the training loop's side of visualdl.

The caller's thread only checks values and appends them to buffers (copying arrays it
keeps); a background thread encodes records and writes them. Memory is bounded: when
too many batches wait for the writer thread, the caller waits too. Nothing is dropped.

Scalars take the fastest path: each thread appends to buffers of its own (one list per
tag), without a lock. Only the thread that takes buffers away (a hand-off, ``flush()`` or
the periodic flush) locks, and it takes exactly the first ``n`` points of each list:
``list.append`` and ``del lst[:n]`` are atomic, so points appended meanwhile stay for the
next batch.
"""

from __future__ import annotations

import atexit
import collections
import os
import socket
import threading
import time
from _thread import _local as ThreadLocal
import warnings
import weakref
from datetime import datetime
from typing import Any, Iterable, Mapping

from visualdl.format import names, scalar_codec
from visualdl.format.record_pb2 import Close, Entry, FileHeader, Record
from visualdl.format.version import FORMAT_MAJOR, FORMAT_MINOR
from visualdl.kinds import registry
from visualdl.kinds.spec import Kind
from visualdl.kinds.checks import check_step, check_tag, check_walltime, scalar_value
from visualdl.writer.record_file import NotAppendable, RecordFileWriter, RecordWriteError
from visualdl.writer.segments import SegmentWriter
import visualdl.storage as storage

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_MAX_BATCHES = 4  # batches waiting for the writer thread before callers wait
_MAX_PENDING_BYTES = 8 << 20  # hand a batch over early when its arrays get this big
_RECORD_TARGET = 1 << 20  # small entries are packed into records of about this size
# After a failed write (disk full, file too large), records wait in memory for a retry up
# to the usual bound on queued data; beyond it the newest are dropped and counted.
_MAX_UNWRITTEN_BYTES = _MAX_BATCHES * _MAX_PENDING_BYTES
_now = time.time


class _Batch:
    __slots__ = ("scalars", "items")

    def __init__(self, scalars: dict, items: list) -> None:
        self.scalars = scalars
        self.items = items


def default_logdir(comment: str = "") -> str:
    stamp = datetime.now().strftime("%b%d_%H-%M-%S")
    return os.path.join("runs", stamp + (f".{comment}" if comment else ""))


class LogWriter:
    """Record scalars, images, audio, text, histograms, curves, embeddings, hyper-parameters,
    figures and model graphs into ``logdir``.

    ``logdir`` may be a URL (``s3://bucket/prefix/run``, ``gs://``, ``az://``,
    ``memory://``: any fsspec filesystem, with ``storage_options`` passed to it): the run
    is then written as immutable segment objects, one per flush (see
    :mod:`visualdl.writer.segments`).

    ``max_queue`` is how many points of one scalar tag (per thread), or how many other
    entries, are buffered before they go to the writer thread; ``flush_secs`` is how
    often buffered data is written anyway.

    ``system_metrics`` is how often (seconds) a background thread samples the machine's
    state while the writer is open: CPU, memory, disk, network and NVIDIA GPUs, as
    ``system/<host>/...`` series (docs/system_metrics.md); ``False`` turns it off.

    ``rank`` and ``world_size``: this writer is one worker of a data-parallel run. Left as
    None, they are taken from the environment a launcher sets (``RANK``/``WORLD_SIZE``:
    torchrun, Ray Train; ``PADDLE_TRAINER_ID``/``PADDLE_TRAINERS_NUM``); when neither says
    anything the run has one process and its file is as it always was. A ranked writer's
    file name carries its rank (each rank writes a file of its own into the shared run
    folder) and its file starts with a ``Worker`` record (rank, world size, host, pid), so
    the dashboard keeps each rank's curves apart (docs/distributed_logs.md).

    >>> with LogWriter(logdir="runs/exp1") as writer:
    ...     writer.add_scalar("train/loss", 0.25, step=1)
    """

    def __init__(
        self,
        logdir: str | os.PathLike | None = None,
        comment: str = "",
        max_queue: int = 4096,
        flush_secs: float = 5.0,
        filename_suffix: str = "",
        display_name: str = "",
        file_name: str = "",
        storage_options: Mapping[str, Any] | None = None,
        system_metrics: float | bool = 10,
        *,
        rank: int | None = None,
        world_size: int | None = None,
    ) -> None:
        interval = _kind("system").part("sample").interval_of(system_metrics)
        # (rank, world_size), or None for a single-process run
        self._worker = _kind("workers").part("write").resolve_rank(rank, world_size)
        if isinstance(max_queue, bool) or not isinstance(max_queue, int) or max_queue < 1:
            raise ValueError(f"max_queue must be a positive integer, got {max_queue!r}")
        if not isinstance(flush_secs, (int, float)) or not flush_secs > 0:
            raise ValueError(f"flush_secs must be a positive number, got {flush_secs!r}")
        if file_name and (os.sep in file_name or names.RECORD_MARK not in file_name):
            raise ValueError(
                f"file_name must be a bare file name containing 'vdlrecords', got {file_name!r}"
            )
        if os.sep in filename_suffix:
            raise ValueError(f"filename_suffix must not contain {os.sep!r}")
        self._logdir = storage.local_path(os.fspath(logdir)) if logdir else \
            default_logdir(comment)
        # A URL (s3://, gs://, memory://, ...) is written as immutable segment objects.
        self._storage_options = dict(storage_options or {})
        self._remote = storage.open_fs(self._logdir, self._storage_options) \
            if storage.is_url(self._logdir) else None
        if self._remote is None:
            if os.path.exists(self._logdir) and not os.path.isdir(self._logdir):
                raise ValueError(f"logdir {self._logdir!r} exists and is not a directory")
            os.makedirs(self._logdir, exist_ok=True)
        elif file_name:
            raise ValueError("file_name cannot be given for a logdir in object storage: "
                             "each writer writes segments of its own")
        self._max_queue = max_queue
        self._max_flat = 3 * max_queue
        self._flush_secs = float(flush_secs)
        self._suffix = filename_suffix
        self._display_name = display_name
        self._closed = False
        self._reset_state()
        self._path = self._join(file_name or self._default_file_name())
        self._file: RecordFileWriter | SegmentWriter | None = None
        self._open_file()  # the file exists as soon as the writer does
        _LIVE.add(self)
        self._start_thread()
        self._sampler = None if interval is None else _kind("system").part("sample").start(
            self.add_scalar, interval, None if self._remote is not None else self._logdir)

    # -- state ------------------------------------------------------------------
    def _reset_state(self) -> None:
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        # .series: this thread's {tag: [step, wall, value, step, wall, value, ...]}; flat
        # lists cost the caller less than tuples and decode straight into numpy.
        self._local = ThreadLocal()
        # Every thread's .series, with its thread, so that dead threads can be let go.
        self._all_series: list[tuple[threading.Thread, dict[str, list]]] = []
        self._items: list = []
        self._pending_bytes = 0  # array bytes held by self._items
        self._batches: collections.deque[_Batch] = collections.deque()
        self._handed = 0
        self._written = 0
        self._stopping = False
        self._error: BaseException | None = None  # not yet raised by flush()/close()
        self._failing: BaseException | None = None  # the write error of a failure going on
        self._unwritten: list[bytes] = []  # records a failed write left, for the next try
        self._unwritten_bytes = 0
        self._lost = 0  # records dropped because too many waited after failed writes
        self._lost_reported = 0  # of those, how many an exception has already told about
        self._thread: threading.Thread | None = None
        # add_scalars charts recorded in this file: main_tag -> its keys (set, and in order)
        self._charts: dict[str, frozenset] = {}
        self._chart_keys: dict[str, list[str]] = {}

    def _default_file_name(self) -> str:
        suffix = self._suffix if self._worker is None else \
            names.rank_suffix(self._worker[0]) + self._suffix
        if self._remote is not None:  # a stream of segments (see visualdl.writer.segments)
            return names.stream_name(suffix)
        return names.record_file_name(suffix)

    def _join(self, name: str) -> str:
        if self._remote is not None:
            return self._remote.join(self._logdir, name)
        return os.path.join(self._logdir, name)

    def _open_file(self) -> None:
        self._file = self._open_record_file()
        self._file.write(self._opening_records())

    def _opening_records(self) -> list[bytes]:
        """What a file starts with: its header, then (a ranked writer) its ``Worker``."""
        records = [self._header_record()]
        if self._worker is not None:
            records.append(_kind("workers").part("write").opening_record(*self._worker))
        return records

    def _header_record(self) -> bytes:
        header = FileHeader(
            format_major=FORMAT_MAJOR,
            format_minor=FORMAT_MINOR,
            writer_version=_version(),
            hostname=socket.gethostname(),
            pid=os.getpid(),
            created=time.time(),
            display_name=self._display_name,
        )
        return Record(header=header).SerializeToString()

    def _open_record_file(self) -> RecordFileWriter:
        """Open ``self._path`` for appending; when it ends in anything but a torn tail (so
        that appending could bury what is there), write a new file next to it instead.
        In object storage, segments are written instead (nothing to open)."""
        if self._remote is not None:
            return SegmentWriter(self._remote, self._path)
        try:
            return RecordFileWriter(self._path)
        except NotAppendable as exc:
            new = self._fresh_path()
            warnings.warn(f"visualdl: {exc}; writing to {new} instead", RuntimeWarning,
                          stacklevel=4)
            self._path = new
            return RecordFileWriter(new)

    def _fresh_path(self) -> str:
        """A new file name next to the current one (same run, still a record file)."""
        root, ext = os.path.splitext(self._path)
        n = 1
        while os.path.exists(f"{root}.{n}{ext}"):
            n += 1
        return f"{root}.{n}{ext}"

    def _after_fork_in_child(self) -> None:
        """The child starts empty: the parent flushes its own buffers into its own file."""
        self._reset_state()
        self._file = None
        self._sampler = None  # its thread stayed in the parent
        if self._remote is not None:  # fsspec's clients are not fork-safe: a new one
            self._remote = storage.open_fs(self._logdir, self._storage_options)
        self._path = self._join(self._default_file_name())

    # -- properties ---------------------------------------------------------------
    @property
    def logdir(self) -> str:
        return self._logdir

    @property
    def file_name(self) -> str:
        return self._path

    @property
    def rank(self) -> int | None:
        """This writer's rank in a data-parallel run; None for a single-process run."""
        return None if self._worker is None else self._worker[0]

    @property
    def world_size(self) -> int | None:
        """How many workers the run started with; None for a single-process run."""
        return None if self._worker is None else self._worker[1]

    # -- the caller's side --------------------------------------------------------
    def add_scalar(self, tag: str, value: Any, step: int, walltime: float | None = None) -> None:
        """Record one number. NaN and infinities are data and are kept as such."""
        # The fast path is written out inline: this is called millions of times.
        if type(value) is not float:
            value = scalar_value(tag, value)
        if type(step) is not int or not _INT64_MIN <= step <= _INT64_MAX:
            step = check_step(tag, step)
        if walltime is None:
            walltime = _now()
        elif type(walltime) is not float or walltime - walltime:  # x - x: nan unless finite
            walltime = check_walltime(tag, walltime)
        try:
            points = self._local.series[tag]
        except (AttributeError, KeyError, TypeError):
            points = self._new_series(tag)
        points.extend((step, walltime, value))  # one atomic extend: never half a point
        if len(points) >= self._max_flat:
            self._hand_off_now()
        if self._closed:  # checked after the append: close() sets it before collecting
            raise RuntimeError(f"{tag!r}: add_scalar called after the LogWriter was closed")

    def _new_series(self, tag: Any) -> list:
        """The calling thread's buffer for ``tag`` (slow path: first use of a tag)."""
        check_tag(tag)
        series = getattr(self._local, "series", None)
        if series is None:
            series = self._local.series = {}
            with self._lock:
                self._all_series.append((threading.current_thread(), series))
                self._ensure_thread()
        return series.setdefault(tag, [])

    def _hand_off_now(self) -> None:
        with self._lock:
            self._hand_off()

    def add_scalars(
        self, main_tag: str, tag_scalar_dict: Mapping[str, Any], step: int,
        walltime: float | None = None,
    ) -> None:
        """Record several numbers under ``main_tag/<key>``, all in this run, drawn as one
        chart titled ``main_tag`` with a line per key. The chart itself is recorded once per
        new key (a ``custom_scalars`` entry), so the grouping is data, not guessed from tag
        names, and costs nothing per step."""
        check_tag(main_tag)
        if not isinstance(tag_scalar_dict, Mapping):
            raise TypeError(f"{main_tag!r}: tag_scalar_dict must be a dict of tag -> number")
        walltime = _now() if walltime is None else check_walltime(main_tag, walltime)
        known = self._charts.get(main_tag)
        if known is None or not known.issuperset(tag_scalar_dict):
            self._new_chart_keys(main_tag, tag_scalar_dict, walltime)
        for key, value in tag_scalar_dict.items():
            self.add_scalar(f"{main_tag}/{key}", value, step, walltime)

    def _new_chart_keys(self, main_tag: str, tag_scalar_dict: Mapping[str, Any],
                        walltime: float) -> None:
        """Record the chart of ``main_tag`` with every key it has had so far (slow path)."""
        keys = list(self._chart_keys.get(main_tag, ()))
        for key in tag_scalar_dict:
            check_tag(key)
            if key not in keys:
                keys.append(key)
        payload, nbytes = _kind("custom_scalars").part("write").chart(main_tag, keys)
        self._add_item("custom_scalars", main_tag, 0, walltime, payload, nbytes)
        self._chart_keys[main_tag] = keys
        self._charts[main_tag] = frozenset(keys)

    def add_custom_scalars(self, layout: Mapping[str, Mapping[str, Any]],
                           walltime: float | None = None) -> None:
        """Record a custom layout of scalar charts, TensorBoard's layout dictionary::

            {"Losses": {"train vs val": ["Multiline", [r"loss/(train|val)$"]],
                        "accuracy": ["Margin", ["acc", "acc_lo", "acc_hi"]]}}

        Multiline charts draw every scalar tag matching any of their regexes; margin charts
        draw the value tag with a band between the lower and the upper tag. The run's last
        layout is the one shown."""
        payload, nbytes = _kind("custom_scalars").part("write").check("layout", layout)
        self._add_item("custom_scalars", "custom_scalars", 0, walltime, payload, nbytes)

    def add_image(
        self, tag: str, img: Any, step: int, walltime: float | None = None,
        dataformats: str = "HWC", boxes: Any = None, labels: Any = None, scores: Any = None,
    ) -> None:
        """Record an image (uint8, or float in [0, 1]); a batch (NCHW/NHWC) becomes a grid.

        ``boxes`` (N x 4: xmin, ymin, xmax, ymax in pixels) are kept beside the pixels, with
        optional ``labels`` and ``scores`` (N each): the image view draws and filters them."""
        self.add("image", tag, step, img, dataformats, boxes, labels, scores, walltime=walltime)

    def add_video(
        self, tag: str, frames: Any, step: int, fps: float = 4,
        dataformats: str = "THWC", walltime: float | None = None,
    ) -> None:
        """Record a video (uint8, or float in [0, 1]): THWC, TCHW or THW frames, or a batch
        (NTCHW/NTHWC) laid out as one grid; encoded (MP4, or GIF without PyAV) in the
        writer thread."""
        self.add("video", tag, step, frames, fps, dataformats, walltime=walltime)

    def add_mesh(
        self, tag: str, vertices: Any, step: int, colors: Any = None, faces: Any = None,
        config_dict: Mapping[str, Any] | None = None, walltime: float | None = None,
    ) -> None:
        """Record a point cloud (no ``faces``) or a triangle mesh: vertices (B, N, 3) or
        (N, 3), colours of the same shape in [0, 255], faces (B, F, 3) vertex indices."""
        self.add("mesh", tag, step, vertices, colors, faces, config_dict, walltime=walltime)

    def add_figure(self, tag: str, figure: Any, step: int, walltime: float | None = None) -> None:
        """Record a plotly figure (kept interactive) or a matplotlib figure (as PNG).

        The figure is serialized here, in the caller's thread: figures are mutable."""
        self.add("figure", tag, step, figure, walltime=walltime)

    def add_text(self, tag: str, text_string: str, step: int, walltime: float | None = None) -> None:
        """Record Markdown text."""
        self.add("text", tag, step, text_string, walltime=walltime)

    def add_audio(
        self, tag: str, audio_array: Any, step: int, sample_rate: int = 8000,
        walltime: float | None = None,
    ) -> None:
        """Record audio: shape (frames,) or (frames, channels), float in [-1, 1] or int16."""
        self.add("audio", tag, step, audio_array, sample_rate, walltime=walltime)

    def add_histogram(
        self, tag: str, values: Any, step: int, walltime: float | None = None,
        buckets: int = 30,
    ) -> None:
        """Record the distribution of ``values``; buckets are computed in the writer thread."""
        self.add("histogram", tag, step, values, buckets, walltime=walltime)

    def add_pr_curve(
        self, tag: str, labels: Any, predictions: Any, step: int, num_thresholds: int = 127,
        weights: Any = None, walltime: float | None = None,
    ) -> None:
        """Record a precision-recall curve of binary ``labels`` against probabilities."""
        self.add("pr_curve", tag, step, labels, predictions, num_thresholds, weights,
                 walltime=walltime)

    def add_roc_curve(
        self, tag: str, labels: Any, predictions: Any, step: int, num_thresholds: int = 127,
        weights: Any = None, walltime: float | None = None,
    ) -> None:
        """Record a ROC curve of binary ``labels`` against probabilities."""
        self.add("roc_curve", tag, step, labels, predictions, num_thresholds, weights,
                 walltime=walltime)

    def add_embeddings(
        self, tag: str, mat: Any, metadata: Iterable | None = None,
        metadata_header: Iterable[str] | None = None, step: int = 0,
        walltime: float | None = None, label_img: Any = None,
    ) -> None:
        """Record an N x D matrix with optional per-row metadata (labels or rows of columns)
        and ``label_img``, one thumbnail a row (N x H x W x C, uint8 or float in [0, 1])."""
        self.add("embedding", tag, step, mat, metadata, metadata_header, label_img,
                 walltime=walltime)

    def add_hparams(
        self, hparams_dict: Mapping[str, Any], metrics_list: Iterable[str],
        walltime: float | None = None,
    ) -> None:
        """Record this run's hyper-parameters and the scalar tags that measure it."""
        payload, nbytes = _kind("hparams").part("write").check(hparams_dict, metrics_list)
        self._add_item("hparams", "hparams", 0, walltime, payload, nbytes)

    def add_config(self, config: Any, walltime: float | None = None) -> None:
        """Record this run's whole configuration: a nested dict, an ``argparse.Namespace``,
        a dataclass, an OmegaConf/Hydra config, or the path of a YAML/JSON file. It is
        checked and copied now (a value that is not a number, string, bool, None, dict or
        list raises naming its dotted key); a later call is merged over earlier ones, key by
        key. The dashboard shows it nested and as dotted keys (``model.depth``)."""
        payload, nbytes = _kind("config").part("write").check(config)
        self._add_item("config", "config", 0, walltime, payload, nbytes)

    def add_resize(self, world_size: int, step: int, restart: int,
                   walltime: float | None = None) -> None:
        """Record an elastic restart or resize: the group now has ``world_size`` workers and
        resumed training at ``step``; ``restart`` counts them 1, 2, ... The charts mark it
        on their step axis and the run table counts the restarts."""
        rank = 0 if self._worker is None else self._worker[0]
        step = check_step("add_resize", step)
        payload, nbytes = _kind("workers").part("write").check(rank, world_size, step, restart)
        self._add_item("workers", "workers", step, walltime, payload, nbytes)

    def add_checkpoint(self, path: str | os.PathLike, step: int,
                       walltime: float | None = None) -> None:
        """Record that a checkpoint was saved at ``step`` (``path`` as the training engine
        reports it: a file, a folder or a URL); the run's checkpoints are listed with their
        step."""
        rank = 0 if self._worker is None else self._worker[0]
        payload, nbytes = _kind("checkpoint").part("write").check(rank, path)
        self._add_item("checkpoint", "checkpoint", step, walltime, payload, nbytes)

    def add_graph(self, model: Any, step: int = 0, tag: str = "model",
                  walltime: float | None = None, input_spec: Any = None) -> None:
        """Record a model graph: an ``onnx.ModelProto``, ONNX bytes, the path of a ``.onnx``
        file, or any object with a ``to_onnx()`` method (a ``visualdl.framework`` layer,
        traced here on ``input_spec``: example inputs or ``vf.jit.InputSpec``s)."""
        self.add("graph", tag, step, model, input_spec, walltime=walltime)

    def add_profile(self, tag: str, trace: Any, step: int, end_step: int | None = None,
                    walltime: float | None = None) -> None:
        """Record a profile of steps ``step``..``end_step``: a Chrome trace-event document
        (a dict, JSON text/bytes, gzip bytes, or the path of a ``.json``/``.json.gz`` file,
        as ``vf.profiler`` and ``torch.profiler`` write them). ``tag`` names the worker."""
        self.add("profile", tag, step, trace, end_step, walltime=walltime)

    def add_table(self, tag: str, data: Any, step: int, columns: Iterable[Any] | None = None,
                  walltime: float | None = None) -> None:
        """Record a table: a pandas DataFrame, a dict of columns or a list of rows (with
        ``columns=``). Cells are numbers, text, images (arrays or PIL images) or audio
        (``visualdl.Audio``); media are encoded in the writer thread (docs/tables.md)."""
        self.add("table", tag, step, data, columns, walltime=walltime)

    def add_tensor(self, tag: str, tensor: Any, step: int, walltime: float | None = None) -> None:
        """Record an array of numbers as it is (dtype, shape, values)."""
        self.add("tensor", tag, step, tensor, walltime=walltime)

    def add(self, kind: str, tag: str, step: int, *value: Any,
            walltime: float | None = None, **options: Any) -> None:
        """Record ``value`` of any registered kind (built in or from a plugin): the kind's
        ``write.check(tag, *value, **options)`` checks it now, its ``encode`` runs in the
        writer thread (see docs/adding_a_kind.md)."""
        check_tag(tag)
        payload, nbytes = _kind(kind).part("write").check(tag, *value, **options)
        self._add_item(kind, tag, step, walltime, payload, nbytes)

    def _add_item(self, kind: str, tag: str, step: Any, walltime: Any, payload: Any,
                  nbytes: int) -> None:
        step = check_step(tag, step)
        walltime = _now() if walltime is None else check_walltime(tag, walltime)
        with self._cond:
            if self._closed:
                raise RuntimeError(f"{tag!r}: add_{kind} called after the LogWriter was closed")
            self._ensure_thread()
            self._items.append((kind, tag, step, walltime, payload))
            self._pending_bytes += nbytes
            if len(self._items) >= self._max_queue or self._pending_bytes >= _MAX_PENDING_BYTES:
                self._hand_off()

    def _take_scalars(self) -> dict[str, list]:
        """Take every thread's buffered points (lock held), merged per tag."""
        taken: dict[str, list] = {}
        for _, series in self._all_series:
            for tag, points in list(series.items()):
                n = len(points)
                if n:
                    chunk = points[:n]
                    del points[:n]  # points appended since len() stay for the next batch
                    if tag in taken:
                        taken[tag].extend(chunk)
                    else:
                        taken[tag] = chunk
        # A finished thread appends nothing more: once emptied, its buffers can go.
        self._all_series = [(t, s) for t, s in self._all_series if t.is_alive()]
        return taken

    def _has_pending(self) -> bool:
        return bool(self._items) or any(
            points for _, series in self._all_series for points in list(series.values())
        )

    def _next_batch(self) -> None:
        """Move what is buffered into a batch for the writer thread (lock held)."""
        self._batches.append(_Batch(self._take_scalars(), self._items))
        self._items = []
        self._pending_bytes = 0
        self._handed += 1

    def _hand_off(self) -> None:
        """Pass the buffers to the writer thread (lock held); wait while it is behind."""
        self._next_batch()
        self._cond.notify_all()
        while len(self._batches) > _MAX_BATCHES and self._error is None:
            self._cond.wait()

    def _ensure_thread(self) -> None:
        """Start the writer thread if there is none (lock held): a forked child starts its
        own on first use rather than in every child that never logs."""
        if self._thread is None:
            self._start_thread()

    def _start_thread(self) -> None:
        self._thread = threading.Thread(target=self._run, name="visualdl-writer", daemon=True)
        self._thread.start()

    def flush(self) -> None:
        """Write everything recorded so far to the file (in the OS's hands on return).

        When a write fails (disk full, file too large), the file is cut back to its last
        complete record and the records that did not make it wait in memory (up to the
        usual bound; beyond it the newest are dropped and counted). They are retried by
        every later flush and every ``flush_secs``. The failure is raised once, by the
        next flush() or close(); later flushes retry without raising it again, and
        close() raises if records are lost in the end."""
        with self._cond:
            if self._has_pending() or self._unwritten:
                self._hand_off()
            ticket = self._handed
            while self._written < ticket:
                self._cond.wait()
            error, self._error = self._error, None
            if error is not None:
                message = self._failure_message(error)
        if error is not None:
            raise RuntimeError(message) from error

    def _failure_message(self, error: BaseException) -> str:
        """What a failed write did to the data (lock held)."""
        message = f"LogWriter could not write {self._path}: {error}"
        if not isinstance(error, OSError):
            return message
        if self._unwritten:
            message += (
                f". The file ends at its last complete record; {len(self._unwritten)} "
                f"records ({self._unwritten_bytes} bytes) wait in memory and are written "
                f"when writing works again (flush() retries)"
            )
        else:
            message += ". The records that failed were written on a later try"
        if self._lost:
            message += (
                f"; {self._lost} records were dropped because more than "
                f"{_MAX_UNWRITTEN_BYTES >> 20} MB waited"
            )
            self._lost_reported = self._lost
        return message

    def close(self) -> None:
        """Flush and close the file. Calling it again does nothing. Raises when a write
        failed and has not been reported yet, or when records could not be written."""
        sampler, self._sampler = getattr(self, "_sampler", None), None
        if sampler is not None:  # first: its last points are flushed below
            sampler.stop()
        with self._cond:
            if self._closed:
                return
            self._closed = True
        error: BaseException | None = None
        try:
            self.flush()
        except RuntimeError as exc:
            error = exc
        finally:
            with self._cond:
                self._stopping = True
                self._cond.notify_all()
            if self._thread is not None:
                self._thread.join()
            if self._file is not None:
                self._end_with_close_marker()
                self._file.close()
            _LIVE.discard(self)
        lost = len(self._unwritten) + self._lost - self._lost_reported
        if lost:  # not told yet: what close() could not write, and what was dropped since
            raise RuntimeError(
                f"LogWriter could not write {self._path}: {self._failing}; closed with "
                f"{lost} records not written: they are lost"
            ) from (error or self._failing)
        if error is not None:
            raise error

    def _end_with_close_marker(self) -> None:
        """End the file with a ``Close`` record (format 1.7), so that a reader knows its
        run finished rather than guessing from its age (``reader.run_health``). Not after
        records were left unwritten: the file does not hold all it should. Not in object
        storage either: there it would be one more object (a request) per writer, and a
        reader judges segment streams by their age."""
        if self._unwritten or self._remote is not None:
            return
        try:
            self._file.write([_close_record()])
        except Exception as exc:  # the data is written: only "finished" is not known
            warnings.warn(f"visualdl: could not end {self._path} with its close marker: "
                          f"{exc}", RuntimeWarning, stacklevel=3)

    def __enter__(self) -> "LogWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the writer thread --------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._batches and not self._stopping:
                    self._cond.wait(self._flush_secs)
                if not self._batches and not self._closed and (
                        self._has_pending() or self._unwritten):
                    self._next_batch()  # the periodic flush, or a retry after a failed write
                batches = list(self._batches)
                self._batches.clear()
                self._cond.notify_all()
                stopping = self._stopping
            if batches:
                self._write_batches(batches)
            elif stopping:
                return

    def _write_batches(self, batches: list[_Batch]) -> None:
        records: list[bytes] = []
        for batch in batches:
            try:
                records.extend(_encode_batch(batch))
            except Exception as exc:  # reported by flush()/close(), never swallowed
                with self._cond:
                    self._error = self._error or exc
        todo = self._unwritten + records
        try:
            if self._file is None:  # the first write in a forked child, or after a broken file
                self._file = self._open_record_file()
                todo[:0] = self._opening_records()
            if todo:
                self._file.write(todo)
        except Exception as exc:  # reported by flush()/close(), never swallowed
            self._keep_unwritten(todo, exc)
        else:
            with self._cond:
                self._unwritten, self._unwritten_bytes = [], 0
                self._failing = None
        with self._cond:
            self._written += len(batches)
            self._cond.notify_all()

    def _keep_unwritten(self, todo: list[bytes], exc: Exception) -> None:
        """After a failed write: keep what did not make it (oldest first, up to the bound),
        move to a new file if this one could not be cut back, and report the failure once."""
        left = todo[exc.written:] if isinstance(exc, RecordWriteError) else todo
        kept, size = [], 0
        for record in left:
            if size + len(record) > _MAX_UNWRITTEN_BYTES:
                break
            kept.append(record)
            size += len(record)
        if self._file is not None and self._file.broken:
            self._file.close()  # it may end in half a record: never append to it again
            self._file = None
            self._path = self._fresh_path()
        with self._cond:
            self._unwritten, self._unwritten_bytes = kept, size
            self._lost += len(left) - len(kept)
            if self._failing is None:  # a new failure, not the same one again
                self._failing = self._error = exc


def _encode_batch(batch: _Batch) -> list[bytes]:
    """Serialized records: small entries packed together, each blob in its own record.

    A record is the concatenation of its entries (``Record.entries`` is a repeated field),
    so entries are serialized one by one and joined.
    """
    records: list[bytes] = []
    pack: list[bytes] = []
    size = 0

    def add(entry: bytes) -> None:
        nonlocal size, pack
        pack.append(scalar_codec.record_entry(entry))
        size += len(entry)
        if size >= _RECORD_TARGET:
            records.append(b"".join(pack))
            pack, size = [], 0

    for tag, flat in batch.scalars.items():
        add(scalar_codec.encode_entry(tag, flat))
    errors = []
    for kind, tag, step, wall, payload in batch.items:
        try:
            entry = _encode_item(kind, tag, step, wall, payload).SerializeToString()
        except Exception as exc:  # one bad item must not lose the rest of the batch
            errors.append(f"{tag!r} ({kind}) at step {step}: {exc}")
            continue
        if _kind(kind).blob:
            records.append(scalar_codec.record_entry(entry))
        else:
            add(entry)
    if pack:
        records.append(b"".join(pack))
    for message in errors:
        warnings.warn(f"visualdl: could not record {message}", RuntimeWarning, stacklevel=1)
    return records


def _kind(name: str) -> Kind:
    try:
        return registry.get(name)
    except KeyError as exc:
        raise ValueError(str(exc.args[0])) from None


def _encode_item(kind: str, tag: str, step: int, wall_time: float, payload: Any) -> Entry:
    """One ``Entry`` from what ``add`` queued: the kind's encoder fills its message, and the
    tag, step and wall time are stamped here (on messages that have them: hparams belong to
    the run, not to a tag or a step; a checkpoint has a step but no tag)."""
    unit = registry.get(kind)
    entry = Entry()
    msg = getattr(entry, unit.message)
    if unit.plugin_entry:
        msg.kind = kind
    unit.part("write").encode(msg, payload)
    msg.wall_time = wall_time
    fields = msg.DESCRIPTOR.fields_by_name
    if "tag" in fields:
        msg.tag = tag
    if "step" in fields:
        msg.step = step
    return entry


def _close_record() -> bytes:
    return Record(entries=[Entry(close=Close(wall_time=time.time()))]).SerializeToString()


def _version() -> str:
    from visualdl.format.version import __version__

    return __version__


# Writers still open at interpreter exit are flushed and closed; after fork() each child
# starts its writers afresh (new lock, new thread, its own file).
_LIVE: "weakref.WeakSet[LogWriter]" = weakref.WeakSet()


def _close_all() -> None:
    for writer in list(_LIVE):
        try:
            writer.close()
        except Exception as exc:  # at exit there is nobody left to raise to
            warnings.warn(f"visualdl: closing {writer.file_name} failed: {exc}")


def _reset_after_fork() -> None:
    for writer in list(_LIVE):
        writer._after_fork_in_child()


atexit.register(_close_all)
os.register_at_fork(after_in_child=_reset_after_fork)
