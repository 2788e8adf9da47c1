"""Scalars as a pandas DataFrame in long form: ``LogReader(...).scalars_frame(runs=None,
tags=None)`` -> one row per point: ``run``, ``tag`` (categoricals), ``step`` (int64),
``wall_time``, ``value`` (float64). Every point is there (nothing is sampled); it is built
from the reader's numpy arrays with one concatenation per column, not row by row.

pandas is optional (the ``analysis`` extra); without it this raises an ImportError that
says what to install. ``visualdl export`` writes the same columns as Parquet
(:mod:`visualdl.export`).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

import numpy as np

__all__ = ["scalars_frame", "iter_series", "columns", "require", "COLUMNS"]

COLUMNS = ("run", "tag", "step", "wall_time", "value")
_EXTRA = 'pip install "visualdl[analysis]"'


def require(module: str, what: str) -> Any:
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


def columns(items: Sequence[tuple[str, str, Any]]) -> dict[str, Any]:
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
    pd = require("pandas", "scalars_frame")
    cols = columns(list(iter_series(reader, runs, tags)))
    return pd.DataFrame({
        "run": pd.Categorical.from_codes(cols["run_codes"], categories=cols["runs"]),
        "tag": pd.Categorical.from_codes(cols["tag_codes"], categories=cols["tags"]),
        "step": cols["step"],
        "wall_time": cols["wall_time"],
        "value": cols["value"],
    })
