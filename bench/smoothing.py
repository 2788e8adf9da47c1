"""Smoothing modes of the scalars chart: server time for a 1M-point series window.

Each mode is computed at the points a chart draws (1,000 min/max points of the window) over
the whole series (``visualdl.series.smoothing``): the time-weighted EMA and the running
average are compared with today's debiased EMA at the same reach (a weight ``w`` and
``N = 1 / (1 - w)`` points), and the min/max envelope with the EMA at the default weight,
all measured in this run on the same series (unevenly logged: gaps of 1, 2 and 5 steps).
Two tables: the smoothing alone (the function the route calls), and the whole answer of
``GET /api/scalars`` on a real server over the same series written by ``LogWriter`` (the
window's min/max downsampling, the smoothing and the JSON, timed at the client): what a
chart waits for. Each cell is the median of ``--repeats`` calls.

Usage: python bench/smoothing.py [--points 1000000] [--repeats 15]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import numpy as np
import requests

from visualdl import LogWriter
from visualdl.server.background import start_server

from visualdl.series.downsample import minmax_indices
from visualdl.series.smoothing import Smoothing, envelope_at, smooth_at
from visualdl.sources.values import Scalars


def series(n: int) -> Scalars:
    rng = np.random.default_rng(0)
    steps = np.cumsum(np.tile([1, 2, 5], n // 3 + 1)[:n]).astype(np.int64)
    values = np.cumsum(rng.normal(size=n)) * 0.01 + rng.normal(size=n)
    return Scalars(steps, steps * 0.1, values)


def median_ms(fn, repeats: int) -> float:
    fn()  # warm: page faults, first allocations
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


# (name, query, the EMA case it is compared with: the same reach)
CASES = [("ema w=0.6", {"smoothing": 0.6}, "ema w=0.6"),
         ("time_ema w=0.6", {"smoothing": 0.6, "smoothing_mode": "time_ema"}, "ema w=0.6"),
         ("running N=3", {"smoothing_mode": "running", "smoothing_points": 3}, "ema w=0.6"),
         ("envelope + ema w=0.6", {"smoothing": 0.6, "envelope": 1}, "ema w=0.6"),
         ("ema w=0.99", {"smoothing": 0.99}, "ema w=0.99"),
         ("time_ema w=0.99", {"smoothing": 0.99, "smoothing_mode": "time_ema"}, "ema w=0.99"),
         ("running N=100", {"smoothing_mode": "running", "smoothing_points": 100},
          "ema w=0.99"),
         ("ema w=0.999", {"smoothing": 0.999}, "ema w=0.999"),
         ("time_ema w=0.999", {"smoothing": 0.999, "smoothing_mode": "time_ema"},
          "ema w=0.999"),
         ("running N=1000", {"smoothing_mode": "running", "smoothing_points": 1000},
          "ema w=0.999")]


def served(data: Scalars, repeats: int) -> None:
    """The whole answer of /api/scalars for each case, on a real server."""
    with tempfile.TemporaryDirectory() as logdir:
        with LogWriter(logdir=f"{logdir}/run") as writer:
            for s, v in zip(data.steps.tolist(), data.values.tolist()):
                writer.add_scalar("loss", v, step=s, walltime=1e9 + s)
        handle = start_server([logdir], reload_interval=60)
        try:
            assert handle.wait_loaded(120)
            session = requests.Session()
            url = f"{handle.url}/api/scalars"

            def ask(query: dict) -> None:
                r = session.get(url, params={"run": "run", "tag": "loss", "points": 1000,
                                             **query}, timeout=120)
                assert r.status_code == 200, r.text

            base = {name: median_ms(lambda q=q: ask(q), repeats) for name, q, _ in CASES}
        finally:
            handle.stop()
    print(f"\nGET /api/scalars, the whole {data.steps.shape[0]:,}-point series at 1,000 "
          f"points, median of {repeats}")
    print(f"{'mode':<24}{'ms':>9}   {'vs the EMA of the same reach':>28}")
    for name, _, ref in CASES:
        print(f"{name:<24}{base[name]:>9.2f}   {base[name] / base[ref]:>28.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    data = series(args.points)
    idx = minmax_indices(data.values, 1000)
    rows = []
    for w in (0.6, 0.9, 0.99, 0.999):
        ema = median_ms(lambda: smooth_at(data, idx, Smoothing("ema", w)), args.repeats)
        n = round(1 / (1 - w))
        cases = [(f"time_ema w={w}", Smoothing("time_ema", w)),
                 (f"running N={n}", Smoothing("running", 0.0, n))]
        for name, spec in cases:
            ms = median_ms(lambda: smooth_at(data, idx, spec), args.repeats)
            rows.append((name, f"ema w={w}", ms, ema))
    ema = median_ms(lambda: smooth_at(data, idx, Smoothing("ema", 0.6)), args.repeats)
    env = median_ms(lambda: envelope_at(data.values, idx), args.repeats)
    rows.append(("envelope", "ema w=0.6", env, ema))
    print(f"{args.points:,}-point window, 1,000 points drawn, median of {args.repeats}")
    print(f"{'mode':<22}{'ms':>9}   {'baseline':<14}{'ms':>9}{'ratio':>8}")
    for name, base, ms, ref in rows:
        print(f"{name:<22}{ms:>9.2f}   {base:<14}{ref:>9.2f}{ms / ref:>8.2f}")
    served(data, args.repeats)


if __name__ == "__main__":
    main()
