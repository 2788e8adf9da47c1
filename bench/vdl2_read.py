"""Reading VisualDL 2.x logs: ours against VisualDL 2.5.3's own reader, same files.

    python bench/vdl2_read.py            # 10 tags x 100,000 steps, 3 repeats, medians
    python bench/vdl2_read.py --quick    # 10 tags x 10,000 steps, 1 repeat

VisualDL 2.5.3 writes the logdir (bench/write_read.py's W1 workload, run by its own
``LogWriter`` in its venv under ``.bench/venvs/``, shared with that script). Each read is a
fresh process (bench/_peers/worker.py) that reads every scalar point back and reports its
time and peak RSS: ours with ``LogReader(logdir)`` (the VisualDL file told apart by its
content, decoded by ``visualdl.sources.vdl2``), VisualDL with its ``LogReader(file_path=)``
and ``parsing_from_proto``, as bench/write_read.py reads it. The last row is ``visualdl
convert`` of the same logdir into our format (a process of its own, start-up included).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import write_read as wr  # noqa: E402  (the peers' venvs and the worker live there)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 x 10,000 points, 1 repeat")
    parser.add_argument("--repeat", type=int, default=None)
    args = parser.parse_args(argv)
    steps = 10_000 if args.quick else 100_000
    repeat = args.repeat or (1 if args.quick else 3)
    sizes = {**wr.FULL_SIZES, "w1_tags": 10, "w1_steps": steps}
    with tempfile.TemporaryDirectory(prefix="vdl2-bench-") as work:
        systems = {s.key: s for s in wr.make_systems(["visualdl"], work)}
        peer = systems["visualdl"]
        if peer.missing_write:
            sys.exit(f"VisualDL 2.5.3 is missing: {peer.missing_write}")
        logdir = Path(work) / "logs" / "run"
        logdir.mkdir(parents=True)
        wr.log(f"writing {sizes['w1_tags']} x {steps:,} points with VisualDL 2.5.3 ...")
        wr.run_worker(peer, "write", "W1", logdir, sizes, work)
        size_mb = wr.bytes_on_disk(logdir) / 1e6
        rows: dict[str, list[dict]] = {"ours": [], "visualdl": []}
        convert_s: list[float] = []
        for k in range(repeat):
            for key in ("ours", "visualdl"):
                wr.log(f"read {k + 1}/{repeat}: {key}")
                rows[key].append(wr.run_worker(systems[key], "read", "W1", logdir, sizes, work))
            dst = Path(work) / "converted"
            shutil.rmtree(dst, ignore_errors=True)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "visualdl", "convert", str(logdir.parent),
                            str(dst)], env=wr.ours_env(), cwd=work, check=True,
                           capture_output=True)
            convert_s.append(time.perf_counter() - t0)
    points = sizes["w1_tags"] * steps
    print(f"VisualDL 2.5.3 logdir: {points:,} scalar points in one file, {size_mb:.1f} MB; "
          f"median of {repeat}")
    print(f"{'reader':<28}{'points read':>12}{'read s':>10}{'peak RSS MB':>14}")
    for key, label in (("ours", "visualdl (ours) LogReader"), ("visualdl", "VisualDL 2.5.3")):
        runs = rows[key]
        print(f"{label:<28}{runs[-1]['points']:>12,}"
              f"{statistics.median(r['wall_s'] for r in runs):>10.2f}"
              f"{statistics.median(r['rss_mb'] for r in runs):>14.0f}")
    ours = statistics.median(r["wall_s"] for r in rows["ours"])
    theirs = statistics.median(r["wall_s"] for r in rows["visualdl"])
    print(f"{'visualdl convert (process)':<28}{points:>12,}{statistics.median(convert_s):>10.2f}"
          f"{'-':>14}")
    print(f"VisualDL time / ours: {theirs / ours:.1f}x")


if __name__ == "__main__":
    main()
