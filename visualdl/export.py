"""``visualdl export``: scalars and hyper-parameters outside the browser, as Parquet files.

* ``visualdl export --format parquet LOGDIR OUT`` writes ``OUT/scalars.parquet`` (the same
  columns, written run by run, so memory stays bounded by one run) and
  ``OUT/hparams.parquet`` (one row per run that has hyper-parameters: ``run``,
  ``wall_time``, ``metric_tags``, then one column per hyper-parameter), for DuckDB, Spark or
  pandas::

      SELECT h.lr, max(s.value) FROM 'out/scalars.parquet' s
      JOIN 'out/hparams.parquet' h USING (run) WHERE s.tag = 'acc' GROUP BY h.lr

pyarrow is optional (the ``analysis`` extra); without it this raises an ImportError that
says what to install. The same scalars as a pandas DataFrame: ``LogReader.scalars_frame``
(:mod:`visualdl.reader.frame`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Iterable, Sequence

from visualdl.kinds.hparams.table import hparam_names, run_table
from visualdl.reader.frame import COLUMNS, columns, iter_series, require

__all__ = ["export_parquet", "main", "COLUMNS"]


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


def main(argv: Sequence[str] | None = None) -> int:
    """``visualdl export --format parquet LOGDIR OUT``."""
    parser = argparse.ArgumentParser(
        prog="visualdl export",
        description="Write every run's scalars (long form: run, tag, step, wall_time, value) "
        "and hyper-parameters (a row per run) as Parquet files OUT/scalars.parquet and "
        "OUT/hparams.parquet, for DuckDB, Spark or pandas.")
    parser.add_argument("--format", choices=["parquet"], default="parquet",
                        help="output format (default %(default)s)")
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
