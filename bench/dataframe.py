"""DataFrame benchmark: ``LogReader(...).scalars_frame()`` against tbparse.

    python bench/dataframe.py            # 10 tags x 100,000 steps (1M points), 3 repeats
    python bench/dataframe.py --quick    # 10 tags x 5,000 steps, 1 repeat

The same points are written twice under ``<repo>/.bench/dataframe/``: as our record files
(LogWriter) and as TensorBoard event files (one Event per point, as tensorboardX and torch
write ``add_scalar``; see ``bench/write_read.py``'s W4). Each measurement is a fresh process
that times from before opening the logdir to the finished long-form DataFrame (run, tag,
step, wall_time, value), interpreter start and imports excluded:

  ours        LogReader(records).scalars_frame()
  ours/tfev   LogReader(event files).scalars_frame() (our reader reads TensorBoard's files)
  tbparse     tbparse.SummaryReader(event files, extra_columns={"wall_time", "dir_name"})
              .scalars, in the TensorBoard 2.21 venv of bench/write_read.py with tbparse
              installed there (pip install tbparse); tbparse loads through TensorBoard's
              EventAccumulator and samples nothing.

The table gives medians and the ratio tbparse / ours (the issue asks for >= 20x).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / ".bench" / "dataframe"
TB_VENV = Path("/work/main/.bench/venvs/tensorboard-2.21.0")
for candidate in (REPO / ".bench" / "venvs" / "tensorboard-2.21.0",):
    if candidate.exists():
        TB_VENV = candidate

OURS = """
import json, sys, time
import pandas
from visualdl import LogReader
import visualdl.export, visualdl.reader.log_reader
t = time.perf_counter()
df = LogReader(sys.argv[1]).scalars_frame()
print(json.dumps({"seconds": time.perf_counter() - t, "rows": len(df)}))
"""
TBPARSE = """
import json, sys, time
from tbparse import SummaryReader
t = time.perf_counter()
df = SummaryReader(sys.argv[1], extra_columns={"wall_time", "dir_name"}).scalars
print(json.dumps({"seconds": time.perf_counter() - t, "rows": len(df)}))
"""


def prepare(tags: int, steps: int) -> tuple[Path, Path]:
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "bench"))
    ours, tb = DATA / f"ours-{tags}x{steps}", DATA / f"tb-{tags}x{steps}"
    if not (ours / ".complete").exists():
        import numpy as np

        from visualdl import LogWriter

        values = np.random.default_rng(0).random(tags * steps).tolist()
        with LogWriter(logdir=str(ours / "run")) as w:
            i = 0
            for step in range(steps):
                for t in range(tags):
                    w.add_scalar(f"w1/tag{t}", values[i], step)
                    i += 1
        (ours / ".complete").write_text("1")
    if not (tb / ".complete").exists():
        from write_read import write_tfevents

        (tb / "run").mkdir(parents=True, exist_ok=True)
        write_tfevents(tb / "run", {"w1_tags": tags, "w1_steps": steps})
        (tb / ".complete").write_text("1")
    return ours, tb


def run(python: str, code: str, path: Path, env: dict | None = None) -> dict:
    import os

    proc = subprocess.run([python, "-c", code, str(path)], capture_output=True, text=True,
                          timeout=3600, cwd="/tmp",
                          env=dict(os.environ, **(env or {})))
    if proc.returncode:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=None)
    args = parser.parse_args(argv)
    tags, steps = (10, 5_000) if args.quick else (10, 100_000)
    repeat = args.repeat or (1 if args.quick else 3)
    ours_dir, tb_dir = prepare(tags, steps)
    ours_env = {"PYTHONPATH": str(REPO)}
    tb_python = str(TB_VENV / "bin" / "python")
    rows = {}
    for name, python, code, path, env in (
        ("ours", sys.executable, OURS, ours_dir, ours_env),
        ("ours/tfev", sys.executable, OURS, tb_dir, ours_env),
        ("tbparse", tb_python, TBPARSE, tb_dir, None),
    ):
        results = [run(python, code, path, env) for _ in range(repeat)]
        errors = [r["error"] for r in results if "error" in r]
        if errors:
            rows[name] = {"error": errors[0]}
            continue
        rows[name] = {"seconds": statistics.median(r["seconds"] for r in results),
                      "rows": results[0]["rows"]}
    print(f"\nDataFrame of {tags} tags x {steps:,} steps ({tags * steps:,} points), "
          f"median of {repeat}, fresh process each (imports excluded)\n")
    print(f"{'system':<11} {'seconds':>9} {'rows':>11} {'points/s':>12} {'vs ours':>8}")
    base = rows["ours"].get("seconds")
    for name, row in rows.items():
        if "error" in row:
            print(f"{name:<11} missing: {row['error']}")
            continue
        ratio = f"{row['seconds'] / base:.1f}x" if base else ""
        print(f"{name:<11} {row['seconds']:9.3f} {row['rows']:11,} "
              f"{row['rows'] / row['seconds']:12,.0f} {ratio:>8}")
    if base and "seconds" in rows.get("tbparse", {}):
        speedup = rows["tbparse"]["seconds"] / base
        print(f"\ntbparse / ours = {speedup:.1f}x (target >= 20x): "
              f"{'met' if speedup >= 20 else 'NOT met'}")


if __name__ == "__main__":
    main()
