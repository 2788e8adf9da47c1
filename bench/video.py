"""Video and 3-D benchmark (issue 25, "Targets"), all in one run:

* caller's cost: ``LogWriter.add_video`` of 16 frames of 64x64 RGB against ``add_image`` of
  the same pixels (the 16 frames as one NHWC batch), each call timed in the caller's thread
  (encoding happens in the writer's); median of ``--calls`` calls each. Target: at most 2x.
* Video view, 2 runs x 100 steps of that video, served by ``python -m visualdl`` in a
  subprocess, driven in headless Chromium: first frames (from clicking the Video tab in the
  app open on the Images tab until both cards' newest video has its first frame,
  ``readyState >= 2``; a fresh browser context, empty cache) and a slider step (a card's
  slider moved to a random far step until that step's video has its first frame), median
  and 95th percentile. Targets: 300 ms and 50 ms. A whole page load on the Video tab is
  timed too, against the same on the Images tab (the same steps as images) as a baseline.
* 3D view: one point cloud of 1,000,000 points, from navigation start to its subsample
  (100,000 points) drawn. Target 1.5 s. The server's answer alone is timed too.

WebGL in headless Chromium is drawn in software (SwiftShader) here, so the 3-D figure is a
bound on a machine without a GPU; a browser on a GPU draws faster.

Usage: python bench/video.py [--calls 200] [--steps 100] [--points 1000000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from media import start_server  # noqa: E402  (bench/media.py: a server in a subprocess)
from server import stop  # noqa: E402

from visualdl import LogWriter  # noqa: E402
from visualdl.testing import launch_chromium  # noqa: E402

TARGETS = {"caller_ratio": 2.0, "first_frame_ms": 300.0, "slider_ms": 50.0,
           "mesh_first_draw_s": 1.5}
RUNS = ("a", "b")


def clip(step: int) -> np.ndarray:
    frames = np.zeros((16, 64, 64, 3), np.uint8)
    frames[..., 0] = np.arange(16)[:, None, None] * 16
    frames[..., 1] = step % 256
    frames[..., 2] = np.add.outer(np.arange(64), np.arange(64))[None] % 256
    return frames


def caller_cost(calls: int, root: Path) -> dict:
    """Median seconds per call of add_video and add_image (same pixels), caller's thread."""
    frames = clip(0)
    out = {}
    for name in ("add_image", "add_video"):
        times = []
        with LogWriter(logdir=str(root / f"caller_{name}")) as w:
            for step in range(calls):
                t = time.perf_counter()
                if name == "add_video":
                    w.add_video("v", frames, step, fps=8)
                else:
                    w.add_image("v", frames, step, dataformats="NHWC")
                times.append(time.perf_counter() - t)
        out[name] = statistics.median(times)
    return out


def write_logdir(root: Path, steps: int, points: int) -> Path:
    logdir = root / "logs"
    for run in RUNS:
        with LogWriter(logdir=str(logdir / run)) as w:
            for step in range(steps):
                w.add_video("clip", clip(step), step, fps=8)
                w.add_image("still", clip(step)[0], step)  # the baseline: the Images tab
    with LogWriter(logdir=str(logdir / "cloud")) as w:
        rng = np.random.default_rng(0)
        w.add_mesh("points", rng.normal(size=(points, 3)), 0,
                   colors=rng.integers(0, 256, (points, 3), dtype=np.uint8))
        w.add_mesh("small", rng.normal(size=(1000, 3)), 0,  # the baseline: WebGL's floor
                   colors=rng.integers(0, 256, (1000, 3), dtype=np.uint8))
    return logdir


FIRST_FRAMES = """(runs) => runs.every((r) => { const c = document.querySelector(
  `.card[data-run="${r}"][data-tag="clip"]`); const v = c && c.querySelector('video');
  return c && c.dataset.shown === c.dataset.total - 1 + '' && v && v.readyState >= 2; })"""
FIRST_IMAGES = """(runs) => runs.every((r) => { const c = document.querySelector(
  `.card[data-run="${r}"][data-tag="still"]`); const i = c && c.querySelector('.image-frame img');
  return c && i && i.dataset.step === c.dataset.total - 1 + ''; })"""

MOVE = """async ([step, total]) => {
  const card = document.querySelector('.card[data-run="a"][data-tag="clip"]');
  const range = card.querySelector('.step-range'); const video = card.querySelector('video');
  const t0 = performance.now();
  range.value = String(step); range.dispatchEvent(new Event('input', {bubbles: true}));
  await new Promise((resolve) => { const check = () => (card.dataset.shown === String(step)
    && video.readyState >= 2 ? resolve() : requestAnimationFrame(check)); check(); });
  return performance.now() - t0; }"""


def first_paint(browser, url: str, query: str, done: str) -> float:
    """Milliseconds from navigation start (a fresh context: empty cache) until ``done``."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(url + query)
        page.wait_for_function(done, arg=list(RUNS), timeout=60_000, polling="raf")
        return page.evaluate("() => performance.now()")
    finally:
        context.close()


SWITCH = """async ([tab, done, runs]) => { const ready = new Function('runs', `return (${done})(runs)`);
  const t0 = performance.now(); document.getElementById(`tab-${tab}`).click();
  await new Promise((resolve) => { const check = () => (ready(runs) ? resolve()
    : requestAnimationFrame(check)); check(); });
  return performance.now() - t0; }"""


def tab_switch(browser, url: str, start: str, start_done: str, tab: str, done: str) -> float:
    """Milliseconds from clicking ``tab`` in an app open on ``start`` until ``done``."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(url + start)
        page.wait_for_function(start_done, arg=list(RUNS), timeout=60_000)
        return page.evaluate(SWITCH, [tab, done, list(RUNS)])
    finally:
        context.close()


def browse_video(url: str, steps: int) -> dict:
    from playwright.sync_api import sync_playwright

    firsts, images, moves, switches = [], [], [], []
    rng = np.random.default_rng(1)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            for _ in range(3):  # alternated, so both see the same load
                firsts.append(first_paint(browser, url, "/?tab=video&videoTags=clip",
                                          FIRST_FRAMES))
                images.append(first_paint(browser, url, "/?tab=images&imagesTags=still",
                                          FIRST_IMAGES))
                switches.append(tab_switch(browser, url, "/?tab=images&imagesTags=still&"
                                           "videoTags=clip", FIRST_IMAGES, "video",
                                           FIRST_FRAMES))
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(url + "/?tab=video&videoTags=clip")
            page.wait_for_function(FIRST_FRAMES, arg=list(RUNS), timeout=60_000)
            for step in rng.choice(steps - 1, 30, replace=False):
                moves.append(page.evaluate(MOVE, [int(step), steps]))
        finally:
            browser.close()
    return {"first_frame_ms": statistics.median(firsts), "first_image_ms": statistics.median(images),
            "switch_ms": statistics.median(switches),
            "slider_ms": statistics.median(moves),
            "slider_p95_ms": float(np.percentile(moves, 95))}


def browse_mesh(url: str) -> dict:
    from playwright.sync_api import sync_playwright

    t = time.perf_counter()
    with urllib.request.urlopen(url + "/api/meshes/data?run=cloud&tag=points&step=0") as r:
        r.read()
    server_s = time.perf_counter() - t
    drawn = {}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            for tag in ("small", "points"):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.goto(url + f"/?tab=mesh&meshTags=^{tag}$")
                page.wait_for_selector(f'.card[data-tag="{tag}"][data-shown="0"]',
                                       timeout=300_000)
                # drawn: two animation frames after plotly's promise resolved
                page.evaluate("() => new Promise((r) => requestAnimationFrame(() => "
                              "requestAnimationFrame(r)))")
                drawn[tag] = page.evaluate("() => performance.now()") / 1000
                context.close()
        finally:
            browser.close()
    return {"mesh_first_draw_s": drawn["points"], "mesh_small_s": drawn["small"],
            "mesh_server_s": server_s}


def row(name: str, value: str, target: str, ok: bool | None) -> str:
    verdict = "" if ok is None else ("ok" if ok else "MISSED")
    return f"| {name:<52} | {value:>10} | {target:>8} | {verdict:<6} |"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--keep", help="write the logs here and keep them")
    args = ap.parse_args(argv)
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="vdl-bench-video-"))
    try:
        cost = caller_cost(args.calls, root)
        logdir = write_logdir(root, args.steps, args.points)
        proc, url = start_server(logdir)
        try:
            video = browse_video(url, args.steps)
            mesh = browse_mesh(url)
        finally:
            stop(proc)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    ratio = cost["add_video"] / cost["add_image"]
    print(f"| {'measure':<52} | {'value':>10} | {'target':>8} | {'':<6} |")
    print(f"|{'-' * 54}|{'-' * 12}|{'-' * 10}|{'-' * 8}|")
    print(row("add_image, 16x64x64x3 as NHWC (caller, median)", f"{cost['add_image'] * 1e6:.0f} us", "", None))
    print(row("add_video, 16 frames 64x64 (caller, median)", f"{cost['add_video'] * 1e6:.0f} us", "", None))
    print(row("add_video / add_image", f"{ratio:.2f}x", "<= 2x", ratio <= TARGETS["caller_ratio"]))
    print(row(f"Video tab opened: first frames, {args.steps} steps x 2 runs",
              f"{video['switch_ms']:.0f} ms", "300 ms", video["switch_ms"] <= TARGETS["first_frame_ms"]))
    print(row("Page load on the Images tab: first images (baseline)",
              f"{video['first_image_ms']:.0f} ms", "", None))
    print(row("Page load on the Video tab: first frames", f"{video['first_frame_ms']:.0f} ms",
              "", None))
    print(row("Video view: slider step (median)", f"{video['slider_ms']:.1f} ms", "50 ms",
              video["slider_ms"] <= TARGETS["slider_ms"]))
    print(row("Video view: slider step (p95)", f"{video['slider_p95_ms']:.1f} ms", "", None))
    print(row(f"3D: {args.points:,} points, server answer (100k)", f"{mesh['mesh_server_s']:.2f} s", "", None))
    print(row("3D: 1,000 points, first draw (baseline)", f"{mesh['mesh_small_s']:.2f} s", "", None))
    print(row(f"3D: {args.points:,} points, first draw", f"{mesh['mesh_first_draw_s']:.2f} s",
              "1.5 s", mesh["mesh_first_draw_s"] <= TARGETS["mesh_first_draw_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
