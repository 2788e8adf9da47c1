"""Combined-charts benchmark: the scalars dashboard's first screen in headless Chromium.

Workload (issue 16, "Bench"): one run with 50 ``add_scalars`` charts of 5 lines each, 100k
points per line (250 series, 25M points), against the same 250 series logged with
``add_scalar`` (no grouping recorded), which the dashboard draws as 250 separate charts.
Both logdirs are written by our LogWriter (in two processes at once) and served by
``python -m visualdl`` in a subprocess of its own.

* first screen: from navigation start (a fresh browser context, empty cache) until every card
  on the first screen (1280x800) is drawn (its plotly traces in place), timed in the page;
  median of ``--repeats`` visits. The combined page must stay within 1.5x of the separate one.

Usage: python bench/combined.py [--points 100000] [--repeats 5] [--keep DIR]
Chromium is Debian's /usr/bin/chromium driven by Playwright; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from visualdl.testing import launch_chromium

sys.path.insert(0, str(Path(__file__).resolve().parent))
from media import start_server  # noqa: E402  (bench/media.py: `python -m visualdl` on a free port)
from server import stop  # noqa: E402

CHARTS, LINES = 50, 5
TARGET_RATIO = 1.5


def write_run(root: str, points: int, combined: bool) -> float:
    """One run of CHARTS x LINES series of ``points`` points; returns seconds taken."""
    from visualdl import LogWriter

    t0 = time.perf_counter()
    steps = np.arange(points)
    with LogWriter(logdir=str(Path(root) / "run"), max_queue=65536) as w:
        add = w.add_scalar
        for c in range(CHARTS):
            main = f"chart{c:02d}"
            keys = [f"line{k}" for k in range(LINES)]
            columns = [(np.sin(steps / (500 + 37 * c + 11 * k)) + 0.1 * k).tolist() for k in range(LINES)]
            if combined:  # records the chart, then the rest of the points as plain scalars
                w.add_scalars(main, {key: col[0] for key, col in zip(keys, columns)}, 0)
            else:
                for key, col in zip(keys, columns):
                    add(f"{main}/{key}", col[0], 0)
            for key, col in zip(keys, columns):
                tag = f"{main}/{key}"
                for step in range(1, points):
                    add(tag, col[step], step)
    return time.perf_counter() - t0


# Resolves with performance.now() (ms since navigation start) once every card on the first
# screen is drawn; `kind` is the data-kind the first card must have (layouts loaded).
FIRST_SCREEN = """
async (kind) => new Promise((resolve) => {
  const check = () => {
    const cards = [...document.querySelectorAll('.card')].filter((c) => {
      const r = c.getBoundingClientRect();
      return r.bottom > 0 && r.top < window.innerHeight;
    });
    const drawn = cards.length && cards[0].dataset.kind === kind && cards.every((c) =>
      c.dataset.state === 'ready' && c.querySelector('.plot').data);
    if (drawn) {
      const traces = cards.reduce((n, c) => n + c.querySelector('.plot').data.length, 0);
      resolve({ms: performance.now(), cards: cards.length, traces});
    } else requestAnimationFrame(check);
  };
  check();
})
"""


def first_screens(url: str, kind: str, repeats: int) -> list[dict]:
    from playwright.sync_api import sync_playwright

    out = []
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            for _ in range(repeats + 1):  # the first visit warms the server's caches
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.set_default_timeout(120_000)
                page.goto(url + "/")
                out.append(page.evaluate(FIRST_SCREEN, kind))
                context.close()
        finally:
            browser.close()
    return out[1:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=100_000, help="points per line")
    parser.add_argument("--repeats", type=int, default=5, help="visits per page (median)")
    parser.add_argument("--keep", type=Path, help="write (or reuse) the logdirs here")
    args = parser.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="vdl-combined-"))
    dirs = {"combined": root / f"combined{args.points}", "separate": root / f"separate{args.points}"}
    todo = [(str(d), args.points, name == "combined") for name, d in dirs.items() if not d.exists()]
    if todo:
        with multiprocessing.get_context("spawn").Pool(len(todo)) as pool:
            took = pool.starmap(write_run, todo)
        total = CHARTS * LINES * args.points
        for (path, _, _), seconds in zip(todo, took):
            print(f"wrote {Path(path).name}: {total / 1e6:.1f}M points in {seconds:.1f} s "
                  f"({total / seconds / 1e6:.2f}M points/s)")
    results = {}
    try:
        for name, kind in (("separate", "tag"), ("combined", "group")):
            proc, url = start_server(dirs[name])
            try:
                results[name] = first_screens(url, kind, args.repeats)
            finally:
                stop(proc)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print()
    print(f"{'page':<34} {'cards':>6} {'traces':>7} {'first screen (median)':>22} {'runs (ms)':>30}")
    medians = {}
    for name, label in (("separate", f"{CHARTS * LINES} separate charts"),
                        ("combined", f"{CHARTS} combined charts x {LINES} lines")):
        runs = results[name]
        medians[name] = statistics.median(r["ms"] for r in runs)
        times = " ".join(f"{r['ms']:.0f}" for r in runs)
        print(f"{label:<34} {runs[0]['cards']:>6} {runs[0]['traces']:>7} "
              f"{medians[name]:>19.0f} ms {times:>30}")
    ratio = medians["combined"] / medians["separate"]
    ok = ratio <= TARGET_RATIO
    print(f"\ncombined / separate: {ratio:.2f}x (target <= {TARGET_RATIO}x) {'OK' if ok else 'OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
