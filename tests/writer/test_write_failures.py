"""Failed writes (issue 13, item 1): a full disk or a file-size limit must not poison the file.

The failures are real: EFBIG from ``RLIMIT_FSIZE`` in a child process (SIGXFSZ ignored),
and ENOSPC from a small tmpfs mounted for the test (skipped where mounting is refused).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.helpers.cli import REPO
from visualdl import LogReader, LogWriter
from visualdl.format.framing import masked_crc

ROOT = str(REPO)


def _child(code: str, *args: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _ends_at_a_record(data: bytes) -> bool:
    """Every record's both CRCs check, and the last one ends where the file does."""
    pos = 0
    while pos < len(data):
        head = data[pos:pos + 8]
        if len(data) - pos < 12 or masked_crc(head) != struct.unpack_from("<I", data, pos + 8)[0]:
            return False
        end = pos + 12 + struct.unpack("<Q", head)[0]
        if end + 4 > len(data) or masked_crc(data[pos + 12:end]) != struct.unpack_from(
                "<I", data, end)[0]:
            return False
        pos = end + 4
    return True


def _file_ends_at_a_record(path: str) -> bool:
    return _ends_at_a_record(open(path, "rb").read())


# The child logs 1,000 points, then 20,000 in one batch against a limit 4 KB above the
# file's size, then (limit raised: "space freed") 4,000 more, flushing every 1,000.
_EFBIG = """
import os, resource, signal, sys
import visualdl.writer.log_writer as lw
from visualdl import LogWriter
from tests.helpers.cli import REPO
from tests.writer.test_write_failures import _file_ends_at_a_record

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
if len(sys.argv) > 2:
    lw._MAX_UNWRITTEN_BYTES = int(sys.argv[2])
w = LogWriter(logdir=sys.argv[1], flush_secs=1000)
for i in range(1000):
    w.add_scalar("x", float(i), i)
w.flush()
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(w.file_name) + 4096, hard))
raised = []
for i in range(1000, 21000):
    w.add_scalar("x", float(i), i)
for attempt in range(3):  # the limit is still there: raised once, then quiet retries
    try:
        w.flush()
    except RuntimeError as exc:
        raised.append(str(exc))
print("ends at a record:", _file_ends_at_a_record(w.file_name))
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
for i in range(21000, 25000):
    w.add_scalar("x", float(i), i)
    if i % 1000 == 999:
        try:
            w.flush()
        except RuntimeError as exc:
            raised.append(str(exc))
try:
    w.close()
except RuntimeError as exc:
    raised.append("close: " + str(exc))
print(len(raised))
for message in raised:
    print(message)
"""


def test_efbig_then_room_again_keeps_every_point_readable(tmp_path):
    out = _child(_EFBIG, str(tmp_path / "run"))
    assert out[0] == "ends at a record: True"  # cut back at once, not only later
    assert out[1] == "1"  # raised once, by the first flush after the failure
    assert "File too large" in out[2] and "vdlrecords" in out[2]
    assert "wait in memory" in out[2]
    r = LogReader(str(tmp_path))
    values = r.scalars("run", "x").values
    # Nothing lost: what failed was kept in memory and written once there was room.
    assert values.tolist() == [float(i) for i in range(25000)]
    assert r.errors == 0
    assert _file_ends_at_a_record(r.files("run")[0].path)


def test_data_beyond_the_bound_is_dropped_counted_and_reported_by_close(tmp_path):
    """With a bound of 256 KB, most of the 20,000 points that fail are dropped; those that
    are kept come first, the file stays readable, and close() says how many were lost."""
    out = _child(_EFBIG, str(tmp_path / "run"), str(256 << 10))
    assert out[1] == "1"
    assert "were dropped" in out[2]
    r = LogReader(str(tmp_path))
    values = r.scalars("run", "x").values
    assert r.errors == 0
    assert values[:1000].tolist() == [float(i) for i in range(1000)]
    assert values[-4000:].tolist() == [float(i) for i in range(21000, 25000)]
    kept = values[1000:-4000]
    assert 0 < len(kept) < 20000  # some kept (oldest first), the rest dropped
    assert kept.tolist() == [float(i) for i in range(1000, 1000 + len(kept))]


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs: real ENOSPC. Skipped where mounting is not allowed."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)],
                          capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:  # lazily: a writer left open by a failing test must not keep it mounted
        subprocess.run(["umount", "-l", str(mnt)], check=True)


def test_enospc_then_space_freed(small_disk):
    w = LogWriter(logdir=str(small_disk / "run"), flush_secs=1000)
    for i in range(1000):
        w.add_scalar("x", float(i), i)
    w.add_image("img", np.full((8, 8, 3), 7, np.uint8), 0)
    w.flush()
    st = os.statvfs(small_disk)
    filler = small_disk / "filler"
    filler.write_bytes(b"\1" * (st.f_bavail * st.f_frsize - (16 << 10)))  # 16 KB left
    for i in range(1000, 21000):
        w.add_scalar("x", float(i), i)
    with pytest.raises(RuntimeError, match="No space left on device"):
        w.flush()
    assert _file_ends_at_a_record(w.file_name)
    w.flush()  # still full: retried, not raised again
    assert _file_ends_at_a_record(w.file_name)
    filler.unlink()  # space freed
    for i in range(21000, 25000):
        w.add_scalar("x", float(i), i)
    w.flush()
    w.close()
    r = LogReader(str(small_disk / "run"))
    assert r.scalars("run", "x").values.tolist() == [float(i) for i in range(25000)]
    assert len(r.images("run", "img")) == 1
    assert r.errors == 0


# The truncate after a failed write fails too: the file may end in half a record, so the
# writer must not append to it again but continue in a new file of the same run.
_BROKEN = """
import os, resource, signal, sys
import visualdl.writer.record_file as rf
from visualdl import LogWriter

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
w = LogWriter(logdir=sys.argv[1], flush_secs=1000)
for i in range(100):
    w.add_scalar("x", float(i), i)
w.flush()
first = w.file_name
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(first) + 4096, hard))

def refuse(fd, size):
    raise OSError(5, "Input/output error")

rf.os.ftruncate = refuse
for i in range(100, 20100):
    w.add_scalar("x", float(i), i)
try:
    w.flush()
except RuntimeError as exc:
    print("raised")
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
w.close()
print(first)
print(w.file_name)
"""


def test_a_file_that_cannot_be_cut_back_is_left_for_a_new_one(tmp_path):
    out = _child(_BROKEN, str(tmp_path / "run"))
    assert out[0] == "raised"
    first, second = out[1], out[2]
    assert first != second and os.path.dirname(first) == os.path.dirname(second)
    assert "vdlrecords" in os.path.basename(second)
    r = LogReader(str(tmp_path))
    # Every failed write that could not be cut back moved on to a new file (how many
    # depends on how the writer thread grouped the batches); no point is lost or doubled.
    assert len(r.files("run")) >= 2
    assert sorted(r.scalars("run", "x").values.tolist()) == [float(i) for i in range(20100)]
    assert r.errors == 0  # the first file ends in half a record: a torn tail, not damage


_STILL_FULL = """
import os, resource, signal, sys
from visualdl import LogWriter

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
w = LogWriter(logdir=sys.argv[1], flush_secs=1000)
w.add_scalar("x", 0.0, 0)
w.flush()
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(w.file_name) + 1024, hard))
for i in range(1, 20001):
    w.add_scalar("x", float(i), i)
try:
    w.close()
except RuntimeError as exc:
    print(exc)
"""


def test_close_while_still_full_says_the_records_are_lost(tmp_path):
    out = _child(_STILL_FULL, str(tmp_path / "run"))
    assert len(out) == 1 and "File too large" in out[0] and "they are lost" in out[0]
    r = LogReader(str(tmp_path))
    assert r.errors == 0 and r.scalars("run", "x").values[0] == 0.0
    assert _file_ends_at_a_record(r.files("run")[0].path)
