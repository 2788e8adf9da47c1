"""The read side: a run's system tags grouped by host, the machine's state at a wall time
(each metric's sample nearest to it), and the GPU memory peak of a run.

Pure functions over tag names and series, so the API routes stay thin and these are
tested on their own.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from visualdl.api.jsonio import json_number
from visualdl.kinds.system import names

Read = Callable[[str], Any]  # tag -> Scalars (steps, wall_times, values)


def by_host(tags: Iterable[str]) -> dict[str, dict[str, str]]:
    """``{host: {metric: tag}}``, hosts and metrics sorted."""
    out: dict[str, dict[str, str]] = {}
    for tag in sorted(tags):
        parts = names.split(tag)
        if parts is not None:
            out.setdefault(parts[0], {})[parts[1]] = tag
    return out


def nearest(wall_times: np.ndarray, values: np.ndarray, wall_time: float) -> \
        tuple[float, float] | None:
    """``(wall time, value)`` of the sample nearest to ``wall_time`` (the earlier one on a
    tie); None for an empty series. Wall times are sorted (the reader merges by them)."""
    n = int(wall_times.shape[0])
    if n == 0:
        return None
    i = int(np.searchsorted(wall_times, wall_time, side="left"))
    if i >= n or (i > 0 and wall_time - wall_times[i - 1] <= wall_times[i] - wall_time):
        i -= 1
    return float(wall_times[i]), float(values[i])


def state_at(hosts: dict[str, dict[str, str]], read: Read, wall_time: float) -> list[dict]:
    """Every host's metrics at ``wall_time``: ``[{"host", "metrics": {metric: {"value",
    "wall_time"}}}]``."""
    out = []
    for host, metrics in hosts.items():
        found = {}
        for metric, tag in metrics.items():
            data = read(tag)
            hit = nearest(data.wall_times, data.values, wall_time)
            if hit is not None:
                found[metric] = {"wall_time": hit[0], "value": json_number(hit[1])}
        out.append({"host": host, "metrics": found})
    return out


def gpu_memory_peak(tags: Iterable[str], read: Read) -> float | None:
    """The most GPU memory any GPU of any host of the run had in use (bytes), None when
    no GPU was sampled."""
    peak = None
    for tag in tags:
        parts = names.split(tag)
        if parts is None or not names.GPU_MEMORY_USED.match(parts[1]):
            continue
        values = np.asarray(read(tag).values)
        finite = values[np.isfinite(values)]
        if finite.size:
            top = float(finite.max())
            peak = top if peak is None else max(peak, top)
    return peak
