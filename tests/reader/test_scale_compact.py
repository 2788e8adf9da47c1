"""Many runs in little memory: scalar series are kept compact in RAM (int32 steps, float32
values, float32 wall-time offsets), each only where it is exact, and every value read back,
through the reader or over HTTP, is the one the record holds (protobuf is the reference)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from visualdl import LogWriter
from visualdl.format import scalar_codec
from visualdl.format.framing import scan_file
from visualdl.format.record_pb2 import Record
from visualdl.reader.log_reader import LogReader
from tests.helpers.http import Client
from tests.helpers.server import serving

N = 3000  # several flushes' worth: series of several chunks, joined on read


def _series() -> dict[str, tuple[list[int], list[float], list[float]]]:
    """Per tag: steps, wall times, values chosen to exercise every compaction choice."""
    rng = np.random.default_rng(7)
    steps = list(range(N))
    whole_walls = [1.7e9 + s for s in steps]                       # float32 offsets: exact
    micro_walls = [1.7e9 + s * 0.123457 + 1e-6 for s in steps]     # not as float32 offsets
    f32 = rng.standard_normal(N).astype(np.float32).astype(np.float64).tolist()  # a torch loss
    f64 = (np.exp(-np.arange(N) / 500) + 1e-9 * rng.standard_normal(N)).tolist()
    special = f32.copy()
    special[3], special[4], special[5], special[6] = float("nan"), float("inf"), -0.0, \
        float("-inf")
    big = [2**40 + 3 * s for s in steps]                           # steps beyond int32
    neg = [-(2**31) + s for s in steps]                            # int32's lowest fits
    return {
        "f32_values": (steps, whole_walls, f32),
        "f64_values": (steps, micro_walls, f64),
        "special": (steps, whole_walls, special),
        "big_steps": (big, whole_walls, f32),
        "negative_steps": (neg, micro_walls, f64),
        "mixed_varints": ([s * 37 for s in steps], whole_walls, f64),
    }


def _write(run_dir) -> dict:
    data = _series()
    with LogWriter(logdir=str(run_dir)) as w:
        for k in range(N):
            for tag, (steps, walls, values) in data.items():
                w.add_scalar(tag, values[k], step=steps[k], walltime=walls[k])
    return data


def _reference(run_dir) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every scalar point of the run's files, decoded by protobuf alone."""
    cols: dict[str, list[list]] = {}
    for name in sorted(os.listdir(run_dir)):
        path = os.path.join(run_dir, name)
        with open(path, "rb") as f:
            for result in scan_file(f, 0, os.path.getsize(path), 1 << 20):
                for _, payload in result.records:
                    for entry in Record.FromString(bytes(payload)).entries:
                        if entry.WhichOneof("kind") == "scalars":
                            s = entry.scalars
                            c = cols.setdefault(s.tag, [[], [], []])
                            c[0] += s.steps
                            c[1] += s.wall_times
                            c[2] += s.values
    return {tag: (np.array(c[0], np.int64), np.array(c[1], np.float64),
                  np.array(c[2], np.float64)) for tag, c in cols.items()}


def _bits(a: np.ndarray) -> list:
    return a.view(np.int64).tolist()


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("compact")
    data = _write(root / "run")
    return root, data, _reference(root / "run")


def test_reader_values_are_the_records_bit_for_bit(logdir):
    root, data, ref = logdir
    reader = LogReader(root)
    assert reader.runs() == ["run"]
    for tag, (steps, walls, values) in ref.items():
        got = reader.scalars("run", tag)
        assert got.steps.dtype == np.int64 and got.wall_times.dtype == np.float64
        assert got.values.dtype == np.float64
        assert got.steps.tolist() == steps.tolist() == data[tag][0]
        assert _bits(got.wall_times) == _bits(walls)   # -0.0 and NaN bits included
        assert _bits(got.values) == _bits(values)
        assert _bits(got.values) == _bits(np.array(data[tag][2]))
    assert reader.errors == 0


def test_series_are_compact_in_ram_where_exact(logdir):
    root, _, _ = logdir
    reader = LogReader(root)
    store = reader._runs["run"]

    def chunks(tag):
        (series,) = store.scalars[tag].values()
        assert series.cached is None  # nothing read yet: still the chunks of the records
        return series.chunks

    def dtypes(tag):
        return {(c[0].dtype.name, c[1].dtype.name, c[2].dtype.name, c[3] is not None)
                for c in chunks(tag)}

    # Decided per series (one float64 series does not keep the others of its record big):
    # (steps, wall offsets or walls, values, has a wall base)
    assert dtypes("f32_values") == {("int32", "float32", "float32", True)}
    assert dtypes("special") == {("int32", "float32", "float32", True)}  # NaN, inf, -0.0
    assert dtypes("big_steps") == {("int64", "float32", "float32", True)}  # 2**40: int64
    assert dtypes("negative_steps") == {("int32", "float64", "float64", False)}
    assert dtypes("f64_values") == {("int32", "float64", "float64", False)}  # microseconds
    assert dtypes("mixed_varints") == {("int32", "float32", "float64", True)}
    points = sum(len(c[0]) for tag in store.scalars for c in chunks(tag))
    nbytes = sum(c[k].nbytes for tag in store.scalars for c in chunks(tag) for k in range(3))
    assert points == 6 * N
    assert nbytes == 16 * points  # (12 + 20 + 12 + 16 + 20 + 16) / 6, not 24 a point


def test_one_tag_per_record_compacts_fully(tmp_path):
    """A run whose records hold series that all fit (the many-runs bench's shape) keeps
    int32 steps, float32 values and float32 wall offsets: 12 bytes a point."""
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        for s in range(2000):
            w.add_scalar("loss", float(np.float32(1 / (s + 1))), step=s, walltime=1e9 + s)
            w.add_scalar("acc", float(np.float32(s / 2000)), step=s, walltime=1e9 + s)
    reader = LogReader(tmp_path)
    series = [s for per_file in reader._runs["run"].scalars.values()
              for s in per_file.values()]
    for s in series:
        for steps, walls, values, base in s.chunks:
            assert (steps.dtype, walls.dtype, values.dtype) == (np.int32, np.float32,
                                                                 np.float32)
            assert base is not None
    got = reader.scalars("run", "loss")
    assert got.steps.tolist() == list(range(2000))
    assert got.wall_times.tolist() == [1e9 + s for s in range(2000)]
    assert got.values.tolist() == [float(np.float32(1 / (s + 1))) for s in range(2000)]
    # once read, the series is one chunk of the plain dtypes, handed out again as is
    (joined,) = reader._runs["run"].scalars["loss"].values()
    assert len(joined.chunks) == 1 and joined.chunks[0][0].dtype == np.int64
    assert reader.scalars("run", "loss") is got


def test_appended_points_after_a_read(tmp_path):
    """A series read (joined to int64/float64) and then appended to by a reload mixes
    plain and compact chunks; the values stay exact."""
    run = tmp_path / "run"
    w = LogWriter(logdir=str(run))
    for s in range(500):
        w.add_scalar("x", float(np.float32(s * 0.5)), step=s, walltime=1e9 + s)
    w.flush()
    reader = LogReader(tmp_path)
    assert reader.scalars("run", "x").steps.tolist() == list(range(500))
    for s in range(500, 900):
        w.add_scalar("x", 0.1 * s, step=s, walltime=1e9 + s + 1e-7)
    w.close()
    assert reader.reload() > 0
    got = reader.scalars("run", "x")
    assert got.steps.tolist() == list(range(900))
    assert got.values.tolist() == [float(np.float32(s * 0.5)) for s in range(500)] + \
        [0.1 * s for s in range(500, 900)]
    assert got.wall_times.tolist() == [1e9 + s for s in range(500)] + \
        [1e9 + s + 1e-7 for s in range(500, 900)]


@pytest.mark.parametrize("steps", [
    list(range(0, 300)),                         # 1- and 2-byte varints in one record
    [0, 127, 128, 16383, 16384, 2**31 - 1],
    [-1, 5, 2**63 - 1, -(2**63)],                # 10-byte varints
    [],
])
def test_compact_decode_agrees_with_plain_decode(steps):
    rng = np.random.default_rng(len(steps))
    entries = []
    for k in range(5):  # series of different lengths: varints must not cross series
        part = steps[k::5] if k % 2 else steps[: len(steps) - k]
        flat = []
        for s in part:
            flat += [s, 1e9 + s + (0.3 if k == 3 else 0), float(rng.standard_normal())]
        entries.append(scalar_codec.record_entry(scalar_codec.encode_entry(f"t{k}", flat)))
    payload = b"".join(entries)
    plain = scalar_codec.decode_scalar_record(payload)
    compact = scalar_codec.decode_scalar_record(payload, compact=True)
    reference = Record.FromString(payload)
    assert len(plain) == len(compact) == len(reference.entries) == 5
    for p, c, e in zip(plain, compact, reference.entries):
        assert p.tag == c.tag == e.scalars.tag
        steps64, walls64, values64 = c.full()
        assert steps64.tolist() == p.steps.tolist() == list(e.scalars.steps)
        assert _bits(walls64) == _bits(p.wall_times) == _bits(np.array(e.scalars.wall_times))
        assert _bits(values64) == _bits(p.values) == _bits(np.array(e.scalars.values))


def test_http_answers_the_records_values(logdir):
    root, _, ref = logdir
    with serving(root) as handle:
        client = Client(handle.url)
        for tag, (steps, walls, values) in ref.items():
            body = client.json("/api/scalars", run="run", tag=tag, points=N)
            assert body["total"] == N and not body["downsampled"]
            assert body["steps"] == steps.tolist()
            assert body["wall_times"] == walls.tolist()
            names = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
            assert body["values"] == [v if np.isfinite(v) else names[repr(v)]
                                      for v in values.tolist()]
        special = client.json("/api/scalars", run="run", tag="special", points=N)["values"]
        assert special[3:5] == ["NaN", "Infinity"] and special[6] == "-Infinity"
        assert special[5] == 0 and math.copysign(1, special[5]) == -1  # -0.0 stays -0.0
        batch = client.post("/api/scalars/batch", json={
            "series": [{"run": "run", "tag": "f64_values"}, {"run": "nope", "tag": "x"},
                       {"run": "run", "tag": "nope"}], "points": N}).json()["series"]
        assert batch[0]["values"] == ref["f64_values"][2].tolist()
        assert "error" in batch[1] and "error" in batch[2]
        assert client.get("/api/scalars", run="nope", tag="f32_values").status_code == 404


def test_run_table_reads_ends_without_undoing_compaction(logdir):
    """The run table asks every tag of every run for its ends; answering it must not build
    each series' int64/float64 view (40,000 of them for 2,000 runs x 20 tags)."""
    from visualdl.kinds.hparams.table import run_table
    from visualdl.server.reader_provider import LogReaderProvider

    root, _, ref = logdir
    provider = LogReaderProvider([str(root)])
    provider.reload_once()
    (row,) = run_table(provider, ["f32_values", "special", "f64_values"])
    assert row.run == "run"
    assert row.metrics["f32_values"] == ref["f32_values"][2][-1]
    assert row.metrics["f64_values"] == ref["f64_values"][2][-1]
    every_wall = np.concatenate([w for _, w, _ in ref.values()])
    assert row.start == every_wall.min()
    assert row.last == every_wall.max()
    store = provider._reader._runs["run"]
    for per_file in store.scalars.values():
        for series in per_file.values():
            assert series.cached is None  # no full view was built
    (f32,) = store.scalars["f32_values"].values()
    assert {c[2].dtype for c in f32.chunks} == {np.dtype(np.float32)}  # still compact
    # the same numbers as the full series give
    for tag, (steps, walls, values) in ref.items():
        assert provider.scalar_ends("run", tag) == (len(steps), walls[0], walls[-1],
                                                    values[-1])
    with serving(root) as handle:
        body = Client(handle.url).json("/api/runs/table", tag=["f32_values", "f64_values"])
        assert body["metrics"] == {"f32_values": [ref["f32_values"][2][-1]],
                                   "f64_values": [ref["f64_values"][2][-1]]}
        assert body["start_time"] == [every_wall.min()]
        assert body["last_update"] == [every_wall.max()]
