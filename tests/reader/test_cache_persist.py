"""The scalar disk cache survives restarts: a restarted reader maps the series a previous
one cached and reads only the bytes appended since; a cache that does not check out against
the record file is ignored and rebuilt, and the values are always those of the records."""

from __future__ import annotations

import gc
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from visualdl import LogWriter
from visualdl.format.framing import frame
from visualdl.format.scalar_codec import encode_entry, record_entry
from visualdl.reader import scalar_cache, scalar_persist
from visualdl.storage import cache_folder
from visualdl.reader.log_reader import LogReader
from tests.helpers.cli import start_cli
from tests.helpers.http import Client

SPILL = 20_000
CHUNK = 5_000  # points per record and tag


def value(tag: int, steps: np.ndarray) -> np.ndarray:
    return np.sin(steps / 97.0 + tag) + 1e-3 * ((steps * 7919 + tag) % 1000)


def make_run(run_dir: Path, steps: int, text_every: int = 0) -> Path:
    """A record file with tags a, b (long) and c (short), and texts, written by LogWriter
    (header, texts) and appended to in records of CHUNK points per tag."""
    with LogWriter(logdir=str(run_dir)) as w:
        w.add_text("notes", "start", step=0)
    path = next(p for p in run_dir.iterdir() if "vdlrecords" in p.name)
    append(path, 0, steps, text_every)
    return path


def append(path: Path, lo: int, hi: int, text_every: int = 0) -> int:
    """Append steps [lo, hi) of every tag; returns the number of records written."""
    records = 0
    with open(path, "ab") as f:
        for a in range(lo, hi, CHUNK):
            s = np.arange(a, min(hi, a + CHUNK))
            entries = []
            for k, tag in enumerate(("a", "b")):
                flat = np.column_stack([s, 1e9 + s, value(k, s)]).ravel().tolist()
                entries.append(record_entry(encode_entry(tag, flat)))
            if a < 100:  # tag c stays short: cached as columns, not spilled
                flat = np.column_stack([s[:10], 1e9 + s[:10], -s[:10]]).ravel().tolist()
                entries.append(record_entry(encode_entry("c", flat)))
            f.write(frame(b"".join(entries)))
            records += 1
    return records


def check(reader: LogReader, run: str, n: int) -> None:
    """Every point equals what was written."""
    for k, tag in enumerate(("a", "b")):
        data = reader.scalars(run, tag)
        assert len(data.steps) == n
        assert np.array_equal(data.steps, np.arange(n))
        assert np.array_equal(data.values, value(k, np.arange(n)))
        assert np.array_equal(data.wall_times, 1e9 + np.arange(n))
    c = reader.scalars(run, "c")
    assert np.array_equal(c.values, -np.arange(10.0))


def restart(logdir: Path) -> tuple[LogReader, int]:
    """Start a new reader (the caller dropped the old one: its cache lock goes with it);
    return it and the number of records it read from the files."""
    gc.collect()
    fresh = LogReader(logdir, load=False)
    return fresh, fresh.reload()


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A cache folder of the test's own, series spilled from SPILL points; its writes are
    waited for before the next test."""
    monkeypatch.setattr(scalar_cache, "SPILL_POINTS", SPILL)
    monkeypatch.setattr(scalar_cache, "_session", None)
    monkeypatch.setattr(scalar_cache, "_broken", [])
    cache_folder.configure(cache_dir=tmp_path / "cache")
    yield tmp_path / "cache"
    gc.collect()
    scalar_cache.wait_writes()
    cache_folder.configure()


def manifests(cache: Path) -> list[dict]:
    scalar_cache.wait_writes()  # the commits run on the cache's writer thread
    return [json.loads(p.read_text()) for p in sorted(cache.glob("persist/*/manifest.json"))]


def test_restart_reuses_the_cache_and_reads_nothing(tmp_path, cache):
    logdir = tmp_path / "logs"
    path = make_run(logdir / "run", 60_000)
    first = LogReader(logdir, load=False)
    records = first.reload()
    assert records == 1 + 60_000 // CHUNK + 2  # header record, scalar records, the text, close
    check(first, "run", 60_000)
    (m,) = manifests(cache)
    assert m["offset"] == path.stat().st_size
    assert {s["tag"]: s["spilled"] for s in m["series"]} == {"a": True, "b": True, "c": False}
    before = dict(scalar_persist.stats)
    del first
    reader, read = restart(logdir)
    assert read == 0  # nothing decoded from the record file
    assert scalar_persist.stats["skipped_bytes"] - before["skipped_bytes"] == path.stat().st_size
    assert isinstance(reader.scalars("run", "a"), scalar_cache.SpilledScalars)
    check(reader, "run", 60_000)
    assert [t.text for t in reader.texts("run", "notes")] == ["start"]
    assert reader.tags("run") == {"scalar": ["a", "b", "c"], "text": ["notes"]}
    assert reader.error_messages == []


def test_records_appended_after_restart_are_read_and_kept(tmp_path, cache):
    logdir = tmp_path / "logs"
    path = make_run(logdir / "run", 40_000)
    first = LogReader(logdir)
    check(first, "run", 40_000)
    del first
    reader, read = restart(logdir)
    assert read == 0
    added = append(path, 40_000, 70_000)
    assert reader.reload() == added  # only the appended records
    check(reader, "run", 70_000)
    assert manifests(cache)[0]["offset"] == path.stat().st_size
    # appended while no server ran: the next start reads just those
    added = append(path, 70_000, 80_000)
    del reader
    reader, read = restart(logdir)
    assert read == added
    check(reader, "run", 80_000)
    assert reader.error_messages == []


def _series_dir(cache: Path) -> Path:
    scalar_cache.wait_writes()
    (folder,) = cache.glob("persist/*")
    m = json.loads((folder / "manifest.json").read_text())
    return folder / next(s["dir"] for s in m["series"] if s["tag"] == "a")


def _garbage_manifest(cache: Path) -> None:
    scalar_cache.wait_writes()
    (next(cache.glob("persist/*/manifest.json"))).write_text("{not json")


def _truncated_values(cache: Path) -> None:
    f = _series_dir(cache) / "values.f64"
    os.truncate(f, f.stat().st_size // 2)


def _scribbled_values(cache: Path) -> None:
    f = _series_dir(cache) / "values.f64"
    f.write_bytes(np.full(f.stat().st_size // 8, 123.0).tobytes())


def _scribbled_level0(cache: Path) -> None:
    f = _series_dir(cache) / "hi_v.f64"
    raw = bytearray(f.read_bytes())
    raw[-8:] = np.float64(1e9).tobytes()
    f.write_bytes(bytes(raw))


def _truncated_block_steps(cache: Path) -> None:
    f = _series_dir(cache) / "firsts.i64"
    os.truncate(f, f.stat().st_size - 8)


def _scribbled_short_series(cache: Path) -> None:
    (folder,) = cache.glob("persist/*")
    m = json.loads((folder / "manifest.json").read_text())
    f = folder / next(s["dir"] for s in m["series"] if s["tag"] == "c") / "values.f64"
    f.write_bytes(np.full(f.stat().st_size // 8, 7.0).tobytes())


def _lost_other_records(cache: Path) -> None:
    os.truncate(next(cache.glob("persist/*/others.i64")), 0)


def _older_format(cache: Path) -> None:
    path = next(cache.glob("persist/*/manifest.json"))
    m = json.loads(path.read_text())
    m["format"] = 1
    path.write_text(json.dumps(m))


def _missing_series(cache: Path) -> None:
    shutil.rmtree(_series_dir(cache))


@pytest.mark.parametrize("damage", [_garbage_manifest, _truncated_values, _scribbled_values,
                                    _scribbled_level0, _truncated_block_steps,
                                    _scribbled_short_series, _lost_other_records,
                                    _older_format, _missing_series])
def test_a_damaged_cache_is_ignored_and_rebuilt(tmp_path, cache, damage):
    logdir = tmp_path / "logs"
    make_run(logdir / "run", 60_000)
    first = LogReader(logdir)
    del first
    gc.collect()
    scalar_cache.wait_writes()
    damage(cache)
    reader, read = restart(logdir)
    assert read == 1 + 60_000 // CHUNK + 2  # read again from the records (+ the close marker)
    check(reader, "run", 60_000)
    assert any("scalar cache ignored" in m for m in reader.error_messages)
    # and rebuilt: the next start uses it again
    del reader
    reader, read = restart(logdir)
    assert read == 0
    check(reader, "run", 60_000)


def test_a_replaced_shrunk_or_rewritten_record_file_invalidates(tmp_path, cache):
    logdir = tmp_path / "logs"
    path = make_run(logdir / "run", 60_000)
    first = LogReader(logdir)
    del first
    # replaced: a new file at the same path, with other values
    tmp = path.with_suffix(".new")
    shutil.copy(path, tmp)
    raw = bytearray(tmp.read_bytes())
    os.replace(tmp, path)
    reader, read = restart(logdir)
    assert read == 1 + 60_000 // CHUNK + 2  # (+ the close marker)
    check(reader, "run", 60_000)
    # shrunk: cut to its first 30,000 steps (the header and text records come first)
    del reader
    gc.collect()
    keep = len(raw) - sum(_record_size(lo) for lo in range(30_000, 60_000, CHUNK))
    os.truncate(path, keep)
    reader, read = restart(logdir)
    assert read == 1 + 30_000 // CHUNK + 2  # (+ the close marker)
    check(reader, "run", 30_000)
    # rewritten in place, same size: the last record's values changed
    del reader
    gc.collect()
    os.truncate(path, keep - _record_size(25_000))
    with open(path, "ab") as f:
        s = np.arange(25_000, 30_000)
        entries = [record_entry(encode_entry(tag, np.column_stack(
            [s, 1e9 + s, np.full(len(s), 5.0)]).ravel().tolist())) for tag in ("a", "b")]
        f.write(frame(b"".join(entries)))
    assert path.stat().st_size == keep
    reader, read = restart(logdir)
    assert read == 1 + 30_000 // CHUNK + 2  # (+ the close marker)
    assert np.all(reader.scalars("run", "a").values[25_000:] == 5.0)


def _record_size(lo: int) -> int:
    """The size of make_run's scalar record of steps [lo, lo + CHUNK)."""
    s = np.arange(lo, lo + CHUNK)
    entries = [record_entry(encode_entry(tag, np.column_stack(
        [s, 1e9 + s, value(k, s)]).ravel().tolist())) for k, tag in enumerate(("a", "b"))]
    return len(frame(b"".join(entries)))


def test_two_readers_on_one_cache_folder_do_not_share_a_file_cache(tmp_path, cache):
    logdir = tmp_path / "logs"
    path = make_run(logdir / "run", 40_000)
    one = LogReader(logdir)
    two = LogReader(logdir)  # the lock is taken: it reads into a private folder
    added = append(path, 40_000, 50_000)
    assert one.reload() == added and two.reload() == added
    check(one, "run", 50_000)
    check(two, "run", 50_000)
    assert len(manifests(cache)) == 1
    del one, two
    reader, read = restart(logdir)
    assert read == 0
    check(reader, "run", 50_000)


def test_the_cache_folder_can_be_removed_while_reading(tmp_path, cache):
    logdir = tmp_path / "logs"
    path = make_run(logdir / "run", 40_000)
    reader = LogReader(logdir)
    scalar_cache.wait_writes()  # removed after its commit (one removal racing a commit
    shutil.rmtree(cache)        # can find a file the commit just made: "not empty")
    check(reader, "run", 40_000)  # mapped from the open handles
    append(path, 40_000, 45_000)
    reader.reload()
    check(reader, "run", 45_000)
    del reader
    reader, read = restart(logdir)
    assert read == 1 + 45_000 // CHUNK + 2  # nothing was kept: read from the records
    check(reader, "run", 45_000)


def _cli_load(logdir: Path, *flags: str) -> tuple[dict, dict]:
    with start_cli("--logdir", str(logdir), *flags, load_timeout=60) as cli:
        client = Client(cli.url)
        info = client.json("/api/info")
        body = client.json("/api/scalars", run="run", tag="a", points=400)
        cli.stop()
    return info, body


def test_cli_cache_dir_is_used_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("VISUALDL_SPILL_POINTS", str(SPILL))
    monkeypatch.delenv("VISUALDL_CACHE_DIR", raising=False)
    logdir = tmp_path / "logs"
    make_run(logdir / "run", 60_000)
    where = tmp_path / "my-cache"
    _, body = _cli_load(logdir, "--cache-dir", str(where))
    assert body["total"] == 60_000
    (folder,) = where.glob("persist/*")
    m = json.loads((folder / "manifest.json").read_text())
    series = {p.name: p.stat().st_ino for p in folder.glob("series-*")}
    assert len(series) == 3  # a and b spilled, c short
    _, again = _cli_load(logdir, "--cache-dir", str(where))
    assert again == body
    # reused, not rebuilt: the same series files and manifest generation
    assert {p.name: p.stat().st_ino for p in folder.glob("series-*")} == series
    assert json.loads((folder / "manifest.json").read_text())["gen"] == m["gen"]


def test_cli_no_cache_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("VISUALDL_SPILL_POINTS", str(SPILL))
    where = tmp_path / "cache"
    monkeypatch.setenv("VISUALDL_CACHE_DIR", str(where))
    logdir = tmp_path / "logs"
    make_run(logdir / "run", 60_000)
    _, body = _cli_load(logdir, "--no-cache")
    assert body["total"] == 60_000
    assert not list(where.glob("persist/*/manifest.json"))
    assert not list(where.glob("scalars-*"))  # the private folder went at exit


def test_cli_cache_dir_must_be_a_folder(tmp_path):
    from tests.helpers.cli import run_cli

    f = tmp_path / "file"
    f.write_text("x")
    out = run_cli("--logdir", str(tmp_path), "--cache-dir", str(f))
    assert out.returncode == 2
    assert "--cache-dir" in out.stderr and "not a folder" in out.stderr
    out = run_cli("--logdir", str(tmp_path), "--cache-dir", str(tmp_path), "--no-cache")
    assert out.returncode == 2 and "not allowed with" in out.stderr


def test_windows_after_restart_hold_the_records_extremes(tmp_path, cache):
    """Windows answered from a restored series: exact points when few, else the window's
    ends, minimum and maximum among them, every point a point of the records."""
    from visualdl.server.reader_provider import LogReaderProvider

    logdir = tmp_path / "logs"
    make_run(logdir / "run", 60_000)
    first = LogReader(logdir)
    del first
    reader, read = restart(logdir)
    assert read == 0
    provider = LogReaderProvider([str(logdir)])
    provider._reader = reader
    values = value(0, np.arange(60_000))
    rng = np.random.default_rng(1)
    for _ in range(60):
        lo = int(rng.integers(0, 59_000))
        hi = lo + int(10 ** rng.uniform(0, np.log10(60_000 - lo)))
        view = provider.scalar_view("run", "a", 300, lo, hi)
        steps = np.asarray(view.steps)
        assert np.array_equal(np.asarray(view.values), values[steps])
        assert steps[0] == lo and steps[-1] == min(hi, 59_999)
        window = values[lo:hi + 1]
        if len(window) <= 300:
            assert np.array_equal(steps, np.arange(lo, min(hi, 59_999) + 1))
        else:
            assert len(steps) <= 300
            assert lo + int(window.argmin()) in steps and lo + int(window.argmax()) in steps
