"""Torn tails, corrupt records, garbage files, concurrent writers, crashes and forks."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from tests.helpers.cli import REPO
from visualdl import LogReader, LogWriter
from visualdl.format.framing import frame, scan
from visualdl.format.record_pb2 import FileHeader, Record

ROOT = str(REPO)


def _python(code: str, *args: str, **kw) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                            stdout=subprocess.PIPE, text=True, **kw)


def _records(path):
    return scan(open(path, "rb").read()).records


def _write_flushes(logdir, n_flushes=3, per=4):
    with LogWriter(logdir=str(logdir)) as w:
        for f in range(n_flushes):
            for i in range(per):
                w.add_scalar("x", float(f * per + i), f * per + i)
            w.flush()
        return w.file_name


def test_bad_crc_in_the_middle_is_skipped_and_counted(tmp_path):
    path = _write_flushes(tmp_path)
    recs = _records(path)
    assert len(recs) == 5  # header + 3 flushes + the close marker
    data = bytearray(open(path, "rb").read())
    data[recs[2][0] + 12 + 3] ^= 0x55  # inside the 2nd flush's payload
    open(path, "wb").write(bytes(data))
    r = LogReader(str(tmp_path))
    assert r.scalars(r.runs()[0], "x").values.tolist() == [0, 1, 2, 3, 8, 9, 10, 11]
    assert r.errors == 1 and "CRC" in r.error_messages[0]


def test_undecodable_payload_with_good_crc_is_skipped(tmp_path):
    path = _write_flushes(tmp_path, n_flushes=1)
    with open(path, "ab") as f:
        f.write(frame(b"\xff\xff\xff\xff not a protobuf"))
        f.write(frame(Record(entries=[]).SerializeToString()))
    with LogWriter(logdir=str(tmp_path), file_name=os.path.basename(path)) as w:
        w.add_scalar("x", 99.0, 99)
    r = LogReader(str(tmp_path))
    assert r.scalars(r.runs()[0], "x").values.tolist()[-1] == 99.0
    assert r.errors == 1 and "undecodable" in r.error_messages[0]


def test_torn_tail_is_not_yet_written(tmp_path):
    run = tmp_path / "run"
    path = _write_flushes(run, n_flushes=1)
    r = LogReader(str(tmp_path))
    assert r.scalars("run", "x").values.tolist() == [0, 1, 2, 3]
    rec = Record()
    series = rec.entries.add().scalars
    series.tag, series.steps[:], series.wall_times[:], series.values[:] = "x", [4], [1.0], [4.0]
    framed = frame(rec.SerializeToString())
    with open(path, "ab") as f:  # first part: nothing complete yet
        f.write(framed[:5])
    assert r.reload() == 0 and r.errors == 0
    with open(path, "ab") as f:
        f.write(framed[5:20])
    assert r.reload() == 0 and r.errors == 0
    with open(path, "ab") as f:  # then everything
        f.write(framed[20:])
    assert r.reload() == 1 and r.errors == 0
    assert r.scalars("run", "x").values.tolist() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("chunk", [64, 1000, 1 << 20])
def test_reads_in_chunks_smaller_and_larger_than_records(tmp_path, monkeypatch, chunk):
    """The reader reads a file in chunks and starts each read at the first unused byte; a
    record cut by a chunk's end, or larger than a whole chunk, must come out whole, and
    mixed records (scalars decoded by numpy, others by protobuf) keep their order."""
    from visualdl.sources import base as sources_base

    monkeypatch.setattr(sources_base, "READ_CHUNK", chunk)
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        for f in range(5):
            for i in range(50 * (f + 1)):
                w.add_scalar("x", float(i) / 7, f * 1000 + i)
            w.add_text("note", f"flush {f}", f)
            w.flush()
    monkeypatch.setattr(sources_base, "READ_CHUNK", 1 << 30)
    whole = LogReader(str(tmp_path))
    monkeypatch.setattr(sources_base, "READ_CHUNK", chunk)
    r = LogReader(str(tmp_path))
    assert r.errors == 0 and whole.errors == 0
    got, want = r.scalars("run", "x"), whole.scalars("run", "x")
    assert len(got.steps) == sum(50 * (f + 1) for f in range(5))
    assert got.steps.tolist() == want.steps.tolist() and got.values.tolist() == want.values.tolist()
    assert [e.text for e in r.events("run", "text", "note")] == [f"flush {f}" for f in range(5)]


@pytest.mark.parametrize("seed", range(6))
def test_garbage_files_never_raise(tmp_path, seed):
    rng = np.random.default_rng(seed)
    good = tmp_path / "good"
    _write_flushes(good, n_flushes=1)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "vdlrecords.1.h.1.log").write_bytes(rng.bytes(int(rng.integers(1, 5000))))
    # A good header followed by garbage, and a truncated real file.
    header = frame(Record(header=FileHeader(format_major=1)).SerializeToString())
    (bad / "vdlrecords.2.h.2.log").write_bytes(header + rng.bytes(3000))
    real = open(_write_flushes(tmp_path / "src", n_flushes=2), "rb").read()
    (bad / "vdlrecords.3.h.3.log").write_bytes(real[: int(rng.integers(1, len(real)))])
    r = LogReader(str(tmp_path))
    r.reload()
    assert r.scalars("good", "x").values.tolist() == [0, 1, 2, 3]
    assert r.errors >= 1


def test_newer_format_is_refused_with_a_message(tmp_path):
    path = tmp_path / "vdlrecords.1.h.1.log"
    path.write_bytes(frame(Record(header=FileHeader(format_major=99)).SerializeToString()))
    r = LogReader(str(tmp_path))
    assert r.runs() == []
    assert any("newer than this visualdl reads" in m for m in r.error_messages)


def test_reader_tails_a_file_another_process_writes(tmp_path):
    proc = _python("""
        import sys, time
        from visualdl import LogWriter
        w = LogWriter(logdir=sys.argv[1])
        for i in range(200):
            w.add_scalar("live", float(i), i)
            if i % 20 == 19:
                w.flush()
                time.sleep(0.02)
        w.close()
        """, str(tmp_path / "live"))
    r = LogReader(str(tmp_path))
    seen = []
    deadline = time.time() + 60
    while time.time() < deadline:
        r.reload()
        if "live" in r.runs():
            values = r.scalars("live", "live").values
            seen.append(len(values))
            if len(values) == 200:
                break
        time.sleep(0.01)
    proc.wait(timeout=60)
    r.reload()
    values = r.scalars("live", "live").values
    assert values.tolist() == [float(i) for i in range(200)]
    assert r.errors == 0
    assert all(n % 20 == 0 for n in seen)  # only whole flushes were ever seen


def test_two_processes_write_into_one_run(tmp_path):
    code = """
        import sys
        from visualdl import LogWriter
        with LogWriter(logdir=sys.argv[1]) as w:
            for i in range(100):
                w.add_scalar("shared", float(sys.argv[2]), i)
                w.add_scalar("own/" + sys.argv[2], float(i), i)
        """
    procs = [_python(code, str(tmp_path / "run"), str(k)) for k in (1, 2)]
    for p in procs:
        assert p.wait(timeout=60) == 0
    r = LogReader(str(tmp_path))
    assert r.runs() == ["run"]
    assert len(r.files("run")) == 2
    assert r.tags("run")["scalar"] == ["own/1", "own/2", "shared"]
    shared = r.scalars("run", "shared")
    assert len(shared.values) == 200 and sorted(set(shared.values.tolist())) == [1.0, 2.0]
    assert np.all(np.diff(shared.wall_times) >= 0)  # merged in time order


def test_resumed_run_shows_whole_history(tmp_path):
    with LogWriter(logdir=str(tmp_path), filename_suffix=".a") as w:
        for i in range(5):
            w.add_scalar("loss", float(i), i, walltime=100.0 + i)
    with LogWriter(logdir=str(tmp_path), filename_suffix=".b") as w:
        for i in range(5, 9):
            w.add_scalar("loss", float(i), i, walltime=200.0 + i)
    r = LogReader(str(tmp_path))
    assert r.scalars(r.runs()[0], "loss").steps.tolist() == list(range(9))


def test_sigkill_after_flush_loses_nothing_flushed(tmp_path):
    proc = _python("""
        import sys, time
        import numpy as np
        from visualdl import LogWriter
        w = LogWriter(logdir=sys.argv[1], flush_secs=1000)
        for i in range(5000):
            w.add_scalar("x", float(i), i)
        w.add_image("img", np.zeros((4, 4, 3), np.uint8), 1)
        w.flush()
        for i in range(5000, 6000):
            w.add_scalar("x", float(i), i)  # never flushed
        print("flushed", flush=True)
        time.sleep(60)
        """, str(tmp_path / "run"))
    assert proc.stdout.readline().strip() == "flushed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    r = LogReader(str(tmp_path))
    values = r.scalars("run", "x").values
    assert values[:5000].tolist() == [float(i) for i in range(5000)]
    assert len(r.images("run", "img")) == 1 and r.errors == 0


def test_fork_child_writes_its_own_file(tmp_path):
    w = LogWriter(logdir=str(tmp_path / "run"))
    w.add_scalar("x", 1.0, 1)
    pid = os.fork()
    if pid == 0:  # child
        code = 1
        try:
            w.add_scalar("x", 2.0, 2)
            w.close()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    w.add_scalar("x", 3.0, 3)
    w.close()
    r = LogReader(str(tmp_path))
    assert len(r.files("run")) == 2
    assert sorted(r.scalars("run", "x").values.tolist()) == [1.0, 2.0, 3.0]


def test_threads_lose_nothing(tmp_path):
    w = LogWriter(logdir=str(tmp_path), max_queue=100)

    def work(k):
        for i in range(5000):
            w.add_scalar("same", float(k), i)
            w.add_scalar(f"own{k}", float(i), i)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    w.close()
    r = LogReader(str(tmp_path))
    run = r.runs()[0]
    assert len(r.scalars(run, "same").values) == 20000
    for k in range(4):
        assert r.scalars(run, f"own{k}").values.tolist() == [float(i) for i in range(5000)]


def test_after_close(tmp_path):
    w = LogWriter(logdir=str(tmp_path))
    w.add_scalar("x", 1.0, 1)
    w.close()
    w.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        w.add_scalar("x", 2.0, 2)
    with pytest.raises(RuntimeError, match="closed"):
        w.add_text("t", "late", 2)


def test_buffered_data_is_flushed_at_exit(tmp_path):
    proc = _python("""
        import sys
        from visualdl import LogWriter
        w = LogWriter(logdir=sys.argv[1], flush_secs=1000)
        for i in range(10):
            w.add_scalar("x", float(i), i)
        """, str(tmp_path / "run"))
    assert proc.wait(timeout=60) == 0
    assert LogReader(str(tmp_path)).scalars("run", "x").values.tolist() == list(map(float, range(10)))


def test_periodic_flush_makes_data_visible(tmp_path):
    w = LogWriter(logdir=str(tmp_path / "run"), flush_secs=0.05)
    w.add_scalar("x", 1.0, 1)
    r = LogReader(str(tmp_path))
    deadline = time.time() + 10
    while "run" not in r.runs() and time.time() < deadline:
        time.sleep(0.02)
        r.reload()
    assert r.scalars("run", "x").values.tolist() == [1.0]
    w.close()


def test_default_logdir_and_properties(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with LogWriter(comment="lr0.1") as w:
        assert w.logdir.startswith("runs" + os.sep) and w.logdir.endswith(".lr0.1")
        name = os.path.basename(w.file_name)
        assert name.startswith("vdlrecords.") and name.endswith(f".{os.getpid()}.log")
        assert os.path.isfile(w.file_name)
