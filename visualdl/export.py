"""Scalars and hyper-parameters outside the browser: pandas DataFrames and Parquet files.

* ``LogReader(...).scalars_frame(runs=None, tags=None)`` -> a pandas DataFrame in long form,
  one row per point: ``run``, ``tag`` (categoricals), ``step`` (int64), ``wall_time``,
  ``value`` (float64). Every point is there (nothing is sampled); it is built from the
  reader's numpy arrays with one concatenation per column, not row by row.
* ``visualdl export --format parquet LOGDIR OUT`` writes ``OUT/scalars.parquet`` (the same
  columns, written run by run, so memory stays bounded by one run) and
  ``OUT/hparams.parquet`` (one row per run that has hyper-parameters: ``run``,
  ``wall_time``, ``metric_tags``, then one column per hyper-parameter), for DuckDB, Spark or
  pandas::

      SELECT h.lr, max(s.value) FROM 'out/scalars.parquet' s
      JOIN 'out/hparams.parquet' h USING (run) WHERE s.tag = 'acc' GROUP BY h.lr

pandas and pyarrow are optional (the ``analysis`` extra); without them these raise an
ImportError that says what to install.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

__all__ = ["scalars_frame", "export_parquet", "main", "COLUMNS"]

COLUMNS = ("run", "tag", "step", "wall_time", "value")
_EXTRA = 'pip install "visualdl[analysis]"'


def _require(module: str, what: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{what} needs {module.split('.')[0]}, which is not installed: "
                          f"{_EXTRA} (or pip install {module.split('.')[0]})") from exc


def _names(given: str | Iterable[str] | None, what: str) -> list[str] | None:
    if given is None:
        return None
    names = [given] if isinstance(given, str) else list(given)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{what} must be names (str), got {name!r}")
    return names


def iter_series(reader: Any, runs: str | Iterable[str] | None = None,
                tags: str | Iterable[str] | None = None) -> Iterator[tuple[str, str, Any]]:
    """``(run, tag, Scalars)`` for the chosen runs (all by default, sorted) and scalar tags
    (all by default). An unknown run raises KeyError; a tag a run lacks is skipped there,
    and a tag no chosen run has raises KeyError (a typo must not give an empty frame)."""
    all_runs = reader.runs()
    chosen = _names(runs, "runs")
    if chosen is not None:
        missing = [r for r in chosen if r not in all_runs]
        if missing:
            raise KeyError(f"no run named {missing[0]!r} (runs: {', '.join(all_runs[:20])})")
    else:
        chosen = all_runs
    wanted = _names(tags, "tags")
    found: set[str] = set()
    for run in chosen:
        run_tags = reader.tags(run).get("scalar", [])
        for tag in (run_tags if wanted is None else [t for t in wanted if t in run_tags]):
            found.add(tag)
            yield run, tag, reader.scalars(run, tag)
    if wanted is not None:
        absent = [t for t in wanted if t not in found]
        if absent:
            raise KeyError(f"no chosen run has a scalar tag {absent[0]!r}")


def _columns(items: Sequence[tuple[str, str, Any]]) -> dict[str, Any]:
    """numpy columns plus category codes for run and tag, from (run, tag, Scalars)."""
    runs = sorted({r for r, _, _ in items})
    tags = sorted({t for _, t, _ in items})
    run_code = {r: i for i, r in enumerate(runs)}
    tag_code = {t: i for i, t in enumerate(tags)}
    counts = np.array([len(s.steps) for _, _, s in items], dtype=np.int64)
    empty = not len(items)
    return {
        "runs": runs, "tags": tags,
        "run_codes": np.repeat(np.array([run_code[r] for r, _, _ in items], np.int32), counts)
        if not empty else np.empty(0, np.int32),
        "tag_codes": np.repeat(np.array([tag_code[t] for _, t, _ in items], np.int32), counts)
        if not empty else np.empty(0, np.int32),
        "step": np.concatenate([s.steps for _, _, s in items]) if not empty
        else np.empty(0, np.int64),
        "wall_time": np.concatenate([s.wall_times for _, _, s in items]) if not empty
        else np.empty(0, np.float64),
        "value": np.concatenate([s.values for _, _, s in items]) if not empty
        else np.empty(0, np.float64),
    }


def scalars_frame(reader: Any, runs: str | Iterable[str] | None = None,
                  tags: str | Iterable[str] | None = None) -> Any:
    """A pandas DataFrame of every point of the chosen runs and tags, in long form
    (see the module's docstring); rows are ordered by run, tag, then as read."""
    pd = _require("pandas", "scalars_frame")
    cols = _columns(list(iter_series(reader, runs, tags)))
    return pd.DataFrame({
        "run": pd.Categorical.from_codes(cols["run_codes"], categories=cols["runs"]),
        "tag": pd.Categorical.from_codes(cols["tag_codes"], categories=cols["tags"]),
        "step": cols["step"],
        "wall_time": cols["wall_time"],
        "value": cols["value"],
    })


def _scalar_table(pa: Any, items: Sequence[tuple[str, str, Any]]) -> Any:
    cols = _columns(items)
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
    """One row per run with hyper-parameters: ``run``, ``wall_time``, ``metric_tags`` and a
    column per hyper-parameter (null where a run lacks it; a column whose values mix
    numbers and strings is written as strings)."""
    pa = _require("pyarrow", "exporting hparams")
    rows = []
    for run in (reader.runs() if runs is None else runs):
        event = reader.hparams(run)
        if event is not None:
            rows.append((run, event))
    names = sorted({name for _, e in rows for name in e.hparams})
    data: dict[str, Any] = {
        "run": pa.array([r for r, _ in rows], pa.string()),
        "wall_time": pa.array([e.wall_time for _, e in rows], pa.float64()),
        "metric_tags": pa.array([list(e.metric_tags) for _, e in rows], pa.list_(pa.string())),
    }
    for name in names:
        values = [e.hparams.get(name) for _, e in rows]
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
    pa = _require("pyarrow", "export --format parquet")
    pq = _require("pyarrow.parquet", "export --format parquet")
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
