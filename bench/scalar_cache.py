"""Scalar disk cache benchmark: building the cache against W1's read speed, a restart that
reuses it, and a reload that appends to it (bytes written), in one run, medians.

Issue 15 ("Long runs") asks the cache build to "stay close to the read speed of W1" and the
cache to be "rebuilt incrementally as records are appended". Measured here, each in a fresh
process (``LogReader(logdir)`` then every tag's ``scalars()``, the timed region of
``bench/write_read.py``'s W1 read), interleaved so that load from other processes on the
machine hits each alike:

* W1 read: 10 tags x 100,000 steps written by our ``LogWriter`` (``.bench/data-ours``,
  written here when missing): every point in RAM, no cache.
* cache build: one run of ``--tags`` x ``--steps`` points (plus ``--short-tags`` tags of
  ``--short-steps`` points each, short series the cache keeps as columns) with an empty
  cache folder: every long series spilled to memory-mapped files with its pyramid. The
  commit that makes the cache durable (``fdatasync``, manifest) runs on the cache's writer
  thread after the read returns; its wait is shown apart. Peak RSS is the process's
  (``ru_maxrss``) over the read.
* restart: the same logdir again, the cache found and checked, nothing decoded.
* append: after a restart, one record of ``--append`` steps of every tag appended and read
  by ``reload()``: the reload's wall time, then the wait for its commit (this checkout's
  commit, with its ``fdatasync``, runs on the writer thread; the code before wrote its
  npz inside the reload), and the bytes the process wrote (``wchar`` of
  ``/proc/self/io``: every ``write()``, the commit included).

``--before REF`` measures the code of a git commit beside this checkout's, in the same run
(its ``visualdl/`` exported to a temporary folder). Points/s are wall-clock; CPU points/s
(the process's user + system time, all threads) are the figure to compare on a busy machine.
The build / W1 ratio is the median of each repeat's ratio (the two measured back to back).

Usage: python bench/scalar_cache.py [--steps 1000000] [--tags 20] [--repeats 3] [--before REF]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULT = "CACHE-BENCH "


# -- data ----------------------------------------------------------------------------------------
def write_w1(target: Path) -> Path:
    """W1's points as our LogWriter writes them (bench/server.py's ``data-ours``)."""
    if (target / ".complete").exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    code = ("import math, sys\nfrom visualdl import LogWriter\nw = LogWriter(logdir=sys.argv[1])\n"
            "for s in range(100000):\n    for k in range(10):\n"
            "        w.add_scalar(f'tag{k}', math.sin(s / 1000 + k), step=s)\nw.close()\n")
    subprocess.run([sys.executable, "-c", code, str(target / "run")], check=True,
                   env=dict(os.environ, PYTHONPATH=str(REPO)))
    (target / ".complete").write_text("ok")
    return target


def append_records(path: Path, lo: int, hi: int, tags: int, short_tags: int, every: int) -> None:
    """Steps [lo, hi) of every tag, in records of 10,000 steps; short tags get every
    ``every``-th step."""
    import numpy as np

    from visualdl.format.framing import frame
    from visualdl.format.scalar_codec import encode_entry, record_entry

    with open(path, "ab") as f:
        for a in range(lo, hi, 10_000):
            s = np.arange(a, min(hi, a + 10_000), dtype=np.float64)
            entries = []
            for k in range(tags + short_tags):
                cols = s if k < tags else s[(s % every) == 0]
                values = np.sin(cols / 10_000 + k) + 1e-3 * ((cols * 7919 + k) % 1000)
                flat = np.column_stack([cols, 1e9 + cols * 0.01, values]).ravel().tolist()
                name = f"tag{k}" if k < tags else f"eval{k - tags}"
                entries.append(record_entry(encode_entry(name, flat)))
            f.write(frame(b"".join(entries)))


def write_long(target: Path, tags: int, steps: int, short_tags: int, every: int) -> Path:
    if (target / ".complete").exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    from visualdl import LogWriter

    with LogWriter(logdir=str(target / "long")):
        pass
    path = next(p for p in (target / "long").iterdir() if "vdlrecords" in p.name)
    append_records(path, 0, steps, tags, short_tags, every)
    (target / ".complete").write_text("ok")
    return target


# -- the measured process ------------------------------------------------------------------------
def wchar() -> int:
    try:
        with open("/proc/self/io") as f:
            return int(next(line for line in f if line.startswith("wchar")).split()[1])
    except (OSError, StopIteration):
        return 0


def peak_rss_mb() -> float:
    """The process's peak resident set so far (Linux reports KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def read_all(logdir: str) -> tuple[object, int]:
    from visualdl.reader.log_reader import LogReader  # imported before the timed region

    reader = LogReader(logdir)
    points = 0
    for run in reader.runs():
        for tag in reader.tags(run).get("scalar", []):
            points += len(reader.scalars(run, tag).steps)
    return reader, points


def worker(mode: str, logdir: str, spec: dict) -> dict:
    from visualdl.reader import scalar_cache

    from visualdl.reader.log_reader import LogReader  # noqa: F401 - imported untimed

    wait = getattr(scalar_cache, "wait_writes", lambda: None)  # the code before: no thread
    cpu0, t0 = time.process_time(), time.perf_counter()
    reader, points = read_all(logdir)
    out = {"wall": time.perf_counter() - t0, "cpu": time.process_time() - cpu0,
           "points": points, "peak_mb": peak_rss_mb()}
    t1 = time.perf_counter()
    wait()
    out["commit"] = time.perf_counter() - t1
    if mode == "append":
        path = next(Path(logdir, "long").glob("*vdlrecords*"))
        steps = spec["steps"]
        append_records(path, steps, steps + spec["append"], spec["tags"], spec["short_tags"],
                       spec["every"])
        w0, t2 = wchar(), time.perf_counter()
        reader.reload()
        out["append_wall"] = time.perf_counter() - t2
        t3 = time.perf_counter()
        wait()
        out["append_commit"] = time.perf_counter() - t3
        out["append_bytes"] = wchar() - w0
        with open(path, "r+b") as f:  # the next repeat appends the same steps again
            f.truncate(spec["size"])
    return out


def run_worker(code: Path, mode: str, logdir: Path, cache: Path | None, spec: dict) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code), PYTHONDONTWRITEBYTECODE="1")
    if cache is None:
        env["VISUALDL_NO_CACHE"] = "1"
    else:
        env["VISUALDL_CACHE_DIR"] = str(cache)
    out = subprocess.run([sys.executable, __file__, "--worker", mode, str(logdir),
                          json.dumps(spec)], env=env, capture_output=True, text=True,
                         cwd=tempfile.gettempdir(), timeout=3600)
    line = next((x for x in out.stdout.splitlines() if x.startswith(RESULT)), None)
    if out.returncode or line is None:
        raise RuntimeError(f"{mode} worker failed: {out.stderr[-2000:]}")
    return json.loads(line[len(RESULT):])


# -- the table -----------------------------------------------------------------------------------
def med(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--worker":
        mode, logdir, spec = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
        print(RESULT + json.dumps(worker(mode, logdir, spec)), flush=True)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tags", type=int, default=20)
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--short-tags", type=int, default=4)
    parser.add_argument("--short-steps", type=int, default=250_000,
                        help="points of each short tag (below the 500,000 that spill)")
    parser.add_argument("--append", type=int, default=10_000, help="steps appended per tag")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", help="also measure this git commit's code")
    parser.add_argument("--data", type=Path, default=REPO / ".bench")
    args = parser.parse_args(argv)
    every = max(1, args.steps // max(1, args.short_steps))
    spec = {"tags": args.tags, "steps": args.steps, "short_tags": args.short_tags,
            "every": every, "append": args.append}
    data = args.data.resolve()
    w1 = write_w1(data / "data-ours")
    long_dir = write_long(data / f"data-cache-{args.tags}x{args.steps}+{args.short_tags}",
                          args.tags, args.steps, args.short_tags, every)
    spec["size"] = next((long_dir / "long").glob("*vdlrecords*")).stat().st_size
    work = Path(tempfile.mkdtemp(prefix="cache-bench-", dir=data))
    codes = {"this checkout": REPO}
    if args.before:
        export = work / "before"
        export.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.before, "visualdl"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(export)], input=archive, check=True)
        codes = {f"before ({args.before})": export, **codes}
    rows: dict[tuple[str, str], list[dict]] = {}
    try:
        for i in range(args.repeats):
            for name, code in codes.items():
                cache = work / "cache"
                shutil.rmtree(cache, ignore_errors=True)
                runs = [("W1 read", w1, None), ("build", long_dir, cache),
                        ("restart", long_dir, cache), ("append", long_dir, cache)]
                for label, logdir, where in runs:
                    mode = "append" if label == "append" else "read"
                    rows.setdefault((name, label), []).append(
                        run_worker(code, mode, logdir, where, spec))
                size = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file())
                rows[name, "build"][-1]["cache_mb"] = size / 2**20
                print(f"  repeat {i + 1}: {name} done", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    total = args.tags * args.steps + args.short_tags * -(-args.steps // every)
    print(f"\nlong run: {args.tags} tags x {args.steps:,} steps + {args.short_tags} short tags "
          f"= {total / 1e6:.1f}M points; W1: 10 tags x 100,000 steps; medians of "
          f"{args.repeats}; append: {args.append:,} steps of every tag")
    print("| code | W1 read (M pts/s, wall / CPU) | build (M pts/s, wall / CPU) | build / W1 "
          "(wall / CPU) | build peak RSS (MB) | commit wait (s) | cache (MB) | restart (s) "
          "| append reload (ms) | append commit wait (ms) | append bytes written (KB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in codes:
        w, b = rows[name, "W1 read"], rows[name, "build"]
        r, a = rows[name, "restart"], rows[name, "append"]
        w_wall, w_cpu = med(w, "points") / med(w, "wall"), med(w, "points") / med(w, "cpu")
        b_wall, b_cpu = med(b, "points") / med(b, "wall"), med(b, "points") / med(b, "cpu")
        # the ratio of each repeat's pair (measured back to back), then the median
        pairs = [(x["points"] / x["wall"] / (y["points"] / y["wall"]),
                  x["points"] / x["cpu"] / (y["points"] / y["cpu"])) for x, y in zip(b, w)]
        r_wall = statistics.median(p[0] for p in pairs)
        r_cpu = statistics.median(p[1] for p in pairs)
        print(f"| {name} | {w_wall / 1e6:.1f} / {w_cpu / 1e6:.1f} | {b_wall / 1e6:.1f} / "
              f"{b_cpu / 1e6:.1f} | {r_wall:.2f} / {r_cpu:.2f} | {med(b, 'peak_mb'):.0f} | "
              f"{med(b, 'commit'):.2f} | {med(b, 'cache_mb'):.0f} | {med(r, 'wall'):.2f} | "
              f"{1000 * med(a, 'append_wall'):.0f} | {1000 * med(a, 'append_commit'):.0f} | "
              f"{med(a, 'append_bytes') / 1024:,.0f} |")
    new_points = args.append * args.tags + args.short_tags * -(-args.append // every)
    print(f"(an append of {new_points:,} points is {24 * new_points / 1024:,.0f} KB of columns; "
          "target: build / W1 >= 0.85)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
