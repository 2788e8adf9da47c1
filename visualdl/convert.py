"""``visualdl convert SRC DST``: copy a logdir of TensorBoard event files, VisualDL 2.x logs
or our own record files into our format, run by run and file by file.

>>> import visualdl
>>> summary = visualdl.convert("tb_runs", "vdl_runs")   # or visualdl.convert.convert(...)
>>> print(summary)

Each source file becomes one record file in the same run directory under ``DST``, holding
what its source reads from it (every kind, the entries our own records hold; see
:mod:`visualdl.sources` for how other writers' values are translated): the sources' chunks
go straight into a record file (``_RecordSink``), a chunk at a time. One file
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

import argparse
import os
import sys
import time
import types
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from visualdl.format.names import RECORD_MARK
from visualdl.format.record_pb2 import Entry, FileHeader, Record, ScalarSeries
from visualdl.format.scalar_codec import DecodedSeries
from visualdl.format.version import FORMAT_MAJOR, FORMAT_MINOR
from visualdl.kinds import registry
from visualdl.reader import discovery
from visualdl.sources import registry as sources
from visualdl.sources.tfevents import TFEVENTS_MARK
from visualdl.sources.vdl2.graph import GRAPH_MARK
from visualdl.writer.record_file import RecordFileWriter

__all__ = ["convert", "main", "ConvertSummary", "FileSummary"]

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


class _RecordSink:
    """Entries in, our record files out: one file per source file, written as the entries
    come (a chunk at a time), in the run directory the source file had below ``src``."""

    def __init__(self, src_root: str, dst: str) -> None:
        self.src_root, self.dst = src_root, dst
        self._used: set[str] = set()

    def open(self, source_path: str, info: FileSummary, display_name: str) -> RecordFileWriter:
        run_dir = os.path.relpath(os.path.dirname(os.path.abspath(source_path)), self.src_root)
        out_dir = os.path.normpath(os.path.join(self.dst, run_dir))
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, _target_name(os.path.basename(source_path)))
        root, ext = os.path.splitext(path)
        n = 1
        while path in self._used or os.path.exists(path):
            path, n = f"{root}.{n}{ext}", n + 1
        self._used.add(path)
        writer = RecordFileWriter(path)
        writer.write([Record(header=FileHeader(
            format_major=FORMAT_MAJOR, format_minor=FORMAT_MINOR,
            writer_version=f"visualdl convert ({info.fmt}: {os.path.basename(source_path)})",
            created=time.time(), display_name=display_name,
        )).SerializeToString()])
        info.target = path
        return writer

    @staticmethod
    def write(writer: RecordFileWriter, info: FileSummary, entries: list) -> None:
        """Write one chunk's entries: small ones together in a record, each blob in its own
        (as the LogWriter lays them out), long series cut into entries of _SERIES_CHUNK."""
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
            if kind == "close":  # the source file's writer was closed: so is the copy's
                records.append(Record(entries=[entry]).SerializeToString())
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
        if records:
            writer.write(records)


def _copy_file(sink: _RecordSink, root: Any, run: str, path: str,
               summary: ConvertSummary) -> None:
    """Read one source file with its source's own decoding and tolerance and write what it
    holds through ``sink``; the summary says what was copied and what was not."""
    file = root.location.file(path)
    info = FileSummary(path, "", run)
    summary.files.append(info)
    stat = file.stat()
    picked = sources.pick(os.path.basename(path), file.head)
    if stat is None or picked is None:  # gone, or too short to tell what it is
        info.unread_tail = stat.size if stat is not None else 0
        return
    if isinstance(picked, sources.Refused):
        info.refused = str(picked)
        summary.messages.append(f"{path}: {picked}")
        return
    info.fmt = picked.label
    reader = picked.open(path)
    if picked.whole:
        reader.as_is = True  # convert takes files as they are: a broken one is refused
    writer = None
    try:
        for chunk in reader.read(file, stat):
            info.records += chunk.records
            if not picked.whole:  # a file read whole is copied or refused, as a whole
                info.errors += len(chunk.errors)
                summary.messages.extend(f"{path}: {m}" for m in chunk.errors)
            if chunk.refused:
                info.refused = chunk.refused
                summary.messages.append(f"{path}: {chunk.refused}")
                break
            entries = [e for _, part in chunk.entries for e in part]
            if picked.whole:
                entries = _whole_entries(reader, file, entries, info)
                if info.refused:
                    summary.messages.append(f"{path}: {info.refused}")
                    break
            if entries:
                if writer is None:
                    header = reader.header
                    writer = sink.open(path, info, header.display_name if header else "")
                sink.write(writer, info, entries)
    except (OSError, ValueError) as exc:
        info.refused = f"cannot read: {exc}"
        summary.messages.append(f"{path}: {info.refused}")
    finally:
        if writer is not None:
            writer.close()
    if not info.refused and stat.size > reader.offset:
        info.unread_tail = stat.size - reader.offset


def _whole_entries(reader: Any, file: Any, refs: list, info: FileSummary) -> list:
    """The entries of a file read whole: its blob loaded (a graph converted to ONNX), or,
    when what loads is no record message (a trace's JSON), the file's own bytes given to
    its kind's writer."""
    out = []
    for ref in refs:
        if ref.meta.get("error"):
            info.refused = ref.meta["error"]
            return []
        kind = registry.get(ref.kind)
        msg = reader.load(file, ref, kind.message)
        if not hasattr(msg, "SerializeToString"):
            payload, _ = kind.part("write").check(ref.tag, file.whole(ref.size),
                                                  ref.meta.get("end_step"))
            entry = Entry()
            msg = getattr(entry, kind.message)
            msg.tag, msg.step, msg.wall_time = ref.tag, ref.step, ref.wall_time
            kind.part("write").encode(msg, payload)
            out.append(entry)
            continue
        out.append(Entry(**{kind.message: msg}))
    return out


def _target_name(source: str) -> str:
    """``vdlrecords.<what the source name says>.log``, never again a TensorBoard name."""
    stem = source
    for mark in (TFEVENTS_MARK + ".", RECORD_MARK + "."):
        if stem.startswith(mark):
            stem = stem[len(mark):]
    stem = stem.replace(TFEVENTS_MARK, "tfevents").replace(RECORD_MARK, "records") \
        .replace(GRAPH_MARK, "graph")
    if stem.endswith(".log"):
        stem = stem[:-4]
    return f"{RECORD_MARK}.{stem or 'converted'}.log"


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
    (source_root,) = discovery.make_roots([src])
    sink = _RecordSink(root, dst)
    for run_dir, paths in discovery.find_files(source_root).items():
        run = discovery.run_name(source_root, run_dir)
        for path in paths:
            _copy_file(sink, source_root, run, path, summary)
    summary.files.sort(key=lambda f: f.source)
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    """``visualdl convert SRC DST``: exit code 1 when something was skipped."""
    parser = argparse.ArgumentParser(
        prog="visualdl convert",
        description="Copy a logdir of TensorBoard event files, VisualDL 2.x logs or visualdl "
        "record files into visualdl's format, run by run; prints what was copied and "
        "skipped (exit code 1 when something was skipped).")
    parser.add_argument("src", metavar="SRC", help="the logdir to read")
    parser.add_argument("dst", metavar="DST", help="where to write (a new or empty directory)")
    args = parser.parse_args(argv)
    try:
        summary = convert(args.src, args.dst)
    except (FileNotFoundError, ValueError) as err:
        parser.error(str(err))
    print(summary)
    return 1 if summary.skipped else 0


class _CallableModule(types.ModuleType):
    """``visualdl.convert(src, dst)`` calls :func:`convert`, and ``visualdl.convert`` stays
    the module (``from visualdl.convert import ConvertSummary`` works too)."""

    def __call__(self, src: str | os.PathLike, dst: str | os.PathLike) -> ConvertSummary:
        return convert(src, dst)


sys.modules[__name__].__class__ = _CallableModule
