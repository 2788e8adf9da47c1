"""Run groups: many runs of one tag drawn as one line (their mean or median) and a band.

A sweep of 2,000 runs is unreadable as 2,000 lines; grouped by a regex capture on the run
name (``^(.*)_seed\\d+$``: the seeds of each configuration) or by hyper-parameter values,
it is a handful of lines with their spread. The work happens here, on the server, from the
provider's full-resolution series, so the browser receives a few thousand numbers per group
whatever the number of runs.

How a group is computed, in order:

1. Each member's series is smoothed at full resolution with the debiased EMA the chart uses
   (``smooth``: TensorBoard's; non-finite points pass through and do not count).
2. The members are aligned on a common grid of steps. When every member logged the same
   steps (the usual sweep), that grid is those steps and nothing is interpolated. Otherwise
   the grid is the union of the members' steps when it holds at most ``points`` steps, else
   ``points`` evenly spaced steps from the group's first to its last step (rounded to
   integers, duplicates dropped). Each member is linearly interpolated (``numpy.interp``)
   onto the grid steps that lie within its own first..last step; outside that range it has
   no value (NaN), it is never extrapolated. A member that logged a step twice (a resumed
   run) keeps the point logged last for that step.
3. At each grid step, over the members that have a finite value there: the centre line
   (mean, or median) and the band: ``minmax`` (min to max), ``std`` (mean +- one population
   standard deviation, ddof=0) or ``sem`` (mean +- std / sqrt(count)). With the median, the
   std/sem bands are still centred on the mean, as W&B draws them. ``count`` says how many
   members each grid step averages.
4. When the grid is longer than ``points``, it is thinned to ``points`` steps (evenly by
   index) after the statistics, so the answer stays the size of the chart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from visualdl.series.patterns import compile_pattern

__all__ = ["smooth", "group_runs", "group_stats", "GroupSpec", "STATS", "BANDS"]

STATS = ("mean", "median")
BANDS = ("minmax", "std", "sem")
# EMA block length: b multiply-adds per point, and a Python step per block for the carry.
# Short series in a stack (a sweep) take small blocks; one long series takes long ones.
_BLOCK_SHORT, _BLOCK_LONG = 64, 256
_COLUMN_LOOP = 20_000  # a stack of series at most this long is smoothed column by column


def smooth(values: np.ndarray, weight: float) -> np.ndarray:
    """The debiased exponential moving average of ``values`` (the chart's smoothing).

    ``last = last*w + (1-w)*v; shown = last / (1 - w**n)``, ``n`` counting finite points
    only; non-finite points pass through. Vectorized: the EMA of each block of 64 or 256
    points from a zero start is one matrix product, and the carry from the previous block
    decays by ``w**(k+1)`` into it, so a million points cost a few milliseconds instead of a
    Python loop's second.
    """
    values = np.asarray(values, dtype=np.float64)
    if not weight > 0 or values.shape[0] == 0:
        return values.copy()
    finite = np.isfinite(values)
    out = values.copy()
    if finite.all():
        out[:] = _ema_rows(values[None, :], weight)[0]
    else:
        out[finite] = _ema_rows(values[finite][None, :], weight)[0]
    return out


def _ema_rows(matrix: np.ndarray, weight: float) -> np.ndarray:
    """Debiased EMA along each row of a finite 2-D array (all rows the same length)."""
    rows, n = matrix.shape
    if n == 0:
        return matrix.copy()
    w = float(weight)
    if rows > 1 and n <= _COLUMN_LOOP:
        ema = _ema_columns(matrix, w)
    else:
        ema = _ema_blocks(matrix, w)
    if w >= 1.0:
        return ema
    with np.errstate(under="ignore"):
        debias = 1.0 - np.power(w, np.arange(1, n + 1, dtype=np.float64))
    return ema / debias[None, :]


def _ema_columns(matrix: np.ndarray, w: float) -> np.ndarray:
    """EMA from a zero start, a step at a time over every row at once: for a stack of short
    series (a sweep's runs) this beats the block products, whose small BLAS calls cost more
    than their arithmetic."""
    cols = np.ascontiguousarray(matrix.T)
    out = np.empty_like(cols)
    last = np.zeros(cols.shape[1])
    scaled = cols * (1.0 - w)
    for j in range(cols.shape[0]):
        last *= w
        last += scaled[j]
        out[j] = last
    return out.T


def _ema_blocks(matrix: np.ndarray, w: float) -> np.ndarray:
    """EMA from a zero start by blocks: one matrix product per call, a Python step per
    block for the carry (long series)."""
    rows, n = matrix.shape
    b = min(_BLOCK_SHORT if n <= 100_000 else _BLOCK_LONG, n)
    k = np.arange(b)
    # lower-triangular T[i, j] = (1-w) * w**(i-j): one block's EMA from a zero start.
    expo = k[:, None] - k[None, :]
    with np.errstate(under="ignore"):
        tri = np.where(expo >= 0, (1.0 - w) * np.power(w, np.maximum(expo, 0)), 0.0)
        decay = np.power(w, k + 1)  # how the previous block's last value fades in
    blocks = -(-n // b)
    padded = np.zeros((rows, blocks * b))
    padded[:, :n] = matrix
    # one 2-D product (a single BLAS call), not a stack of small ones
    local = (padded.reshape(rows * blocks, b) @ tri.T).reshape(rows, blocks, b)
    carry = np.zeros(rows)
    for i in range(blocks):
        local[:, i, :] += carry[:, None] * decay[None, :]
        carry = local[:, i, -1]
    return local.reshape(rows, blocks * b)[:, :n]


@dataclass(frozen=True)
class GroupSpec:
    """How runs are grouped: by a regex on the run name (the captured groups, joined by
    ``/``, or the whole match when the pattern captures nothing) or by hparam values. A run
    the regex does not match, or without the hparams, is a group of its own (its name). The
    regex comes from a request: it is matched by RE2 (``patterns``), in linear time."""

    regex: str | None = None
    hparams: tuple[str, ...] = ()

    def compiled(self) -> Any:
        """The compiled regex (``patterns.compile_pattern``: a ``PatternError`` names it
        ``regex``), or None when grouping by hparams."""
        return compile_pattern(self.regex, "regex") if self.regex else None


def group_runs(runs: Iterable[str], spec: GroupSpec,
               hparams_of: Callable[[str], dict[str, Any] | None]) -> dict[str, list[str]]:
    """``{group name: member runs}``, groups in order of their first member."""
    pattern = spec.compiled()
    groups: dict[str, list[str]] = {}
    for run in runs:
        name = run
        if pattern is not None:
            # RE2 matches UTF-8 bytes: handed bytes, its wrapper skips a slow per-call
            # translation of offsets; surrogatepass keeps any name (an undecodable file name)
            found = pattern.search(run.encode("utf-8", "surrogatepass"))
            if found is not None:
                captured = found.groups() if pattern.groups else ()
                parts = [_text(g) for g in captured if g is not None]
                name = "/".join(parts) if captured else _text(found.group(0))
        elif spec.hparams:
            values = hparams_of(run) or {}
            if any(h in values for h in spec.hparams):
                name = ", ".join(f"{h}={_fmt(values.get(h))}" for h in spec.hparams)
        groups.setdefault(name, []).append(run)
    return groups


def _text(raw: bytes) -> str:
    """A captured part of a name as text (RE2 may cut a surrogate's bytes: then a U+FFFD)."""
    try:
        return raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace")


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@dataclass
class GroupResult:
    steps: np.ndarray
    center: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    count: np.ndarray
    members: list[str] = field(default_factory=list)
    interpolated: bool = False


def group_stats(series: list[tuple[np.ndarray, np.ndarray]], *, smoothing: float = 0.0,
                stat: str = "mean", band: str = "minmax", points: int = 1000,
                window: tuple[int | None, int | None] = (None, None)) -> GroupResult:
    """Centre line and band of one group from its members' ``(steps, values)`` (see the
    module docstring for every step of the computation)."""
    if stat not in STATS:
        raise ValueError(f"stat must be one of: {', '.join(STATS)}")
    if band not in BANDS:
        raise ValueError(f"band must be one of: {', '.join(BANDS)}")
    cleaned = [_last_per_step(s, v) for s, v in series if len(s)]
    if not cleaned:
        empty = np.empty(0)
        return GroupResult(np.empty(0, np.int64), empty, empty, empty, np.empty(0, np.int64))
    same = all(len(s) == len(cleaned[0][0]) and np.array_equal(s, cleaned[0][0])
               for s, _ in cleaned)
    interpolated = False
    if same:
        grid = cleaned[0][0]
        matrix = np.vstack([v for _, v in cleaned])
        if smoothing > 0:
            matrix = _smooth_matrix(matrix, smoothing)
    else:
        interpolated = True
        grid = _grid([s for s, _ in cleaned], points)
        matrix = np.full((len(cleaned), grid.shape[0]), np.nan)
        for i, (s, v) in enumerate(cleaned):
            v = smooth(v, smoothing) if smoothing > 0 else v
            inside = (grid >= s[0]) & (grid <= s[-1])
            ok = np.isfinite(v)
            if ok.sum() >= 1:
                matrix[i, inside] = np.interp(grid[inside], s[ok], v[ok])
            # a non-finite point stays visible where it was logged
            bad_at = np.searchsorted(grid, s[~ok])
            hit = bad_at < grid.shape[0]
            hit[hit] &= grid[bad_at[hit]] == s[~ok][hit]
            matrix[i, bad_at[hit]] = v[~ok][hit]
    lo, hi = window
    if lo is not None or hi is not None:
        keep = np.ones(grid.shape[0], dtype=bool)
        if lo is not None:
            keep &= grid >= lo
        if hi is not None:
            keep &= grid <= hi
        grid, matrix = grid[keep], matrix[:, keep]
    center, lower, upper, count = _stats(matrix, stat, band)
    if grid.shape[0] > points:
        pick = np.unique(np.linspace(0, grid.shape[0] - 1, points).round().astype(np.int64))
        grid, center, lower, upper, count = (a[pick] for a in (grid, center, lower, upper,
                                                                 count))
    return GroupResult(grid.astype(np.int64), center, lower, upper, count,
                       interpolated=interpolated)


def _last_per_step(steps: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted by step, one point per step (the one logged last)."""
    steps = np.asarray(steps, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    if steps.shape[0] < 2 or bool(np.all(steps[1:] > steps[:-1])):
        return steps, values
    order = np.argsort(steps, kind="stable")
    s, v = steps[order], values[order]
    last = np.ones(s.shape[0], dtype=bool)
    last[:-1] = s[1:] != s[:-1]
    return s[last], v[last]


def _smooth_matrix(matrix: np.ndarray, weight: float) -> np.ndarray:
    if np.isfinite(matrix).all():
        return _ema_rows(matrix, weight)
    return np.vstack([smooth(row, weight) for row in matrix])


def _grid(all_steps: list[np.ndarray], points: int) -> np.ndarray:
    union = np.unique(np.concatenate(all_steps))
    if union.shape[0] <= points:
        return union
    first, last = int(union[0]), int(union[-1])
    return np.unique(np.linspace(first, last, points).round().astype(np.int64))


def _stats(matrix: np.ndarray, stat: str, band: str):
    finite = np.isfinite(matrix)
    count = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if finite.all():
            mean = matrix.mean(axis=0)
            center = mean if stat == "mean" else np.median(matrix, axis=0)
            if band == "minmax":
                lower, upper = matrix.min(axis=0), matrix.max(axis=0)
            else:
                spread = matrix.std(axis=0)
                if band == "sem":
                    spread = spread / np.sqrt(count)
                lower, upper = mean - spread, mean + spread
            return center, lower, upper, count
        masked = np.where(finite, matrix, np.nan)
        total = np.where(finite, matrix, 0.0).sum(axis=0)
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        if stat == "median":
            center = _nanmedian(masked, count)
        else:
            center = mean
        if band == "minmax":
            lower = np.where(count > 0, np.where(finite, matrix, np.inf).min(axis=0), np.nan)
            upper = np.where(count > 0, np.where(finite, matrix, -np.inf).max(axis=0), np.nan)
        else:
            dev = np.where(finite, matrix - mean[None, :], 0.0)
            spread = np.sqrt((dev * dev).sum(axis=0) / np.maximum(count, 1))
            if band == "sem":
                spread = spread / np.sqrt(np.maximum(count, 1))
            spread = np.where(count > 0, spread, np.nan)
            lower, upper = mean - spread, mean + spread
        # a grid step where every member is non-finite shows it (NaN: divergence)
        return center, lower, upper, count


def _nanmedian(masked: np.ndarray, count: np.ndarray) -> np.ndarray:
    out = np.full(masked.shape[1], np.nan)
    cols = count > 0
    if cols.any():
        srt = np.sort(masked[:, cols], axis=0)  # NaN sorts last
        c = count[cols]
        lo = (c - 1) // 2
        hi = c // 2
        idx = np.arange(srt.shape[1])
        out[cols] = (srt[lo, idx] + srt[hi, idx]) / 2.0
    return out

