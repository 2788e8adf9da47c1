from __future__ import annotations

from visualdl import LogReader


def read(project: str = "p", root: str = "vdl_runs") -> LogReader:
    return LogReader(f"{root}/{project}")


def points(reader: LogReader, run: str, tag: str) -> list[tuple[int, float]]:
    series = reader.scalars(run, tag)
    return [(int(s), float(v)) for s, v in zip(series.steps, series.values)]
