"""``visualdl export``: scalars and hyper-parameters outside the browser, as Parquet files.

* ``visualdl export --format parquet LOGDIR OUT`` writes ``OUT/scalars.parquet`` (the same
  columns, written run by run, so memory stays bounded by one run) and
  ``OUT/hparams.parquet`` (one row per run that has hyper-parameters: ``run``,
  ``wall_time``, ``metric_tags``, then one column per hyper-parameter), for DuckDB, Spark or
  pandas::

      SELECT h.lr, max(s.value) FROM 'out/scalars.parquet' s
      JOIN 'out/hparams.parquet' h USING (run) WHERE s.tag = 'acc' GROUP BY h.lr

pyarrow is optional (the ``analysis`` extra); without it this raises an ImportError that
says what to install.

* ``visualdl export --format html LOGDIR report.html [--runs ...] [--tags REGEX] [--view URL]``
  writes the dashboard as one self-contained HTML file (:mod:`visualdl.report`), written
  whole or not at all. The same scalars as a pandas DataFrame: ``LogReader.scalars_frame``
(:mod:`visualdl.reader.frame`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from typing import Any, Iterable, Sequence

from visualdl.kinds.hparams.table import hparam_names, run_table
from visualdl.reader.frame import COLUMNS, columns, iter_series, require

__all__ = ["export_parquet", "export_html", "main", "COLUMNS"]


def _scalar_table(pa: Any, items: Sequence[tuple[str, str, Any]]) -> Any:
    cols = columns(items)
    return pa.table({
        "run": pa.DictionaryArray.from_arrays(cols["run_codes"], pa.array(cols["runs"],
                                                                          pa.string())),
        "tag": pa.DictionaryArray.from_arrays(cols["tag_codes"], pa.array(cols["tags"],
                                                                          pa.string())),
        "step": pa.array(cols["step"], pa.int64()),
        "wall_time": pa.array(cols["wall_time"], pa.float64()),
        "value": pa.array(cols["value"], pa.float64()),
    })


def _scalar_schema(pa: Any) -> Any:
    return pa.schema([("run", pa.dictionary(pa.int32(), pa.string())),
                      ("tag", pa.dictionary(pa.int32(), pa.string())),
                      ("step", pa.int64()), ("wall_time", pa.float64()),
                      ("value", pa.float64())])


def hparams_table(reader: Any, runs: Iterable[str] | None = None) -> Any:
    """One row per run with hyper-parameters (the run table's rows that have them):
    ``run``, ``wall_time``, ``metric_tags`` and a column per hyper-parameter (null where a
    run lacks it; a column whose values mix numbers and strings is written as strings)."""
    pa = require("pyarrow", "exporting hparams")
    rows = [row for row in run_table(reader, runs=runs) if row.hparams_time is not None]
    data: dict[str, Any] = {
        "run": pa.array([row.run for row in rows], pa.string()),
        "wall_time": pa.array([row.hparams_time for row in rows], pa.float64()),
        "metric_tags": pa.array([list(row.metric_tags) for row in rows],
                                pa.list_(pa.string())),
    }
    for name in hparam_names(rows):
        values = [row.hparams.get(name) for row in rows]
        column = name if name not in data else f"hparam.{name}"
        try:
            data[column] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            data[column] = pa.array([None if v is None else str(v) for v in values],
                                    pa.string())
    return pa.table(data)


def export_parquet(reader: Any, out: str | os.PathLike, runs_per_group: int = 64) -> dict:
    """Write ``out/scalars.parquet`` and ``out/hparams.parquet``; returns what was written
    (rows per table and the paths). Scalars go out a few runs at a time (one row group per
    ``runs_per_group`` runs), so memory stays bounded whatever the number of runs."""
    pa = require("pyarrow", "export --format parquet")
    pq = require("pyarrow.parquet", "export --format parquet")
    os.makedirs(out, exist_ok=True)
    scalars_path = os.path.join(out, "scalars.parquet")
    hparams_path = os.path.join(out, "hparams.parquet")
    rows = 0
    runs = reader.runs()
    with pq.ParquetWriter(scalars_path, _scalar_schema(pa)) as writer:
        for start in range(0, len(runs), runs_per_group):
            items = list(iter_series(reader, runs[start:start + runs_per_group]))
            if items:
                table = _scalar_table(pa, items)
                writer.write_table(table)
                rows += table.num_rows
    hparams = hparams_table(reader, runs)
    pq.write_table(hparams, hparams_path)
    return {"scalars": scalars_path, "scalar_rows": rows, "hparams": hparams_path,
            "hparams_rows": hparams.num_rows, "runs": len(runs)}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def export_html(reader: Any, out: str | os.PathLike, selection: Any = None) -> dict:
    """Write the report of ``reader`` (:mod:`visualdl.report`) to the file ``out``: into a
    temporary file beside it, renamed over ``out`` once whole, so that an error leaves no
    file (and an older report at ``out`` untouched). ``ReportError`` for bad selections."""
    from visualdl.report import Selection, collect, render

    data = collect(reader, selection if selection is not None else Selection())
    page = render(data)
    folder = os.path.dirname(os.path.abspath(out))
    fd, tmp = tempfile.mkstemp(prefix=".report-", suffix=".html", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(page)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's file is private; a report is to share
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    points = data["scalars"]["points"]
    return {"path": os.fspath(out), "bytes": len(page.encode("utf-8")), "runs": len(data["runs"]),
            "points_kept": points["kept"], "points_total": points["total"],
            "left_out": data["left_out"]}


def _html_selection(args: argparse.Namespace) -> Any:
    from visualdl.report import Selection, selection_from_url

    selection = selection_from_url(args.view) if args.view else Selection()
    if args.runs:
        selection.runs = list(args.runs)
    if args.tags is not None:
        selection.tags = args.tags
    if args.smoothing is not None:
        selection.smoothing = args.smoothing
    if args.step is not None:
        selection.step = args.step
    return selection


def main(argv: Sequence[str] | None = None) -> int:
    """``visualdl export --format parquet LOGDIR OUT`` or ``--format html LOGDIR FILE``."""
    parser = argparse.ArgumentParser(
        prog="visualdl export",
        description="Write every run's scalars (long form: run, tag, step, wall_time, value) "
        "and hyper-parameters (a row per run) as Parquet files OUT/scalars.parquet and "
        "OUT/hparams.parquet, for DuckDB, Spark or pandas; or (--format html) the dashboard "
        "as one self-contained HTML file OUT that opens with no server and no network.")
    parser.add_argument("--format", choices=["parquet", "html"], default="parquet",
                        help="output format (default %(default)s)")
    html_opts = parser.add_argument_group("html")
    html_opts.add_argument("--runs", nargs="+", action="extend", metavar="RUN",
                           help="the runs to show, by name (default: every run)")
    html_opts.add_argument("--tags", metavar="REGEX",
                           help="the tags to show: a regex, case-insensitive, as the "
                           "dashboard's tag filter (default: every tag)")
    html_opts.add_argument("--view", metavar="URL",
                           help="a saved view's URL (the dashboard's address bar): its runs, "
                           "tag filter and smoothing; --runs and --tags override them")
    html_opts.add_argument("--smoothing", type=float, metavar="W",
                           help="the smoothing drawn first, in [0, 1) (default 0.6)")
    html_opts.add_argument("--step", type=int, metavar="N",
                           help="media at this step (the last at or before it; default: last)")
    parser.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option for the fsspec filesystem of a URL logdir (repeatable)")
    parser.add_argument("logdir", metavar="LOGDIR", help="log directory (or s3://... URL)")
    parser.add_argument("out", metavar="OUT", help="output folder (created if missing)")
    args = parser.parse_args(argv)
    import visualdl.storage as storage
    from visualdl.reader.log_reader import LogReader

    try:
        options = storage.parse_storage_options(args.storage_option)
    except ValueError as err:
        parser.error(f"argument --storage-option: {err}")
    logdir = storage.local_path(args.logdir)
    if not storage.is_url(logdir) and not os.path.exists(logdir):
        print(f"visualdl export: error: logdir does not exist: {args.logdir}", file=sys.stderr)
        return 2
    if args.format == "html":
        return _main_html(args, logdir, options)
    if os.path.isfile(args.out):
        print(f"visualdl export: error: OUT must be a folder, {args.out} is a file",
              file=sys.stderr)
        return 2
    try:
        reader = LogReader(logdir, storage_options=options)
        done = export_parquet(reader, args.out)
    except (ImportError, ValueError, OSError) as err:
        print(f"visualdl export: error: {err}", file=sys.stderr)
        return 2
    print(f"visualdl export: {done['runs']} runs: {done['scalar_rows']} scalar points -> "
          f"{done['scalars']}; {done['hparams_rows']} runs with hparams -> {done['hparams']}")
    if reader.errors:
        print(f"visualdl export: {reader.errors} bad records skipped (see visualdl inspect)",
              file=sys.stderr)
    return 0


def _main_html(args: argparse.Namespace, logdir: str, options: dict) -> int:
    from visualdl.reader.log_reader import LogReader
    from visualdl.report import ReportError

    if os.path.isdir(args.out):
        print(f"visualdl export: error: OUT must be a file, {args.out} is a folder",
              file=sys.stderr)
        return 2
    try:
        if args.smoothing is not None and not 0 <= args.smoothing < 1:
            raise ReportError(f"argument --smoothing: must be in [0, 1), not {args.smoothing}")
        selection = _html_selection(args)
        reader = LogReader(logdir, storage_options=options)
        done = export_html(reader, args.out, selection)
    except (ReportError, ImportError, ValueError, OSError) as err:
        print(f"visualdl export: error: {err}", file=sys.stderr)
        return 2
    print(f"visualdl export: {done['runs']} runs, {done['points_kept']:,} of "
          f"{done['points_total']:,} scalar points -> {done['path']} ({done['bytes']:,} bytes)")
    for item in done["left_out"]:
        print(f"visualdl export: left out: {item}", file=sys.stderr)
    return 0
