"""Media benchmark: the images dashboard over a large image logdir, in headless Chromium.

Workload (issue 4, "Benchmark"): one run with 2 image tags x STEPS steps of 64x64 RGB images,
written by our LogWriter, served by ``python -m visualdl`` in a subprocess of its own.

* first paint: from navigation start (a fresh browser context, empty cache) to both image
  cards showing their newest image (the image element attached after decode, then one
  animation frame); the page loads plotly.js, the app, /api/tags and the index of ALL
  10,000 steps of each tag on the way.
* slider step: moving a card's slider to a random far step (never cached) until that
  step's image is on screen; median and 95th percentile of 40 moves, timed in the page.
  Also the same for 20 moves to the next step (what an arrow key does; the view prefetches
  the neighbours of the shown step), 100 ms apart.
* server RSS after loading, at 1,000 and at 10,000 steps per tag, and after the browser
  session; the blobs stay on disk, so the growth must stay small.

Usage: python bench/media.py [--steps 10000] [--small 1000] [--keep DIR]
Chromium is Debian's /usr/bin/chromium driven by Playwright; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

from visualdl.testing import launch_chromium

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import free_port, rss_mb, stop  # noqa: E402  (bench/server.py: the same helpers)

TAGS = ("samples/input", "samples/output")
TARGETS = {"first_paint_s": 1.0, "slider_ms": 100.0, "rss_growth_mb": 20.0}


def write_logdir(root: Path, steps: int) -> Path:
    """One run, 2 tags x `steps` 64x64 images (a gradient whose shift encodes the step)."""
    from visualdl import LogWriter

    run = root / f"images{steps}"
    if run.exists():
        return root
    base = np.add.outer(np.arange(64), np.arange(64)).astype(np.uint8)
    with LogWriter(logdir=str(run)) as w:
        for step in range(steps):
            for k, tag in enumerate(TAGS):
                img = np.stack([base + step % 256, base * (k + 1), np.full((64, 64), step // 256 % 256)],
                               axis=-1).astype(np.uint8)
                w.add_image(tag, img, step)
    return root


def start_server(logdir: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "visualdl", "--logdir", str(logdir), "--host", "127.0.0.1",
         "--port", str(port), "--reload-interval", "5"],
        cwd=str(REPO), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/api/info", timeout=2) as r:
                if json.loads(r.read())["loaded"]:
                    return proc, url
        except OSError:
            pass
        if proc.poll() is not None:
            raise RuntimeError("the server exited during start-up")
        time.sleep(0.1)
    stop(proc)
    raise TimeoutError("the server did not finish loading in 120 s")


# Records when each card's image element is attached (the view attaches it decoded).
PAINT_PROBE = """
window.__paints = [];
new MutationObserver((muts) => {
  for (const m of muts) for (const n of m.addedNodes) {
    if (n.tagName === 'IMG' && n.parentElement && n.parentElement.classList.contains('image-frame')) {
      requestAnimationFrame(() => window.__paints.push(performance.now()));
    }
  }
}).observe(document, {subtree: true, childList: true});
"""

# Moves card 0's slider to `targets` one by one; resolves with the ms each took to paint.
SLIDER_LOOP = """
async ([targets, pause]) => {
  const card = document.querySelectorAll('.image-card')[0];
  const range = card.querySelector('.step-range');
  const slider = card.querySelector('.step-slider');
  const out = [];
  for (const t of targets) {
    const t0 = performance.now();
    range.value = String(t);
    range.dispatchEvent(new Event('input', {bubbles: true}));
    const step = slider.dataset.step;
    await new Promise((resolve) => {
      const check = () => {
        const img = card.querySelector('.image-frame img');
        if (img && img.dataset.step === step) requestAnimationFrame(() => resolve());
        else setTimeout(check, 1);
      };
      check();
    });
    out.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, pause)); // a user's pace: the prefetch may land
  }
  return out;
}
"""


def browse(url: str, steps: int) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            paints = []
            for _ in range(3):  # fresh context each time: cold cache, like a first visit
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.add_init_script(PAINT_PROBE)
                page.goto(url + "/?tab=images")
                page.wait_for_function("() => window.__paints.length >= 2", timeout=30_000)
                paints.append(page.evaluate("() => window.__paints[1]") / 1000)
                context.close()
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(url + "/?tab=images")
            page.wait_for_selector(".image-card .image-frame img", timeout=30_000)
            # the app warms plotly.js once idle; let that finish so it does not stall a move
            page.wait_for_function("() => typeof Plotly !== 'undefined'", timeout=30_000)
            page.wait_for_timeout(300)
            rng = np.random.default_rng(0)
            far = [int(v) for v in rng.choice(steps, size=40, replace=False)]
            jumps = page.evaluate(SLIDER_LOOP, [far, 20])
            start = steps // 3
            arrows = page.evaluate(SLIDER_LOOP, [list(range(start, start + 21)), 100])[1:]
            context.close()
        finally:
            browser.close()
    return {"paints": paints, "jumps": jumps, "arrows": arrows}


def p95(values: list[float]) -> float:
    return float(np.percentile(values, 95))


def row(name: str, value: float, unit: str, target: str, ok: bool | None) -> str:
    verdict = "" if ok is None else ("PASS" if ok else "MISS")
    return f"| {name} | {value:,.3g} {unit} | {target} | {verdict} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--keep", type=Path, default=None,
                        help="folder to write (and reuse) the logdirs in; default: a temp folder")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="vdl-media-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        results = {}
        for steps in (args.small, args.steps):
            root = work / f"n{steps}"
            t0 = time.perf_counter()
            write_logdir(root, steps)
            print(f"logdir with 2 x {steps:,} images ready in {time.perf_counter() - t0:.1f} s",
                  flush=True)
            proc, url = start_server(root)
            try:
                loaded = rss_mb(proc.pid)
                ui = browse(url, steps) if steps == args.steps else None
                after = rss_mb(proc.pid)
            finally:
                stop(proc)
            results[steps] = {"rss_loaded": loaded, "rss_after_browsing": after, "ui": ui}
        big, small = results[args.steps], results[args.small]
        ui = big["ui"]
        first = statistics.median(ui["paints"])
        jump_med, jump_p95 = statistics.median(ui["jumps"]), p95(ui["jumps"])
        arrow_med = statistics.median(ui["arrows"])
        growth = big["rss_loaded"] - small["rss_loaded"]
        lines = [
            f"images dashboard, 1 run x 2 tags x {args.steps:,} steps of 64x64 "
            f"(RSS compared with {args.small:,} steps)",
            "",
            "| measure | value | target | verdict |",
            "| --- | --- | --- | --- |",
            row("first paint of the images tab (median of 3, cold cache)", first, "s",
                f"<= {TARGETS['first_paint_s']:g} s", first <= TARGETS["first_paint_s"]),
            row("slider step to a random far step, median", jump_med, "ms",
                f"<= {TARGETS['slider_ms']:g} ms", jump_med <= TARGETS["slider_ms"]),
            row("slider step to a random far step, p95", jump_p95, "ms", "", None),
            row("slider step to the next step (prefetched), median", arrow_med, "ms",
                f"<= {TARGETS['slider_ms']:g} ms", arrow_med <= TARGETS["slider_ms"]),
            row(f"server RSS after loading, {args.small:,} steps", small["rss_loaded"], "MB", "", None),
            row(f"server RSS after loading, {args.steps:,} steps", big["rss_loaded"], "MB", "", None),
            row(f"RSS growth {args.small:,} -> {args.steps:,} steps", growth, "MB",
                f"<= {TARGETS['rss_growth_mb']:g} MB", growth <= TARGETS["rss_growth_mb"]),
            row(f"server RSS after the browser session, {args.steps:,} steps",
                big["rss_after_browsing"], "MB", "", None),
        ]
        print("\n".join(lines))
        print("\nfirst paints (s):", ", ".join(f"{v:.3f}" for v in ui["paints"]))
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
