"""The scalar disk cache grows by appending: a reload that adds k points writes O(k) bytes
to it (the points, the new pyramid rows, a small manifest), files of series that did not
grow are not touched; what a commit that did not finish left is cut off and the rest used;
TensorBoard event files are cached too; folders of deleted record files are removed."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from visualdl.reader import scalar_cache, scalar_persist
from visualdl.storage import cache_folder
from visualdl.reader.log_reader import LogReader
from tests.reader.test_cache_persist import (  # noqa: F401 - cache: the fixture
    CHUNK, SPILL, append, cache, check, make_run, restart)
from tests.sources.tfevents.tbwrite import EventWriter




def files(cache: Path) -> dict[str, tuple[int, int]]:
    """Every file of the cache: (size, mtime_ns), by path relative to its file folder."""
    scalar_cache.wait_writes()
    (folder,) = cache.glob("persist/*")
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}


def manifest(cache: Path) -> dict:
    scalar_cache.wait_writes()
    return json.loads(next(cache.glob("persist/*/manifest.json")).read_text())


def test_a_reload_that_appends_writes_only_the_new_points(tmp_path, cache):
    logdir = tmp_path / "logs"
    path = make_run(logdir / "run", 200_000)
    reader = LogReader(logdir)
    before = files(cache)
    m = manifest(cache)
    dirs = {s["tag"]: s["dir"] for s in m["series"]}
    assert {s["tag"]: s["n"] for s in m["series"]} == {"a": 200_000, "b": 200_000, "c": 10}
    assert before[f"{dirs['a']}/values.f64"][0] == 8 * 200_000
    k = 7_000  # not a multiple of the 1,024-point blocks: a partial block before and after
    append(path, 200_000, 200_000 + k)
    assert reader.reload() == 2
    check(reader, "run", 200_000 + k)
    after = files(cache)
    grown = {name: after[name][0] - size for name, (size, _) in before.items()
             if after[name] != before[name]}
    blocks = (200_000 + k) // 1024 - 200_000 // 1024
    firsts = -(-(200_000 + k) // 1024) - -(-200_000 // 1024)
    want = {"manifest.json": grown["manifest.json"]}
    for tag in ("a", "b"):
        want.update({f"{dirs[tag]}/{name}": 8 * k for name in scalar_persist.COLUMNS})
        want.update({f"{dirs[tag]}/{name}": 8 * blocks for name in scalar_persist.LEVEL0})
        want[f"{dirs[tag]}/firsts.i64"] = 8 * firsts
    assert grown == want  # c, others.i64, the lock: not touched (same size and mtime)
    assert set(after) == set(before)
    assert abs(grown["manifest.json"]) < 200
    # O(k): the bytes written are those of the k new points of two series and their rows
    written = sum(max(v, 0) for v in grown.values()) + after["manifest.json"][0]
    assert written < 2 * 24 * k + 2 * 40 * (blocks + firsts) + 8192
    # and what was appended is what the records hold, across a restart
    del reader
    reader, read = restart(logdir)
    assert read == 0
    check(reader, "run", 200_000 + k)
    values = reader.scalars("run", "a").values
    assert isinstance(values, np.memmap) or isinstance(values.base, np.memmap)


def test_a_short_series_that_grows_long_moves_to_a_spilled_folder(tmp_path, cache):
    logdir = tmp_path / "logs"
    path = make_run(logdir / "run", 40_000)
    reader = LogReader(logdir)
    short = {s["tag"]: s for s in manifest(cache)["series"]}["c"]
    assert not short["spilled"]
    # tag c grows past SPILL points in later records
    from visualdl.format.framing import frame
    from visualdl.format.scalar_codec import encode_entry, record_entry

    s = np.arange(10, 10 + SPILL + 5)
    with open(path, "ab") as f:
        flat = np.column_stack([s, 1e9 + s, -s]).ravel().tolist()
        f.write(frame(record_entry(encode_entry("c", flat))))
    reader.reload()
    grown = {s["tag"]: s for s in manifest(cache)["series"]}["c"]
    assert grown["spilled"] and grown["n"] == SPILL + 15 and grown["dir"] != short["dir"]
    assert not (cache.glob("persist/*").__next__() / short["dir"]).exists()
    del reader
    reader, read = restart(logdir)
    assert read == 0
    assert np.array_equal(reader.scalars("run", "c").values, -np.arange(SPILL + 15.0))


def test_what_an_unfinished_commit_appended_is_cut_off(tmp_path, cache):
    """A crash after the appends and before the manifest's rename: the files are longer
    than the manifest counts and a temporary manifest lies there. The counted part is
    used, the rest cut off; nothing is read from the records."""
    logdir = tmp_path / "logs"
    make_run(logdir / "run", 60_000)
    first = LogReader(logdir)
    counted = files(cache)
    del first
    gc.collect()
    (folder,) = cache.glob("persist/*")
    for name in counted:
        if name.endswith((".i64", ".f64")):
            with open(folder / name, "ab") as f:
                f.write(np.arange(100, dtype="<f8").tobytes())
    (folder / ".tmp-crashed").write_text('{"format": 2, "half": ')
    reader, read = restart(logdir)
    assert read == 0
    check(reader, "run", 60_000)
    assert reader.error_messages == []
    sizes = {name: (folder / name).stat().st_size for name in counted}
    assert all(sizes[name] == size for name, (size, _) in counted.items())


def test_a_manifest_for_other_bytes_of_the_record_file_is_not_trusted(tmp_path, cache):
    """The manifest's offset past the file's end (records lost after the cache was
    written) or its identity changed: the file is read again, from its start."""
    logdir = tmp_path / "logs"
    path = make_run(logdir / "run", 60_000)
    first = LogReader(logdir)
    del first
    gc.collect()
    m = manifest(cache)
    m["offset"] = path.stat().st_size + 10
    target = next(cache.glob("persist/*/manifest.json"))
    target.write_text(json.dumps(m))
    reader, read = restart(logdir)
    assert read == 1 + 60_000 // CHUNK + 2  # (+ the close marker)
    check(reader, "run", 60_000)
    assert any("scalar cache ignored" in msg for msg in reader.error_messages)


def write_events(run: Path, lo: int, hi: int, writer: EventWriter | None = None) -> EventWriter:
    w = writer or EventWriter(str(run))
    if lo == 0:
        w.add_text("notes", "start", step=0, wall=1e9)
    for s in range(lo, hi):
        w.add_scalar("loss", float(np.sin(s / 50.0)), step=s, wall=1e9 + s)
        w.add_scalar_tensor("acc", float(s % 997) / 997, step=s, wall=1e9 + s)
    return w


def test_event_files_use_the_cache(tmp_path, cache):
    logdir = tmp_path / "logs"
    w = write_events(logdir / "run", 0, 25_000)
    reader = LogReader(logdir)
    assert isinstance(reader.scalars("run", "loss"), scalar_cache.SpilledScalars)
    m = manifest(cache)
    assert m["decoder"]["state"]["plugins"]["acc"] == "scalars"
    assert {s["tag"] for s in m["series"]} == {"loss", "acc"}
    text_tag = reader.tags("run")["text"][0]
    del reader
    reader, read = restart(logdir)
    assert read == 0  # nothing decoded from the event file
    steps = np.arange(25_000)
    assert np.array_equal(reader.scalars("run", "loss").steps, steps)
    assert np.array_equal(reader.scalars("run", "loss").values,
                          np.sin(steps / 50.0).astype(np.float32))
    assert np.array_equal(reader.scalars("run", "acc").values,
                          ((steps % 997) / 997).astype(np.float32))
    assert [t.text for t in reader.texts("run", text_tag)] == ["start"]
    # events appended after the restart: a text and tensors without their plugin's
    # metadata (it came with each tag's first value, before the cached offset)
    w.add_text("notes", "later", step=30_000, wall=2e9)
    write_events(logdir / "run", 25_000, 26_000, w)
    w.close()
    reader.reload()
    assert [t.text for t in reader.texts("run", text_tag)] == ["start", "later"]
    assert len(reader.scalars("run", "acc").values) == 26_000
    assert reader.tags("run") == {"scalar": ["acc", "loss"], "text": [text_tag]}
    assert reader.error_messages == []
    del reader
    reader, read = restart(logdir)
    assert read == 0
    assert np.array_equal(reader.scalars("run", "acc").steps, np.arange(26_000))
    assert [t.text for t in reader.texts("run", text_tag)] == ["start", "later"]


def test_folders_of_deleted_record_files_and_dead_servers_are_removed(tmp_path, cache):
    logdir = tmp_path / "logs"
    make_run(logdir / "gone", 40_000)
    make_run(logdir / "kept", 40_000)
    reader = LogReader(logdir)
    scalar_cache.wait_writes()
    del reader
    gc.collect()
    assert len(list(cache.glob("persist/*/manifest.json"))) == 2
    # a server killed before its exit could remove its private folder
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (cache / f"scalars-{dead}-abc" / "s1").mkdir(parents=True)
    (cache / f"scalars-{os.getpid()}-mine").mkdir()
    (cache / "persist" / "never-committed" / "series-1").mkdir(parents=True)
    for p in (logdir / "gone").iterdir():
        p.unlink()
    (logdir / "gone").rmdir()
    scalar_persist._pruned.clear()
    reader, read = restart(logdir)
    assert read == 0
    check(reader, "kept", 40_000)
    sources = [json.loads(p.read_text())["source"] for p in cache.glob("persist/*/manifest.json")]
    assert len(sources) == 1 and "/kept/" in sources[0]
    assert not (cache / f"scalars-{dead}-abc").exists()
    assert not (cache / "persist" / "never-committed").exists()
    assert (cache / f"scalars-{os.getpid()}-mine").exists()


def write_vdl2(path: Path, lo: int, hi: int) -> None:
    """VisualDL 2.x records (``uint64`` length, a ``Record``), one value each, as its
    LogWriter writes them: a text first, then ``loss`` and ``add_scalars``' ``all/train``."""
    import struct

    from visualdl.sources.vdl2 import vdl2_record_pb2 as pb

    def frame(value: pb.Record.Value) -> bytes:
        payload = pb.Record(values=[value]).SerializeToString()
        return struct.pack("<Q", len(payload)) + payload

    with open(path, "ab") as f:
        if lo == 0:
            f.write(frame(pb.Record.Value(id=0, tag="notes", timestamp=1_000_000,
                                          text=pb.Record.Text(encoded_text_string="start"))))
        for s in range(lo, hi):
            f.write(frame(pb.Record.Value(id=s, tag="loss", timestamp=1_000_000 + s,
                                          value=float(np.float32(np.cos(s / 40.0))))))
            f.write(frame(pb.Record.Value(id=s, tag="all", timestamp=1_000_000 + s,
                                          tag_value=pb.Record.TagValue(tag="train",
                                                                       value=s % 13))))


def test_visualdl_2_files_use_the_cache(tmp_path, cache):
    logdir = tmp_path / "logs"
    (logdir / "run").mkdir(parents=True)
    path = logdir / "run" / "vdlrecords.1700000000.log"
    write_vdl2(path, 0, 25_000)
    reader = LogReader(logdir)
    tags = reader.tags("run")
    assert isinstance(reader.scalars("run", "loss"), scalar_cache.SpilledScalars)
    assert manifest(cache)["decoder"]["source"] == "vdl2"
    del reader
    reader, read = restart(logdir)
    assert read == 0
    assert reader.tags("run") == tags
    steps = np.arange(25_000)
    assert np.array_equal(reader.scalars("run", "loss").values,
                          np.cos(steps / 40.0).astype(np.float32))
    assert [t.text for t in reader.texts("run", "notes")] == ["start"]
    write_vdl2(path, 25_000, 25_100)
    reader.reload()
    assert reader.tags("run") == tags  # the add_scalars chart was not announced again
    assert np.array_equal(reader.scalars("run", "all/train").values,
                          (np.arange(25_100) % 13).astype(float))
    assert reader.error_messages == []
    del reader
    reader, read = restart(logdir)
    assert read == 0
    assert len(reader.scalars("run", "loss").steps) == 25_100


def test_a_short_series_does_not_pin_the_records_of_the_long_ones(tmp_path, cache):
    """scalar_codec decodes a record into one array per column, each series a view of it:
    a short series' view kept the whole record's arrays alive after the long series went to
    the disk (RSS grew by the size of the record file read)."""
    from visualdl.format.framing import frame
    from visualdl.format.scalar_codec import encode_entry, record_entry

    logdir = tmp_path / "logs"
    path = make_run(logdir / "run", 40_000)
    s = np.arange(40_000, 45_000)
    with open(path, "ab") as f:
        entries = [record_entry(encode_entry(tag, np.column_stack(
            [s, 1e9 + s * 0.37, np.sin(s / 3.0) + k]).ravel().tolist()))
            for k, tag in enumerate(("a", "b"))]
        few = s[::500]
        entries.append(record_entry(encode_entry("c", np.column_stack(
            [few, 1e9 + few * 0.37, np.cos(few / 3.0)]).ravel().tolist())))
        f.write(frame(b"".join(entries)))
    cache_folder.configure(cache_dir=cache, persist=False)  # (a save joins the chunks)
    reader = LogReader(logdir)
    (short,) = reader._runs["run"].scalars["c"].values()
    assert short.spilled is None
    last = short.chunks[-1]
    assert all(col.base is None for col in last[:3])  # its own memory, not the record's
    assert np.array_equal(reader.scalars("run", "c").values[10:], np.cos(few / 3.0))
    assert np.array_equal(reader.scalars("run", "a").values[40_000:], np.sin(s / 3.0))
