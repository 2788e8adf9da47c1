"""Recovery benchmark: damaged record files and failed writes (issue 13, "Hardening").

    python bench/recovery.py                 # every scenario, the issue's sizes
    python bench/recovery.py --quick         # smaller damaged regions and resume file
    python bench/recovery.py --only resync   # one scenario: resync, resume, bogus, diskfull

Scenarios (each prints a table):
  resync    LogReader reading a file with a damaged region (zero-filled, like the tail a
            power loss leaves, or random bytes) between good records: MB/s over the
            damaged region, and whether the records after it were found.
  resume    ``LogWriter(file_name=...)`` on an existing file of ``--resume-mb`` MB, in a
            fresh process: wall time and peak RSS before/after opening it.
  bogus     A record whose length field (with a valid length CRC) points past the end of
            the file: points the reader returns, errors it reports, ``visualdl inspect``'s
            exit code, and points left after resuming the file.
  diskfull  A writer in a child process whose file hits RLIMIT_FSIZE (EFBIG, the same
            path as ENOSPC) and then gets room again: points readable of those logged after
            the space came back, and the errors the reader reports.

Only public entry points are used, so the same script measures an older checkout too.
"""

from __future__ import annotations

import argparse
import io
import os
import struct
import subprocess
import sys
import tempfile
import textwrap
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import numpy as np  # noqa: E402

from visualdl import LogReader, LogWriter  # noqa: E402
from visualdl.format.framing import frame, masked_crc  # noqa: E402
from visualdl.format.record_pb2 import Record  # noqa: E402
from visualdl.reader.inspect import summarize  # noqa: E402


def _table(title: str, header: list[str], rows: list[list]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    print(f"\n{title}")
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths)))
    for row in rows:
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))


def _scalar_file(run_dir: str, points: int, per_flush: int) -> str:
    with LogWriter(logdir=run_dir, flush_secs=1000) as w:
        for i in range(points):
            w.add_scalar("x", float(i), i)
            if i % per_flush == per_flush - 1:
                w.flush()
        return w.file_name


def _points(logdir: str) -> tuple[int, int]:
    r = LogReader(logdir)
    runs = r.runs()
    n = len(r.scalars(runs[0], "x").values) if runs and "x" in r.tags(runs[0]).get("scalar", []) else 0
    return n, r.errors


# -- resync -----------------------------------------------------------------------
def bench_resync(sizes_mb: list[float]) -> None:
    rows = []
    for kind in ("zeros", "random"):
        for mb in sizes_mb:
            with tempfile.TemporaryDirectory() as tmp:
                run = os.path.join(tmp, "run")
                path = _scalar_file(run, 200, 100)
                good = open(path, "rb").read()
                damage = int(mb * (1 << 20))
                bad = bytes(damage) if kind == "zeros" else np.random.default_rng(0).bytes(damage)
                after = os.path.join(tmp, "after")
                tail = open(_scalar_file(after, 200, 100), "rb").read()
                # The second file's records (header skipped) come after the damage.
                first = struct.unpack("<Q", tail[:8])[0] + 16
                with open(path, "wb") as f:
                    f.write(good + bad + tail[first:])
                t = time.perf_counter()
                r = LogReader(run)
                dt = time.perf_counter() - t
                n = len(r.scalars("run", "x").values)
                rows.append([kind, f"{mb:g}", f"{dt:.3f}", f"{mb / dt:.1f}", f"{n}/400",
                             r.errors])
    _table("resync: a damaged region between good records",
           ["damage", "MB", "read s", "MB/s", "points read", "errors"], rows)


# -- resume -------------------------------------------------------------------------
# Peak RSS is VmHWM: ru_maxrss would carry the parent's peak over fork() and exec().
_RESUME_CHILD = """
import sys, time
from visualdl import LogWriter
import visualdl.reader  # what a user's process has imported anyway

def peak_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024

before = peak_mb()
t = time.perf_counter()
w = LogWriter(logdir=sys.argv[1], file_name=sys.argv[2])
w.add_scalar("x", 1.0, 1)
w.close()
dt = time.perf_counter() - t
print(before, peak_mb(), f"{dt:.3f}", w.file_name)
"""


def bench_resume(size_mb: int) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        run = os.path.join(tmp, "run")
        path = _scalar_file(run, 10, 10)
        rec = Record()
        text = rec.entries.add().text
        text.tag, text.text = "t", "x" * (1 << 20)
        framed = frame(rec.SerializeToString())
        with open(path, "ab") as f:
            for _ in range(size_mb):
                f.write(framed)
        for case, extra in (("clean", b""), ("torn tail", framed[: len(framed) // 2])):
            with open(path, "ab") as f:
                f.write(extra)
            size = os.path.getsize(path)
            out = subprocess.run([sys.executable, "-c", _RESUME_CHILD, run, os.path.basename(path)],
                                 capture_output=True, text=True, timeout=600, cwd=REPO,
                                 env=dict(os.environ, PYTHONPATH=REPO))
            if out.returncode:
                rows.append([case, size >> 20, "failed", out.stderr.strip()[-200:], "", ""])
                continue
            before, after, dt, name = out.stdout.split()
            rows.append([case, size >> 20, f"{dt}", before, after,
                         "same" if os.path.basename(name) == os.path.basename(path) else "new file"])
    _table(f"resume: LogWriter(file_name=...) on a {size_mb} MB file (fresh process)",
           ["file", "MB", "open+close s", "RSS before MB", "peak RSS MB", "file used"], rows)


# -- bogus length -------------------------------------------------------------------
def _set_length(data: bytearray, offset: int, length: int) -> None:
    head = struct.pack("<Q", length)
    data[offset:offset + 12] = head + struct.pack("<I", masked_crc(head))


def bench_bogus() -> None:
    rows = []
    for label in ("2^30", "2^31-1", "file size + 1"):
        with tempfile.TemporaryDirectory() as tmp:
            run = os.path.join(tmp, "run")
            path = _scalar_file(run, 1200, 75)  # 16 records of 75 points
            data = bytearray(open(path, "rb").read())
            offsets, pos = [], 0
            while pos < len(data):
                offsets.append(pos)
                pos += struct.unpack_from("<Q", data, pos)[0] + 16
            target = offsets[7]  # header + 6 records (450 points) before it
            length = {"2^30": 1 << 30, "2^31-1": (1 << 31) - 1,
                      "file size + 1": len(data) + 1}[label]
            _set_length(data, target, length)
            open(path, "wb").write(bytes(data))
            n, errors = _points(tmp)
            code = summarize([tmp], io.StringIO())
            try:
                with LogWriter(logdir=run, file_name=os.path.basename(path)) as w:
                    w.add_scalar("y", 1.0, 1)
                kept = f"{os.path.getsize(path)}/{len(data)}"
            except Exception as exc:  # noqa: BLE001 - reported in the table
                kept = f"raised {type(exc).__name__}"
            n_after, _ = _points(tmp)
            rows.append([label, f"{n}/1200", errors, code, kept, f"{n_after}/1200"])
    _table("bogus length: record 8 of 17 declares a length past the end of the file",
           ["length", "points read", "errors", "inspect exit", "file bytes kept after resume",
            "points after resume"], rows)


# -- disk full ----------------------------------------------------------------------
_DISKFULL_CHILD = """
import os, resource, signal, sys
from visualdl import LogWriter
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
w = LogWriter(logdir=sys.argv[1], flush_secs=1000)
for i in range(1000):
    w.add_scalar("x", float(i), i)
w.flush()
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(w.file_name) + 4096, hard))
raised = 0
message = ""
for i in range(1000, 21000):  # one batch far larger than the room left
    w.add_scalar("x", float(i), i)
try:
    w.flush()
except Exception as exc:
    raised += 1
    message = str(exc)
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # "space freed"
for i in range(21000, 25000):
    w.add_scalar("x", float(i), i)
    if i % 1000 == 999:
        try:
            w.flush()
        except Exception as exc:
            raised += 1
            message = str(exc)
try:
    w.close()
except Exception as exc:
    raised += 1
print(raised)
print(message)
"""


def bench_diskfull() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = os.path.join(tmp, "run")
        out = subprocess.run([sys.executable, "-c", _DISKFULL_CHILD, run], capture_output=True,
                             text=True, timeout=300, cwd=REPO, env=dict(os.environ, PYTHONPATH=REPO))
        lines = out.stdout.splitlines()
        raised = lines[0] if lines else f"child failed: {out.stderr.strip()[-300:]}"
        r = LogReader(run)
        values = r.scalars("run", "x").values if r.runs() else np.array([])
        after = int(np.sum(values >= 21000))
        during = int(np.sum((values >= 1000) & (values < 21000)))
        rows = [[f"{int(np.sum(values < 1000))}/1000", f"{during}/20000", f"{after}/4000",
                 r.errors, raised]]
        _table("disk full (EFBIG via RLIMIT_FSIZE, then room again)",
               ["before", "while full", "after space freed", "reader errors", "raises"], rows)
        if len(lines) > 1:
            print("message:", textwrap.shorten(lines[1], 300))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=["resync", "resume", "bogus", "diskfull"])
    parser.add_argument("--resync-mb", type=float, nargs="+")
    parser.add_argument("--resume-mb", type=int)
    args = parser.parse_args()
    sizes = args.resync_mb or ([1.0] if args.quick else [4.0, 100.0])
    resume_mb = args.resume_mb or (30 if args.quick else 300)
    todo = [args.only] if args.only else ["resync", "resume", "bogus", "diskfull"]
    for name in todo:
        if name == "resync":
            bench_resync(sizes)
        elif name == "resume":
            bench_resume(resume_mb)
        elif name == "bogus":
            bench_bogus()
        else:
            bench_diskfull()


if __name__ == "__main__":
    main()
