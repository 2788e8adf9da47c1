"""Smoothing modes of a scalar chart, computed on the server at the points a chart draws.

Every mode is computed over the *whole* series (from far enough before a zoomed window that
what comes before weighs nothing), so a zoomed chart, the full view and a download draw the
same curve. Non-finite values pass through unsmoothed and do not count, as in the EMA.

- ``ema``: the debiased EMA of TensorBoard (:func:`visualdl.series.downsample.smoothed_at`).
- ``time_ema``: a time-weighted EMA. A point ``g`` steps before another weighs
  ``w ** (g / u)`` in it, ``u`` being the series' mean step gap (its step span over its
  points less one): ``num = num * d + v; den = den * d + 1; shown = num / den`` with
  ``d = w ** (max(step - previous step, 0) / u)``. Evenly logged, it is the EMA exactly;
  logged unevenly (a denser stretch, a pause), each point weighs by how far back it was
  logged, not by how many points came between (W&B's default since 2023).
- ``running``: the mean of the finite values among the last ``N`` points (the point itself
  included; fewer at the series' start).
- ``envelope`` (with any mode): each drawn point's band is the minimum and maximum of the
  raw points nearer to it, by index, than to its neighbours: every raw point of the window
  lies in one drawn point's band, so a downsampled chart still shows the spread it hides.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from visualdl.series.downsample import SMOOTH_MAX_SPAN, gather_back, smoothed_at

__all__ = ["MODES", "Smoothing", "smooth_at", "envelope_at", "time_ema", "running_mean",
           "MAX_RUNNING_POINTS"]

MODES = ("ema", "time_ema", "running")
#: the largest N of the running average (a request's)
MAX_RUNNING_POINTS = 1_000_000
#: a weight below exp(-_NEGLIGIBLE) is below a double's precision against the newest point
_NEGLIGIBLE = 40.0
#: the exponents one block of the time-weighted scan may span (exp() holds up to 709)
_SPAN = 600.0
#: points per block of that scan: at least _BLOCK (its increments are capped at
#: _NEGLIGIBLE, so 16 of them span at most 640), at most _MAX_BLOCK
_BLOCK = 16
_MAX_BLOCK = 4096
#: values gathered at once when smoothing point by point (memory: 8 bytes each)
_GATHER = 1 << 22


class Smoothing(NamedTuple):
    """What a chart smooths with: ``mode``, the weight of the EMAs, the ``points`` of the
    running average, and whether the min/max ``envelope`` of the raw points is wanted."""

    mode: str = "ema"
    weight: float = 0.0
    points: int = 0
    envelope: bool = False

    @property
    def active(self) -> bool:
        """Whether the mode changes anything (a weight of 0, or N of 1, does not)."""
        if self.mode == "running":
            return self.points > 1
        return self.weight > 0


def smooth_at(data: Any, idx: np.ndarray, spec: Smoothing) -> np.ndarray | None:
    """The smoothed values of the whole series ``data`` (``Scalars``) at ``idx`` (sorted
    indices); None when the span of ``idx`` is too wide to read (``SMOOTH_MAX_SPAN``)."""
    values = data.values
    if not spec.active or not idx.shape[0]:
        return np.asarray(values[idx], dtype=np.float64)
    if spec.mode == "ema":
        return smoothed_at(values, idx, spec.weight)
    if int(idx[-1]) - int(idx[0]) > SMOOTH_MAX_SPAN:
        return None
    if spec.mode == "running":
        return _running_at(values, idx, spec.points)
    return _time_ema_at(data, idx, spec.weight)


def envelope_at(values: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The lowest and highest raw value around each of ``idx``: the raw points from halfway
    to the previous drawn point to halfway to the next (NaN where they are all non-finite).
    None when the span is too wide to read."""
    if not idx.shape[0]:
        empty = np.empty(0)
        return empty, empty
    first, last = int(idx[0]), int(idx[-1])
    if last - first > SMOOTH_MAX_SPAN:
        return None
    raw = np.asarray(values[first:last + 1], dtype=np.float64)
    starts = np.empty(idx.shape[0], dtype=np.int64)
    starts[0] = 0
    starts[1:] = (idx[:-1] + idx[1:]) // 2 + 1 - first
    # fmin/fmax skip NaN; an infinity wins, so only then are the infinities masked
    lower, upper = np.fmin.reduceat(raw, starts), np.fmax.reduceat(raw, starts)
    if np.isinf(lower).any() or np.isinf(upper).any():
        finite = np.where(np.isfinite(raw), raw, np.nan)
        lower, upper = np.fmin.reduceat(finite, starts), np.fmax.reduceat(finite, starts)
    return lower, upper


# -- the time-weighted EMA ----------------------------------------------------------------
def time_ema(steps: np.ndarray, values: np.ndarray, weight: float,
             unit: float | None = None) -> np.ndarray:
    """The time-weighted EMA of a whole series (see the module's docstring); ``unit``: the
    step gap a weight of ``weight`` is per (the series' mean gap by default)."""
    values = np.asarray(values, dtype=np.float64)
    steps = np.asarray(steps)
    out = values.copy()
    if not weight > 0 or not values.shape[0]:
        return out
    if unit is None:
        unit = mean_gap(steps)
    finite = np.isfinite(values)
    s, v = steps[finite], values[finite]
    if not s.shape[0]:
        return out
    out[finite] = _time_ema(s, v, weight, unit)
    return out


def mean_gap(steps: np.ndarray) -> float:
    """The mean step gap of a series: its step span over its points less one (1 when it has
    no span: one point, or a series that went back to where it started)."""
    n = int(steps.shape[0])
    if n < 2:
        return 1.0
    span = float(steps[n - 1]) - float(steps[0])
    return span / (n - 1) if span > 0 else 1.0


def _time_ema(steps: np.ndarray, values: np.ndarray, weight: float, unit: float) -> np.ndarray:
    """The time-weighted EMA of finite ``values``: decay exponents per point, then the
    linear recurrence ``x = x * exp(-inc) + b`` for numerator and denominator at once."""
    inc = _increments(steps, weight, unit)
    both = np.empty((2, values.shape[0]))
    scale = float(np.max(np.abs(values))) or 1.0  # exp() of a block must not overflow b
    np.multiply(values, 1.0 / scale, out=both[0])
    both[1] = 1.0
    x = _decay_scan(inc, both)
    return x[0] / x[1] * scale


def _increments(steps: np.ndarray, weight: float, unit: float) -> np.ndarray:
    """How much each point's predecessors fade when it comes: ``-ln(w) * gap / u``, capped
    where the rest weighs nothing anyway (``_NEGLIGIBLE``); the first point's is 0."""
    inc = np.zeros(steps.shape[0])
    if weight >= 1.0:
        return inc
    gaps = inc[1:]
    np.subtract(steps[1:], steps[:-1], out=gaps, casting="unsafe")
    np.maximum(gaps, 0.0, out=gaps)
    gaps *= -np.log(weight) / unit
    np.minimum(gaps, _NEGLIGIBLE, out=gaps)
    return inc


def _block(inc: np.ndarray) -> int:
    """Points per block of the scan: as many as keep a block's exponents below _SPAN."""
    top = float(np.max(inc)) if inc.shape[0] else 0.0
    if top <= _SPAN / _MAX_BLOCK:
        return _MAX_BLOCK
    return max(_BLOCK, 1 << int(np.log2(_SPAN / top)))


def _decay_scan(inc: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``x[:, k] = x[:, k-1] * exp(-inc[k]) + b[:, k]`` (``x[:, -1] = 0``) for each row of
    ``b``.

    By blocks of points: within a block ``x = exp(-r) * cumsum(b * exp(r))`` (``r``: the
    exponents summed from the block's first point, kept below ``_SPAN`` by the block's
    length), and the blocks' last values are the same recurrence one level up, solved the
    same way: a few numpy passes instead of a Python step per point."""
    n = inc.shape[0]
    size = _block(inc)
    k = b.shape[0]
    if n <= size:
        r = np.cumsum(inc)
        r -= r[0]
        grow = np.exp(r)
        return np.cumsum(b * grow, axis=1) / grow
    rows = -(-n // size)
    pad = rows * size - n
    incp = np.concatenate([inc, np.zeros(pad)]).reshape(rows, size)
    bp = np.concatenate([b, np.zeros((k, pad))], axis=1).reshape(k, rows, size)
    first = incp[:, 0].copy()
    incp[:, 0] = 0.0
    r = np.cumsum(incp, axis=1)
    grow = np.exp(r)
    bp *= grow
    local = np.cumsum(bp, axis=2)
    local /= grow
    # the carry into each block: the previous block's end, faded by first + r
    up = np.minimum(first + r[:, -1], _NEGLIGIBLE)
    up[0] = 0.0
    ends = _decay_scan(up, np.ascontiguousarray(local[:, :, -1]))
    with np.errstate(under="ignore"):
        fade = np.exp(-first)[:, None] / grow
    local[:, 1:, :] += ends[:, :-1, None] * fade[None, 1:, :]
    return local.reshape(k, rows * size)[:, :n]


def _time_ema_at(data: Any, idx: np.ndarray, weight: float) -> np.ndarray:
    """The time-weighted EMA of the whole series at ``idx``: run from where what comes
    before weighs nothing (steps in order: a binary search back from the first point;
    otherwise from the series' start, as the gaps are summed from there)."""
    steps, values = data.steps, data.values
    unit = mean_gap(steps)
    first, last = int(idx[0]), int(idx[-1])
    start = 0
    if weight < 1.0 and _ordered_steps(data):
        back = _NEGLIGIBLE * unit / -np.log(weight)
        edge = np.int64(max(float(steps[first]) - back, -2.0**62))  # (an int: no float copy)
        start = int(np.searchsorted(steps[:first + 1], edge, "left"))
        start = max(0, start - 1)
        found = _time_ema_gathered(data, idx, weight, unit, back)
        if found is not None:
            return found
    if last - start > SMOOTH_MAX_SPAN:
        return None  # type: ignore[return-value]
    s = np.asarray(steps[start:last + 1])
    v = np.asarray(values[start:last + 1], dtype=np.float64)
    return time_ema(s, v, weight, unit)[idx - start]


def _time_ema_gathered(data: Any, idx: np.ndarray, weight: float, unit: float,
                       back: float) -> np.ndarray | None:
    """Steps in order: the weight of a point ``g`` steps back is ``w ** (g / u)`` whatever
    lies between, so each of a few points far apart is the weighted mean of the points
    within ``back`` steps before it, gathered. None when that reads more than twice the
    points a pass over the span would."""
    steps = data.steps
    at_steps = np.asarray(steps[idx], dtype=np.float64)
    edges = np.maximum(at_steps - back, -2.0**62).astype(np.int64)  # ints: no float copy
    lows = np.searchsorted(steps, edges, "left")  # memory-mapped: a few pages
    depth = int(np.max(idx - lows)) + 1
    if idx.shape[0] * depth > 2 * (int(idx[-1]) - int(lows[0]) + 1):
        return None
    ago = np.arange(depth, dtype=np.int64)
    rate = -np.log(weight) / unit
    out = np.empty(idx.shape[0])
    rows = max(1, _GATHER // depth)
    head = int(np.searchsorted(idx, depth - 1))  # rows that reach before the series' start
    chunks = [(0, head)] if head else []
    chunks += [(a, min(a + rows, idx.shape[0])) for a in range(head, idx.shape[0], rows)]
    for a, b in chunks:
        at = idx[a:b]
        pos = at[:, None] - ago[None, :]
        clipped = a < head
        flat = (np.maximum(pos, 0) if clipped else pos).ravel()
        got = np.asarray(data.values[flat], dtype=np.float64).reshape(pos.shape)
        gap = steps[flat].reshape(pos.shape) - at_steps[a:b, None]
        gap *= rate
        with np.errstate(under="ignore"):
            wts = np.exp(gap, out=gap)  # steps in order: every exponent is <= 0
        ok = np.isfinite(got)
        if clipped or not ok.all():
            ok &= pos >= 0
            wts[~ok] = 0.0
            got = np.where(ok, got, 0.0)
        with np.errstate(invalid="ignore"):
            mean = np.einsum("ij,ij->i", wts, got) / wts.sum(axis=1)
        own = np.asarray(data.values[at], dtype=np.float64)
        out[a:b] = np.where(np.isfinite(own), mean, own)
    return out


def _ordered_steps(data: Any) -> bool:
    known = getattr(data, "ordered", None)
    if known is not None:
        return bool(known("steps"))
    steps = data.steps
    return bool(steps.shape[0] < 2 or np.all(steps[1:] >= steps[:-1]))


# -- the running average ------------------------------------------------------------------
def running_mean(values: np.ndarray, points: int) -> np.ndarray:
    """The mean of the finite values among the last ``points`` points at each point (itself
    included); a non-finite point passes through."""
    values = np.asarray(values, dtype=np.float64)
    return _running_at(values, np.arange(values.shape[0]), points)


def _running_at(values: np.ndarray, idx: np.ndarray, points: int) -> np.ndarray:
    """The running mean at ``idx``: by prefix sums over the span the points read (values
    taken relative to the first finite one, so the sums keep their precision), or, for a
    few points far apart, by gathering each one's ``points`` predecessors."""
    first, last = int(idx[0]), int(idx[-1])
    lo = max(0, first - points + 1)
    if idx.shape[0] * points <= 8 * (last - lo + 1):
        return _running_gathered(values, idx, points)
    raw = np.asarray(values[lo:last + 1], dtype=np.float64)
    finite = np.isfinite(raw)
    base = float(raw[finite][0]) if finite.any() else 0.0
    sums = np.concatenate([[0.0], np.cumsum(np.where(finite, raw - base, 0.0))])
    counts = np.concatenate([[0], np.cumsum(finite)])
    at = idx - lo
    begin = np.maximum(at - points + 1, 0)
    n = counts[at + 1] - counts[begin]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (sums[at + 1] - sums[begin]) / n + base
    own = raw[at]
    return np.where(np.isfinite(own), mean, own)


def _running_gathered(values: np.ndarray, idx: np.ndarray, points: int) -> np.ndarray:
    out = np.empty(idx.shape[0])
    for a, at, got, inside in gather_back(values, idx, points):
        ok = inside & np.isfinite(got)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(ok, got, 0.0).sum(axis=1) / ok.sum(axis=1)
        own = got[:, -1]
        out[a:a + at.shape[0]] = np.where(np.isfinite(own), mean, own)
    return out
