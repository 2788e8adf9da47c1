"""Zoom windows of the scalars chart: server time to answer a window on each x axis.

A chart zoomed on its Step axis asks ``/api/scalars`` for a step range; on its Wall axis for
a wall-time range; on its Relative axis the batch route for each run's own wall-time range;
with smoothing on, for the whole series' EMA at the window's points as well. This measures
what each costs on a real server (``python -m visualdl``) over the same series, so the new
paths are compared with the step window measured in the same run: a 200,000-point series
(kept in RAM) and longer ones (kept on disk, memory-mapped, answered from the min/max
pyramid). Windows span the whole series down to 40 steps (single steps on screen); each
cell is the median of ``--repeats`` requests at 1,000 points, timed at the client.
TensorBoard and VisualDL 2.x have no such request: their zoom only rescales the points
already drawn.

Usage: python bench/zoom_windows.py [--sizes 200000,1000000,5000000] [--repeats 15]
(the full window, a twentieth, 10,000 steps and 40 steps of each series)
"""

from __future__ import annotations

import argparse
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[1]
T0 = 1_700_000_000.0
DT = 0.01  # seconds a step

WRITE = """
import math, sys
from visualdl import LogWriter
n = int(sys.argv[2])
with LogWriter(logdir=sys.argv[1]) as w:
    for s in range(n):
        w.add_scalar("x", math.sin(s / 1000.0), step=s, walltime={t0} + s * {dt})
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(fn, repeats: int) -> float:
    """Median milliseconds of ``fn()`` (one warm-up call first)."""
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200000,1000000,5000000",
                        help="points of each series, comma-separated")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="vdl-zoom-") as tmp:
        root = Path(tmp)
        for n in sizes:
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", WRITE.format(t0=T0, dt=DT),
                            str(root / f"n{n}"), str(n)], check=True)
            print(f"wrote {n:,} points in {time.perf_counter() - t:.1f} s", flush=True)
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        proc = subprocess.Popen([sys.executable, "-m", "visualdl", "--logdir", str(root),
                                 "--port", str(port), "--cache-dir", str(root / ".cache")],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            rows = run(f"http://127.0.0.1:{port}", sizes, args.repeats)
        finally:
            proc.terminate()
            proc.wait(10)
    print()
    print(table(rows))
    return 0


def run(url: str, sizes: list[int], repeats: int) -> list[list[str]]:
    session = requests.Session()
    deadline = time.monotonic() + 600
    while True:  # until every series is loaded
        try:
            totals = [session.get(f"{url}/api/scalars", params={"run": f"n{n}", "tag": "x",
                                                                "points": 4}).json()
                      for n in sizes]
            if all(b.get("total") == n for b, n in zip(totals, sizes)):
                break
        except (requests.RequestException, ValueError):
            pass
        if time.monotonic() > deadline:
            raise SystemExit("server did not load the series in 10 minutes")
        time.sleep(0.5)
    rows = []
    for n in sizes:
        run_name = f"n{n}"
        for width in sorted({n, n // 20, 10_000, 40}, reverse=True):
            lo = (n - width) // 2 + 7  # off the buckets' edges
            hi = lo + width - 1
            base = {"run": run_name, "tag": "x", "points": 1000}

            def get(**extra):
                r = session.get(f"{url}/api/scalars", params={**base, **extra},
                                headers={"Cache-Control": "no-cache"})
                assert r.status_code == 200, r.text
                body = r.json()
                assert body["steps"] and body["steps"][0] >= lo - 1 and body["steps"][-1] <= hi + 1
                return body

            def batch(**extra):
                r = session.post(f"{url}/api/scalars/batch", json={
                    "points": 1000, "series": [{**base, **extra}]})
                assert r.status_code == 200, r.text
                return r.json()

            step = timed(lambda: get(start_step=lo, end_step=hi), repeats)
            wmin, wmax = T0 + lo * DT, T0 + hi * DT
            wall = timed(lambda: get(wall_min=wmin, wall_max=wmax), repeats)
            rel = timed(lambda: batch(wall_min=wmin, wall_max=wmax), repeats)
            smooth = timed(lambda: get(start_step=lo, end_step=hi, smoothing=0.6), repeats)
            body = get(wall_min=wmin, wall_max=wmax)
            rows.append([f"{n:,}", f"{width:,}", str(len(body["steps"])),
                         f"{step:.1f}", f"{wall:.1f}", f"{rel:.1f}", f"{smooth:.1f}",
                         f"{wall / step:.2f}", f"{smooth / step:.2f}"])
            print(" | ".join(rows[-1]), flush=True)
    return rows


def table(rows: list[list[str]]) -> str:
    head = ["series", "window (steps)", "points served", "step ms", "wall ms",
            "relative (batch) ms", "step+smoothing ms", "wall/step", "smoothed/step"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    line = lambda cells: "| " + " | ".join(c.rjust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    out = [line(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in rows]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
