"""Long series on disk: spilled beyond SPILL_POINTS, memory-mapped, answered from the
min/max pyramid; values always those of the records."""

from __future__ import annotations

import numpy as np
import pytest

from visualdl import LogWriter
from visualdl.reader import scalar_cache
from visualdl.reader.log_reader import LogReader
from visualdl.series.downsample import minmax_indices
from visualdl.server.reader_provider import LogReaderProvider

N = 300_000
SPIKES = {12_345: 40.0, 250_001: -40.0}


def values_at(steps: np.ndarray) -> np.ndarray:
    out = np.cos(steps / 777.0)
    for step, v in SPIKES.items():
        out = np.where(steps == step, v, out)
    return out


def write(logdir, lo, hi):
    with LogWriter(logdir=str(logdir)) as w:
        steps = np.arange(lo, hi)
        for s, v in zip(steps.tolist(), values_at(steps).tolist()):
            w.add_scalar("x", v, step=s, walltime=1.0 + s)


@pytest.fixture
def spilled(tmp_path, monkeypatch):
    monkeypatch.setattr(scalar_cache, "SPILL_POINTS", 50_000)
    monkeypatch.setenv("VISUALDL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(scalar_cache, "_session", None)
    monkeypatch.setattr(scalar_cache, "_broken", [])
    write(tmp_path / "run", 0, N)
    reader = LogReader(tmp_path / "run")
    provider = LogReaderProvider([str(tmp_path / "run")])
    provider._reader = reader
    return tmp_path, reader, provider


def test_series_is_memory_mapped_and_exact(spilled):
    tmp, reader, _ = spilled
    data = reader.scalars("run", "x")
    assert isinstance(data, scalar_cache.SpilledScalars)
    assert isinstance(data.values.base, np.memmap) or isinstance(data.values, np.memmap)
    assert np.array_equal(data.steps, np.arange(N))
    assert np.array_equal(data.values, values_at(np.arange(N)))
    assert np.array_equal(data.wall_times, 1.0 + np.arange(N))
    files = list((tmp / "cache").rglob("values.f64"))
    assert len(files) == 1 and files[0].stat().st_size == N * 8


def test_full_view_from_the_pyramid_keeps_spikes_and_extremes(spilled):
    _, _, provider = spilled
    view = provider.scalar_view("run", "x", 1000)
    assert view.downsampled and view.total == N and len(view.steps) <= 1000
    assert view.steps[0] == 0 and view.steps[-1] == N - 1
    assert list(np.diff(view.steps) > 0) == [True] * (len(view.steps) - 1)
    for step, value in SPIKES.items():
        assert value in view.values.tolist() and step in view.steps.tolist()
    assert np.array_equal(view.values, values_at(view.steps))  # real points, not averages


def test_windows_exact_when_few_buckets_when_many(spilled):
    _, _, provider = spilled
    few = provider.scalar_view("run", "x", 1000, 12_000, 12_700)
    assert few.steps.tolist() == list(range(12_000, 12_701)) and not few.downsampled
    assert np.array_equal(few.values, values_at(np.arange(12_000, 12_701)))
    many = provider.scalar_view("run", "x", 500, 10_001, 200_003)
    assert many.downsampled and many.window_total == 190_003 and len(many.steps) <= 500
    assert many.steps[0] == 10_001 and many.steps[-1] == 200_003
    assert 12_345 in many.steps.tolist()
    window = values_at(np.arange(10_001, 200_004))
    assert many.values.max() == window.max() and many.values.min() == window.min()
    one = provider.scalar_view("run", "x", 100, 77_777, 77_777)
    assert one.steps.tolist() == [77_777]


def test_same_buckets_as_in_memory_for_the_extremes(spilled):
    """Every min/max bucket of the in-memory downsampler has its extreme in some pyramid
    block: the pyramid's answer holds the window's extremes of each of its blocks."""
    _, reader, provider = spilled
    data = reader.scalars("run", "x")
    ram = minmax_indices(np.asarray(data.values), 1000)
    disk = provider.scalar_view("run", "x", 1000)
    assert abs(len(ram) - len(disk.steps)) < 700
    assert set(SPIKES) <= set(disk.steps.tolist()) & set(ram.tolist())


def test_appended_records_extend_the_cache(spilled):
    tmp, reader, provider = spilled
    write(tmp / "run", N, N + 70_000)  # a second record file in the same run
    reader.reload()
    data = reader.scalars("run", "x")
    assert len(data.steps) == N + 70_000
    assert np.array_equal(np.sort(np.asarray(data.steps)), np.arange(N + 70_000))
    view = provider.scalar_view("run", "x", 1000, N + 100, N + 200)
    assert view.steps.tolist() == list(range(N + 100, N + 201))
    assert np.array_equal(view.values, values_at(np.arange(N + 100, N + 201)))


def test_small_series_stay_in_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("VISUALDL_CACHE_DIR", str(tmp_path / "cache"))
    write(tmp_path / "run", 0, 1000)
    data = LogReader(tmp_path / "run").scalars("run", "x")
    assert not isinstance(data, scalar_cache.SpilledScalars)
    assert not (tmp_path / "cache").exists()


def test_unwritable_cache_keeps_the_series_in_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setattr(scalar_cache, "SPILL_POINTS", 10_000)
    monkeypatch.setenv("VISUALDL_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(scalar_cache, "_session", None)
    monkeypatch.setattr(scalar_cache, "_broken", [])
    write(tmp_path / "run", 0, 30_000)
    data = LogReader(tmp_path / "run").scalars("run", "x")
    assert not isinstance(data, scalar_cache.SpilledScalars)
    assert np.array_equal(data.values, values_at(np.arange(30_000)))


def test_block_extremes_ignore_nan_like_a_masked_argmin():
    rng = np.random.default_rng(3)
    block = rng.normal(size=(64, scalar_cache.BASE))
    block[5, 17] = np.nan                 # one NaN in a row
    block[9, :] = np.nan                  # a row of NaN only
    block[11, ::2] = np.nan               # half NaN, the minimum among the rest
    block[11, 101] = -9.0
    block[20, 0] = np.nan                 # a NaN first, the maximum after it
    block[20, 3] = 9.0
    lo, hi, lo_v, hi_v = scalar_cache.block_extremes(block.copy())
    nan = np.isnan(block)
    want_lo = np.where(nan, np.inf, block).argmin(axis=1)
    want_hi = np.where(nan, -np.inf, block).argmax(axis=1)
    assert np.array_equal(lo, want_lo) and np.array_equal(hi, want_hi)
    rows = np.arange(64)
    assert np.array_equal(lo_v, block[rows, want_lo], equal_nan=True)
    assert np.array_equal(hi_v, block[rows, want_hi], equal_nan=True)
    assert (lo[11], lo_v[11], hi[20], hi_v[20]) == (101, -9.0, 3, 9.0)
    assert lo[9] == 0 and np.isnan(lo_v[9]) and np.isnan(hi_v[9])
