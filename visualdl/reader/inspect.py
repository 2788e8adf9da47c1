"""``visualdl inspect PATH`` / ``python -m visualdl.reader PATH``: what a logdir holds.

Reads every format a source reads (ours, TensorBoard's, VisualDL 2.x's, ...). Prints runs
with their files and the formats they are in, tags by kind with counts and step ranges,
and bad records.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence, TextIO

import numpy as np

from visualdl.kinds import registry
from visualdl.reader.log_reader import LogReader


def _step_range(steps: np.ndarray) -> str:
    if not len(steps):
        return "-"
    lo, hi = int(steps.min()), int(steps.max())
    return f"{lo}" if lo == hi else f"{lo}..{hi}"


def _tag_lines(reader: LogReader, run: str) -> list[str]:
    lines = []
    for kind, tags in sorted(reader.tags(run).items()):
        for tag in tags:
            if kind == "scalar" or registry.scalar_kind_of(tag) == kind:  # system/...
                steps = reader.scalars(run, tag).steps
            elif kind == "hparams":
                h = reader.hparams(run)
                lines.append(f"    {kind:<10} {len(h.hparams)} values, metrics: "
                             f"{', '.join(h.metric_tags) or '-'}")
                continue
            else:
                steps = np.array([e.step for e in reader.events(run, kind, tag)], np.int64)
            boxes = sum(e.meta.get("box_count", 0) for e in reader.events(run, kind, tag)) \
                if kind == "image" else 0
            lines.append(f"    {kind:<10} {tag}  ({len(steps)} points, steps {_step_range(steps)}"
                         f"{f', {boxes} boxes' if boxes else ''})")
    return lines


def summarize(paths: Sequence[str], out: TextIO | None = None) -> int:
    """Write the summary; return 0, or 1 when some record was bad or a file was refused."""
    out = sys.stdout if out is None else out  # looked up now: callers may redirect it
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        print(f"visualdl inspect: no such file or directory: {', '.join(missing)}", file=out)
        return 2
    reader = LogReader(list(paths))
    runs = reader.runs()
    print(f"{len(runs)} run(s) in {', '.join(paths)}", file=out)
    for run in runs:
        files = reader.files(run)
        records = sum(f.records for f in files)
        formats = ", ".join(sorted({f.source for f in files if f.source}))
        print(f"\nrun {run}: {len(files)} file(s), {records} records ({formats})", file=out)
        for line in _tag_lines(reader, run):
            print(line, file=out)
    refused = [f for f in reader.files() if f.refused]
    print(f"\nbad records or files: {reader.errors}", file=out)
    for message in reader.error_messages:
        print(f"  {message}", file=out)
    return 1 if reader.errors or refused else 0


def main(argv: Sequence[str] | None = None, prog: str = "visualdl inspect") -> int:
    """``visualdl inspect PATH ...`` (and ``python -m visualdl.reader PATH ...``)."""
    parser = argparse.ArgumentParser(
        prog=prog, description="Summarize and check the logs under each PATH (every format "
        "visualdl reads): runs, tags by kind, counts, step ranges and any bad records.")
    parser.add_argument("paths", nargs="+", metavar="PATH")
    return summarize(parser.parse_args(argv).paths)
