"""Rank-aware reading: the single-process path against the code before, and a ranked run.

Issue 27's logs of every rank split a run's series by rank (``RunStore._files_of``); a run
of one process must read as fast as before. Measured here, each in a fresh process,
interleaved so that load from other processes hits each alike, medians of ``--repeats``:

* single: one run of ``--tags`` x ``--steps`` points in two record files (a resumed run:
  the merge path), by this checkout and by ``--before`` (a git commit's ``visualdl/``,
  exported to a temporary folder): ``LogReader(logdir)``, then every tag's ``scalars()``
  (the files merged), then every tag's ``scalar_ends()`` (the run table's read), and
  the CPU time of one ``scalars()`` call on a series already merged (the API's hot path;
  process CPU time, steadier than wall time on a busy machine).
* ranked: the same points written by ``--ranks`` ranked writers (``--steps / --ranks``
  each), by this checkout: load, the default series of every tag (rank 0's), and every
  rank's series of every tag. The code before reads the same files as one run of merged
  ranks (its figures are given for scale, not as a like-for-like peer).

Usage: python bench/ranks.py [--tags 20] [--steps 200000] [--ranks 4] [--repeats 5]
                             [--before main]
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

WORKER = r"""
import json, sys, time
from visualdl.reader.log_reader import LogReader
logdir, run, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = time.perf_counter()
reader = LogReader(logdir)
t1 = time.perf_counter()
tags = reader.tags(run)["scalar"]
points = sum(len(reader.scalars(run, tag).values) for tag in tags)
t2 = time.perf_counter()
for tag in tags:
    reader.scalar_ends(run, tag)
t3 = time.perf_counter()
c0 = time.process_time()  # a held series asked again: the API's hot path, per call
for _ in range(2000):
    for tag in tags:
        reader.scalars(run, tag)
call_us = (time.process_time() - c0) / (2000 * len(tags)) * 1e6
out = {"load": t1 - t0, "scalars": t2 - t1, "ends": t3 - t2, "points": points,
       "call_us": call_us}
if ranks and hasattr(reader, "ranks"):
    t4 = time.perf_counter()
    out["rank_points"] = sum(len(reader.scalars(run, tag, rank).values)
                             for rank in reader.ranks(run) for tag in tags)
    out["every_rank"] = time.perf_counter() - t4
print(json.dumps(out))
"""


def write(root: Path, tags: int, steps: int, ranks: int) -> None:
    """With this checkout's writer (the files the code before reads too)."""
    sys.path.insert(0, str(REPO))
    from visualdl import LogWriter

    half = steps // 2
    for part, span in enumerate((range(0, half), range(half, steps))):
        with LogWriter(logdir=str(root / "single" / "run"), system_metrics=False,
                       filename_suffix=f".part{part}") as w:
            for step in span:
                for t in range(tags):
                    w.add_scalar(f"tag{t:02d}", step * 0.5 + t, step, walltime=1e9 + step)
    each = steps // ranks
    for rank in range(ranks):
        with LogWriter(logdir=str(root / "ranked" / "run"), rank=rank, world_size=ranks,
                       system_metrics=False) as w:
            for step in range(each):
                for t in range(tags):
                    w.add_scalar(f"tag{t:02d}", step * 0.5 + rank, step,
                                 walltime=1e9 + step + rank / 10)


def measure(code: Path, logdir: Path, ranks: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code), "NUMBA_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", WORKER, str(logdir), "run",
                           str(ranks)], env=env, capture_output=True, text=True, check=True,
                          cwd=tempfile.gettempdir())
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tags", type=int, default=20)
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--before", default="main", help="the git commit measured beside")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="vdl-bench-ranks-"))
    try:
        write(work / "logs", args.tags, args.steps, args.ranks)
        export = work / "before"
        export.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.before, "visualdl"],
                                 capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(export)], input=archive.stdout, check=True)
        codes = {"this checkout": REPO, f"before ({args.before[:12]})": export}
        results: dict[tuple[str, str], list[dict]] = {}
        for _ in range(args.repeats):
            for name, code in codes.items():
                for data, ranks in (("single", 0), ("ranked", args.ranks)):
                    results.setdefault((name, data), []).append(
                        measure(code, work / "logs" / data, ranks))
        report(results, args, list(codes))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(results: dict, args: argparse.Namespace, names: list[str]) -> None:
    med = lambda rows, key: statistics.median(r[key] for r in rows)  # noqa: E731
    print(f"{args.tags} tags x {args.steps:,} steps ({args.tags * args.steps:,} points); "
          f"ranked: {args.ranks} ranks x {args.steps // args.ranks:,} steps; "
          f"medians of {args.repeats}, seconds")
    print(f"{'code':<22} {'data':<7} {'load':>8} {'scalars()':>10} {'ends':>8} "
          f"{'every rank':>11} {'call µs':>8} {'points':>11}")
    for data in ("single", "ranked"):
        for name in names:
            rows = results[(name, data)]
            every = f"{med(rows, 'every_rank'):.3f}" if "every_rank" in rows[0] else "–"
            print(f"{name:<22} {data:<7} {med(rows, 'load'):>8.3f} {med(rows, 'scalars'):>10.3f} "
                  f"{med(rows, 'ends'):>8.4f} {every:>11} {med(rows, 'call_us'):>8.2f} "
                  f"{int(med(rows, 'points')):>11,}")
    mine, before = results[("this checkout", "single")], results[(names[1], "single")]
    for key in ("load", "scalars", "ends", "call_us"):
        ratio = statistics.median(a[key] / b[key] for a, b in zip(mine, before))
        print(f"single-process {key}: this checkout / before = {ratio:.3f} (median of "
              "per-repeat ratios)")


if __name__ == "__main__":
    main()
