"""Run discovery over 2,000 runs, with and without JSON files that might be traces.

Traces under other tools' names (``rank-0.json.gz``, ``trace.json``) are told from other
JSON by their first bytes (visualdl.sources.torchtrace.sniff), so discovery now opens
``*.json[.gz]`` files: once per change of a file, its verdict kept per logdir. This
measures ``discovery.find_files`` (what every reload runs) over three logdirs:

* ``events``: 2,000 runs of one TensorBoard event file each (no JSON: names only);
* ``+config.json``: the same, each run also holding a ``config.json`` and a
  ``results.json.gz`` that are no traces (every one peeked at on the first pass);
* ``rank-0.json.gz``: 2,000 runs of one gzip'd trace under HTA's name.

``first``: a fresh logdir object (nothing peeked yet), ``again``: the next reload's pass
(verdicts kept); medians of ``--repeats`` passes, milliseconds. ``--repo DIR`` measures
another checkout (e.g. one of the commit before: ``git worktree add /tmp/before HEAD~2``),
on the same files.

Usage: python bench/trace_discovery.py [--runs 2000] [--repeats 5] [--repo DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACE = REPO / "tests" / "kinds" / "profile" / "data" / "kineto" / "rank-0.json.gz"


def write(root: Path, runs: int) -> dict[str, Path]:
    layouts = {name: root / name for name in ("events", "+config.json", "rank-0.json.gz")}
    trace = TRACE.read_bytes()
    config = json.dumps({"lr": 0.1, "batch_size": 32}).encode()
    results = gzip.compress(json.dumps({"accuracy": [0.5, 0.7]}).encode())
    for i in range(runs):
        for name, top in layouts.items():
            run = top / f"run{i:05d}"
            run.mkdir(parents=True)
            if name == "rank-0.json.gz":
                (run / "rank-0.json.gz").write_bytes(trace)
                continue
            (run / "events.out.tfevents.1700000000.host").write_bytes(b"")
            if name == "+config.json":
                (run / "config.json").write_bytes(config)
                (run / "results.json.gz").write_bytes(results)
    return layouts


_MEASURE = r"""
import statistics, sys, time
from visualdl.reader import discovery
path, repeats = sys.argv[1], int(sys.argv[2])
first, again, runs = [], [], 0
for _ in range(repeats):
    (root,) = discovery.make_roots([path])
    t = time.perf_counter(); found = discovery.find_files(root); first.append(time.perf_counter() - t)
    t = time.perf_counter(); discovery.find_files(root); again.append(time.perf_counter() - t)
    runs = len(found)
print(runs, 1e3 * statistics.median(first), 1e3 * statistics.median(again))
"""


def measure(repo: Path, path: Path, repeats: int) -> tuple[int, float, float]:
    env = dict(os.environ, PYTHONPATH=str(repo))
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(path), str(repeats)], env=env,
                         capture_output=True, text=True, check=True, cwd=str(repo)).stdout
    runs, first, again = out.split()
    return int(runs), float(first), float(again)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--repo", type=Path, action="append", default=[],
                        help="another checkout to measure too (repeatable)")
    args = parser.parse_args(argv)
    repos = [REPO] + args.repo
    with tempfile.TemporaryDirectory() as tmp:
        layouts = write(Path(tmp), args.runs)
        print(f"discovery.find_files over {args.runs:,} runs (median of {args.repeats}, ms)")
        print(f"{'checkout':<28} {'logdir':<16} {'runs':>6} {'first':>8} {'again':>8}")
        for repo in repos:
            for name, path in layouts.items():
                runs, first, again = measure(repo, path, args.repeats)
                print(f"{str(repo)[-28:]:<28} {name:<16} {runs:>6} {first:>8.1f} {again:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
