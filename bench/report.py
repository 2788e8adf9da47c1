"""The HTML report (``visualdl export --format html``): its export time, size and the time
its first chart takes to draw in Chromium opened from disk.

* the demo logdir (``examples/train_demo.py``, written first when missing): the export
  in-process (a cold ``LogReader``, collect, render, write) and as the CLI (a fresh
  interpreter, its imports included); the file opened from ``file://`` with the network
  off, until its first chart is drawn (target: export 2 s, first chart 1 s); the first
  chart is the page's SVG first look, drawn before plotly.js is evaluated, and the first
  interactive (plotly) chart is timed too;
* 50 charts x 10 runs of 1M-point series (500M points, made in memory by a source with the
  reader's interface, deterministic, each with a spike): the export time and the file's
  size (target: 10 MB at most) with the points kept, and its first chart in Chromium.

Usage: python bench/report.py [--demo /tmp/rep_demo] [--points 1000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from visualdl import LogReader  # noqa: E402
from visualdl.report import Selection, collect, render  # noqa: E402
from visualdl.sources.values import Scalars  # noqa: E402


class SyntheticRuns:
    """``runs`` x ``tags`` scalar series of ``points`` points each, made when asked."""

    def __init__(self, runs: int, tags: int, points: int) -> None:
        self.names = [f"run{i:02d}" for i in range(runs)]
        self.tag_names = [f"group{t // 10}/metric{t:02d}" for t in range(tags)]
        self.points = points
        self.seconds = 0.0  # spent making series (not the report's work)

    def runs(self) -> list[str]:
        return self.names

    def tags(self, run: str) -> dict[str, list[str]]:
        return {"scalar": self.tag_names}

    def scalars(self, run: str, tag: str) -> Scalars:
        start = time.perf_counter()
        try:
            return self._make(run, tag)
        finally:
            self.seconds += time.perf_counter() - start

    def _make(self, run: str, tag: str) -> Scalars:
        seed = self.names.index(run) * 1000 + self.tag_names.index(tag)
        rng = np.random.default_rng(seed)
        steps = np.arange(self.points, dtype=np.int64)
        values = np.exp(-steps / (self.points / 3)) + rng.normal(0, 0.05, self.points)
        values[(seed * 7919) % self.points] = 50.0  # a spike the report must keep
        return Scalars(steps, steps.astype(np.float64), values)

    def events(self, run: str, kind: str, tag: str) -> list:
        raise KeyError(tag)

    def hparams(self, run: str) -> None:
        return None

    def load(self, ref: object) -> None:
        raise KeyError(ref)


def export(data, out: Path) -> tuple[float, int, dict]:
    start = time.perf_counter()
    collected = collect(data, Selection())
    page = render(collected)
    out.write_text(page, encoding="utf-8")
    return time.perf_counter() - start, out.stat().st_size, collected["scalars"]["points"]


def first_chart_ms(path: Path) -> tuple[float, float]:
    """ms from navigation to the first chart drawn (the SVG first look) and to the first
    interactive (plotly) chart, in headless Chromium, network off."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.set_offline(True)
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_function("document.body.dataset.plotlyChartMs", timeout=60_000)
        ms = tuple(float(page.evaluate(f"document.body.dataset.{key}"))
                   for key in ("firstChartMs", "plotlyChartMs"))
        browser.close()
    return ms


def ensure_demo(logdir: Path) -> None:
    if not logdir.is_dir():
        env = dict(os.environ, PYTHONPATH=str(REPO))
        subprocess.run([sys.executable, str(REPO / "examples" / "train_demo.py"), "--logdir",
                        str(logdir)], check=True, env=env, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo", default="/tmp/rep_demo", help="the demo logdir")
    parser.add_argument("--points", type=int, default=1_000_000, help="points per series")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    demo = Path(args.demo)
    ensure_demo(demo)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "demo.html"
        times = [export(LogReader(str(demo)), out)[0] for _ in range(args.repeats)]
        cli = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "visualdl", "export", "--format", "html",
                            str(demo), str(out)], check=True, capture_output=True,
                           env=dict(os.environ, PYTHONPATH=str(REPO)))
            cli.append(time.perf_counter() - start)
        opened = [first_chart_ms(out) for _ in range(args.repeats)]
        _, size, points = export(LogReader(str(demo)), out)
        rows += [("demo: export in-process (s)", statistics.median(times), "<= 2"),
                 ("demo: export, CLI wall (s)", statistics.median(cli), "<= 2"),
                 ("demo: first chart in Chromium (ms)",
                  statistics.median(o[0] for o in opened), "<= 1000"),
                 ("demo: first interactive chart (ms)",
                  statistics.median(o[1] for o in opened), ""),
                 ("demo: file size (MB)", size / 1e6, ""),
                 ("demo: points kept / total", f"{points['kept']:,} / {points['total']:,}", "")]
        big = Path(tmp) / "big.html"
        source = SyntheticRuns(10, 50, args.points)
        seconds, size, points = export(source, big)
        rows += [(f"50 charts x 10 runs x {args.points:,} pts: export (s)", seconds, ""),
                 ("  of which making the series (s)", source.seconds, ""),
                 ("  the report's own work (s)", seconds - source.seconds, ""),
                 ("  file size (MB)", size / 1e6, "<= 10"),
                 ("  points kept / total", f"{points['kept']:,} / {points['total']:,}", ""),
                 ("  first chart / interactive in Chromium (ms)",
                  "{:.0f} / {:.0f}".format(*first_chart_ms(big)), "")]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>22}  target")
    for name, value, target in rows:
        text = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"{name:<{width}}  {text:>22}  {target}")


if __name__ == "__main__":
    main()
