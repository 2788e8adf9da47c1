"""``visualdl convert SRC DST``: copy a logdir of TensorBoard event files, VisualDL 2.x logs
or our own record files into our format, run by run and file by file.

>>> import visualdl
>>> summary = visualdl.convert("tb_runs", "vdl_runs")   # or visualdl.convert.convert(...)
>>> print(summary)

Each source file becomes one record file in the same run directory under ``DST``, holding
what :class:`~visualdl.reader.LogReader` reads from it (every kind, the entries our own
records hold; see :mod:`visualdl.sources.tfevents.decode` and
:mod:`visualdl.sources.vdl2.decode` for how other writers' values are translated). One file
per source file keeps what the reader merges (several files of a run, in wall-time order)
the same after conversion. The source is read with the reader's tolerance: damaged records
are skipped and counted, files that are not logs are refused, a torn tail (a record still
being written) is left out; the summary says what was copied and what was not.

Images, audio and other blobs are copied as they are (the PNG and WAV bytes are not
re-encoded). Model graphs are copied as our graph kind (ONNX): a TensorBoard ``graph_def``
and a VisualDL 2.x ``vdlgraph`` file (Paddle operators, see :mod:`visualdl.sources.vdl2.graph`)
are converted as the graph view converts them.
"""

from __future__ import annotations

import os
import sys
import time
import types
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from visualdl.format.record_pb2 import Entry, FileHeader, Record, ScalarSeries
from visualdl.format.scalar_codec import DecodedSeries
from visualdl.format.version import FORMAT_MAJOR, FORMAT_MINOR
from visualdl.kinds import registry
from visualdl.reader import discovery
from visualdl.reader.log_reader import FileState, LogReader
from visualdl.sources import vdl2
from visualdl.sources.tfevents import TFEVENTS_MARK
from visualdl.writer.record_file import RecordFileWriter

__all__ = ["convert", "ConvertSummary", "FileSummary"]

_SERIES_CHUNK = 65536  # scalar points per written entry


@dataclass
class FileSummary:
    """What one source file gave."""

    source: str
    fmt: str                  # "visualdl", "tensorboard", "visualdl 2.x"
    run: str
    target: str = ""          # the file written ("" when nothing was)
    records: int = 0
    copied: Counter = field(default_factory=Counter)  # kind -> entries (scalar: points)
    errors: int = 0           # damaged records skipped
    refused: str = ""         # why the file was not read, when it was not
    unread_tail: int = 0      # bytes of a torn tail left out


@dataclass
class ConvertSummary:
    """What ``convert`` copied, per source file, and what it skipped."""

    src: str
    dst: str
    files: list[FileSummary] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    @property
    def runs(self) -> list[str]:
        return sorted({f.run for f in self.files if f.target})

    @property
    def copied(self) -> Counter:
        total: Counter = Counter()
        for f in self.files:
            total.update(f.copied)
        return total

    @property
    def skipped(self) -> int:
        """Damaged records, refused files and torn tails: what was not copied."""
        return sum(f.errors + bool(f.refused) + bool(f.unread_tail) for f in self.files)

    def __str__(self) -> str:
        lines = [f"converted {self.src} -> {self.dst}: {len(self.runs)} run(s), "
                 f"{sum(1 for f in self.files if f.target)} file(s)"]
        for f in self.files:
            name = os.path.relpath(f.source, self.src) if os.path.isdir(self.src) else f.source
            if f.refused:
                lines.append(f"  {name}: skipped, {f.refused}")
                continue
            kinds = ", ".join(f"{k} {n}" + (" points" if k == "scalar" else "")
                              for k, n in sorted(f.copied.items()))
            lines.append(f"  {name} ({f.fmt}, run {f.run or '.'}): {kinds or 'nothing to copy'}")
            if f.errors:
                lines.append(f"    {f.errors} damaged record(s) skipped")
            if f.unread_tail:
                lines.append(f"    {f.unread_tail} bytes at the end not yet written (a torn "
                             "tail): not copied")
        lines.append(f"skipped: {self.skipped}")
        lines.extend(f"  {m}" for m in self.messages)
        return "\n".join(lines)


class _Copier(LogReader):
    """A LogReader whose entries go to a new record file per source file instead of into
    memory: every format the reader knows is converted with the reader's own decoding and
    tolerance, and nothing is held but one chunk at a time."""

    def __init__(self, src: str, dst: str, summary: ConvertSummary) -> None:
        self._dst = dst
        self._summary = summary
        self._out: dict[str, tuple[RecordFileWriter, FileSummary]] = {}
        self._src_root = os.path.abspath(src if os.path.isdir(src) else os.path.dirname(src))
        self._used: set[str] = set()
        super().__init__(src, load=False)

    def _add_entries(self, state: FileState, entries: Any, offset: int) -> None:
        if not entries:
            return
        writer, info = self._writer(state)
        records: list[bytes] = []
        small: list[Any] = []
        for entry in entries:
            if isinstance(entry, DecodedSeries):
                for k in range(0, len(entry.steps), _SERIES_CHUNK):
                    part = slice(k, k + _SERIES_CHUNK)
                    small.append(Entry(scalars=ScalarSeries(
                        tag=entry.tag, steps=entry.steps[part], wall_times=entry.wall_times[part],
                        values=entry.values[part])))
                info.copied["scalar"] += len(entry.steps)
                continue
            kind = entry.WhichOneof("kind")
            if kind is None:
                continue
            if kind == "scalars":
                info.copied["scalar"] += len(entry.scalars.steps)
                small.append(entry)
                continue
            unit = registry.by_message(kind)
            name = unit.name if unit is not None else getattr(entry, kind).kind
            info.copied[name] += 1
            if unit is not None and unit.blob:
                records.append(Record(entries=[entry]).SerializeToString())
            else:
                small.append(entry)
        if small:
            records.insert(0, Record(entries=small).SerializeToString())
        writer.write(records)

    def _index_vdl2_graph(self, state: FileState) -> int:
        """A VisualDL 2.x graph file becomes one graph entry (ONNX) of its own file; one
        that is not a graph is refused with the reason (convert takes files as they are)."""
        if state.records:
            return 0
        try:
            info = vdl2.graph.scan(state.path, now=float("inf"))
            if info is None or info.error:
                raise ValueError(info.error if info is not None else "not readable")
            graph = vdl2.graph.load(state.path, info.tag, 0, info.wall_time)
        except (OSError, ValueError) as exc:
            self._refuse(state, str(exc))
            return 0
        self._add_entries(state, [Entry(graph=graph)], 0)
        state.records, state.offset = 1, info.size
        return 1

    def _writer(self, state: FileState) -> tuple[RecordFileWriter, FileSummary]:
        found = self._out.get(state.path)
        if found is not None:
            return found
        info = self._info(state)
        run_dir = os.path.relpath(os.path.dirname(os.path.abspath(state.path)), self._src_root)
        out_dir = os.path.normpath(os.path.join(self._dst, run_dir))
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, _target_name(os.path.basename(state.path)))
        root, ext = os.path.splitext(path)
        n = 1
        while path in self._used or os.path.exists(path):
            path, n = f"{root}.{n}{ext}", n + 1
        self._used.add(path)
        writer = RecordFileWriter(path)
        writer.write([Record(header=FileHeader(
            format_major=FORMAT_MAJOR, format_minor=FORMAT_MINOR,
            writer_version=f"visualdl convert ({info.fmt}: {os.path.basename(state.path)})",
            created=time.time(),
            display_name=(state.header.display_name if state.header is not None else "")
            or getattr(state.decoder, "display_name", ""),  # VisualDL 2.x: its meta record
        )).SerializeToString()])
        info.target = path
        self._out[state.path] = (writer, info)
        return writer, info

    def _info(self, state: FileState) -> FileSummary:
        for info in self._summary.files:
            if info.source == state.path:
                return info
        info = FileSummary(state.path, _format(state), state.run)
        self._summary.files.append(info)
        return info

    def finish(self) -> None:
        """Close the files written and fill in what each source file gave."""
        for writer, _ in self._out.values():
            writer.close()
        for state in self.files():
            info = self._info(state)
            info.fmt = _format(state)
            info.records = state.records
            info.errors = state.errors
            info.refused = state.refused
            try:
                size = os.path.getsize(state.path)
            except OSError:
                size = state.offset
            if not state.refused and size > state.offset:
                info.unread_tail = size - state.offset
        self._summary.files.sort(key=lambda f: f.source)
        self._summary.messages = [m for m in self.error_messages]


def _format(state: FileState) -> str:
    if state.vdl2_graph:
        return "VisualDL 2.x graph"
    if vdl2.is_vdl2(state):
        return "VisualDL 2.x"
    if state.decoder is not None:
        return "TensorBoard"
    return "visualdl"


def _target_name(source: str) -> str:
    """``vdlrecords.<what the source name says>.log``, never again a TensorBoard name."""
    stem = source
    for mark in (TFEVENTS_MARK + ".", discovery.RECORD_MARK + "."):
        if stem.startswith(mark):
            stem = stem[len(mark):]
    stem = stem.replace(TFEVENTS_MARK, "tfevents").replace(discovery.RECORD_MARK, "records") \
        .replace(vdl2.graph.GRAPH_MARK, "graph")
    if stem.endswith(".log"):
        stem = stem[:-4]
    return f"{discovery.RECORD_MARK}.{stem or 'converted'}.log"


def convert(src: str | os.PathLike, dst: str | os.PathLike) -> ConvertSummary:
    """Copy the logs under ``src`` into our format under ``dst``. ``src`` is a logdir (or a
    log file, which stands for the run directory it is in, as for ``--logdir``).

    Run directories keep their place below ``dst``; ``dst`` must not exist yet or be empty
    (so a second run cannot mix two copies). Returns a :class:`ConvertSummary`; print it for
    a table of what was copied and skipped. Raises ``FileNotFoundError`` when ``src`` does
    not exist and ``ValueError`` when ``dst`` is not an empty directory or lies in ``src``.
    """
    src, dst = os.path.abspath(os.fspath(src)), os.path.abspath(os.fspath(dst))
    if not os.path.exists(src):
        raise FileNotFoundError(f"src: no such file or directory: {src}")
    if os.path.exists(dst) and (not os.path.isdir(dst) or os.listdir(dst)):
        raise ValueError(f"dst: {dst} exists and is not an empty directory")
    root = src if os.path.isdir(src) else os.path.dirname(src)
    if os.path.commonpath([root, dst]) == root:
        raise ValueError(f"dst: {dst} lies inside src {src}: it would be read as logs too")
    summary = ConvertSummary(src, dst)
    os.makedirs(dst, exist_ok=True)
    copier = _Copier(src, dst, summary)
    try:
        copier.reload()
    finally:
        copier.finish()
    return summary


class _CallableModule(types.ModuleType):
    """``visualdl.convert(src, dst)`` calls :func:`convert`, and ``visualdl.convert`` stays
    the module (``from visualdl.convert import ConvertSummary`` works too)."""

    def __call__(self, src: str | os.PathLike, dst: str | os.PathLike) -> ConvertSummary:
        return convert(src, dst)


sys.modules[__name__].__class__ = _CallableModule
