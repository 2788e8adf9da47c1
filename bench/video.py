"""Video and 3-D benchmark (issue 25, "Targets"), all in one run:

* caller's cost: ``LogWriter.add_video`` of 16 frames of 64x64 RGB against ``add_image`` of
  the same pixels (the 16 frames as one NHWC batch), each call timed in the caller's thread
  (encoding happens in the writer's); median of ``--calls`` calls each. Target: at most 2x.
* Video view, 2 runs x 100 steps of that video, served by ``python -m visualdl`` in a
  subprocess, driven in headless Chromium: first frame (navigation start to both cards'
  newest video having its first frame, ``readyState >= 2``; a fresh browser context, empty
  cache) and a slider step (a card's slider moved to a random far step until that step's
  video has its first frame), median and 95th percentile. Targets: 300 ms and 50 ms.
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
    with LogWriter(logdir=str(logdir / "cloud")) as w:
        rng = np.random.default_rng(0)
        w.add_mesh("points", rng.normal(size=(points, 3)), 0,
                   colors=rng.integers(0, 256, (points, 3), dtype=np.uint8))
    return logdir


FIRST_FRAMES = """(runs) => runs.every((r) => { const c = document.querySelector(
  `.card[data-run="${r}"][data-tag="clip"]`); const v = c && c.querySelector('video');
  return c && c.dataset.shown === c.dataset.total - 1 + '' && v && v.readyState >= 2; })"""

MOVE = """async ([step, total]) => {
  const card = document.querySelector('.card[data-run="a"][data-tag="clip"]');
  const range = card.querySelector('.step-range'); const video = card.querySelector('video');
  const t0 = performance.now();
  range.value = String(step); range.dispatchEvent(new Event('input', {bubbles: true}));
  await new Promise((resolve) => { const check = () => (card.dataset.shown === String(step)
    && video.readyState >= 2 ? resolve() : requestAnimationFrame(check)); check(); });
  return performance.now() - t0; }"""


def browse_video(url: str, steps: int) -> dict:
    from playwright.sync_api import sync_playwright

    firsts, moves = [], []
    rng = np.random.default_rng(1)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            for _ in range(3):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.goto(url + "/?tab=video")
                page.wait_for_function(FIRST_FRAMES, arg=list(RUNS), timeout=60_000,
                                       polling="raf")
                firsts.append(page.evaluate("() => performance.now()"))
                context.close()
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(url + "/?tab=video")
            page.wait_for_function(FIRST_FRAMES, arg=list(RUNS), timeout=60_000)
            for step in rng.choice(steps - 1, 30, replace=False):
                moves.append(page.evaluate(MOVE, [int(step), steps]))
        finally:
            browser.close()
    return {"first_frame_ms": statistics.median(firsts), "slider_ms": statistics.median(moves),
            "slider_p95_ms": float(np.percentile(moves, 95))}


def browse_mesh(url: str) -> dict:
    from playwright.sync_api import sync_playwright

    t = time.perf_counter()
    with urllib.request.urlopen(url + "/api/meshes/data?run=cloud&tag=points&step=0") as r:
        r.read()
    server_s = time.perf_counter() - t
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url + "/?tab=mesh")
            page.wait_for_selector('.card[data-run="cloud"][data-shown="0"]', timeout=300_000)
            drawn = page.evaluate("() => performance.now()") / 1000
        finally:
            browser.close()
    return {"mesh_first_draw_s": drawn, "mesh_server_s": server_s}


def row(name: str, value: str, target: str, ok: bool | None) -> str:
    verdict = "" if ok is None else ("ok" if ok else "MISSED")
    return f"| {name:<44} | {value:>12} | {target:>8} | {verdict:<6} |"


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
    print(f"| {'measure':<44} | {'value':>12} | {'target':>8} | {'':<6} |")
    print(f"|{'-' * 46}|{'-' * 14}|{'-' * 10}|{'-' * 8}|")
    print(row("add_image, 16x64x64x3 as NHWC (caller, median)", f"{cost['add_image'] * 1e6:.0f} us", "", None))
    print(row("add_video, 16 frames 64x64 (caller, median)", f"{cost['add_video'] * 1e6:.0f} us", "", None))
    print(row("add_video / add_image", f"{ratio:.2f}x", "<= 2x", ratio <= TARGETS["caller_ratio"]))
    print(row(f"Video view: first frame, {args.steps} steps x 2 runs", f"{video['first_frame_ms']:.0f} ms",
              "300 ms", video["first_frame_ms"] <= TARGETS["first_frame_ms"]))
    print(row("Video view: slider step (median)", f"{video['slider_ms']:.1f} ms", "50 ms",
              video["slider_ms"] <= TARGETS["slider_ms"]))
    print(row("Video view: slider step (p95)", f"{video['slider_p95_ms']:.1f} ms", "", None))
    print(row(f"3D: {args.points:,} points, server answer (100k)", f"{mesh['mesh_server_s']:.2f} s", "", None))
    print(row(f"3D: {args.points:,} points, first draw", f"{mesh['mesh_first_draw_s']:.2f} s",
              "1.5 s", mesh["mesh_first_draw_s"] <= TARGETS["mesh_first_draw_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
