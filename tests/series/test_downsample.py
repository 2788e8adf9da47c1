"""Min/max downsampling: spikes survive, nothing is invented, limits hold."""

import numpy as np
import pytest

from visualdl.series.downsample import MIN_POINTS, minmax_indices


def _buckets(n: int, max_points: int) -> list[range]:
    width = -(-n // ((max_points - 2) // 2))
    return [range(i, min(i + width, n)) for i in range(0, n, width)]


def test_exact_when_under_limit():
    values = np.arange(10, dtype=float)
    assert minmax_indices(values, 10).tolist() == list(range(10))
    assert minmax_indices(values, 1000).tolist() == list(range(10))
    assert minmax_indices(np.array([], dtype=float), 10).tolist() == []


@pytest.mark.parametrize("n,max_points", [(1001, 1000), (100_000, 1000), (12_345, 77), (50, 4)])
def test_every_bucket_keeps_its_min_and_max(n, max_points):
    rng = np.random.default_rng(n)
    values = rng.normal(size=n)
    idx = minmax_indices(values, max_points)
    assert len(idx) <= max_points
    assert idx[0] == 0 and idx[-1] == n - 1
    assert np.all(np.diff(idx) > 0)
    kept = set(idx.tolist())
    for bucket in _buckets(n, max_points):
        chunk = values[bucket.start : bucket.stop]
        assert bucket.start + int(np.argmin(chunk)) in kept
        assert bucket.start + int(np.argmax(chunk)) in kept


def test_single_spike_survives():
    values = np.zeros(100_000)
    values[54_321] = 1e9
    values[12_345] = -1e9
    idx = minmax_indices(values, 100)
    assert 54_321 in idx and 12_345 in idx


def test_nonfinite_values():
    values = np.linspace(0, 1, 10_000)
    values[100] = np.inf
    values[200] = -np.inf
    values[5000:6200] = np.nan  # covers a whole bucket: it keeps one NaN
    values[7000] = np.nan  # NaN never beats a finite min/max
    idx = minmax_indices(values, 40)
    picked = values[idx]
    assert np.inf in picked and -np.inf in picked
    assert np.isnan(picked).sum() >= 1
    assert 7000 not in idx


def test_rejects_tiny_limit():
    with pytest.raises(ValueError):
        minmax_indices(np.zeros(10), MIN_POINTS - 1)
