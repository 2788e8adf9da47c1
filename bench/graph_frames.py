"""Frame times and first draw of the graph view's two renderers: WebGL2 (graph/glcanvas.js)
against SVG (graph/canvas.js), same graphs, same run, headless Chromium (software WebGL:
SwiftShader on the CPU, as every headless run here).

Synthetic residual chains of 10,000, 50,000 and 100,000 ops (tests/helpers/onnx_models.py).
For each size: first the app as it is (``graph_renderer=auto``: the collapsed first view is
small and drawn as SVG, "expand all" switches to WebGL), on a cold server; then the peer,
SVG throughout (``graph_renderer=svg``), on the same server, warm:

* first view: from navigation start (performance.timeOrigin) until the first view is drawn
  (the model opens collapsed by scope; server parse and layout included on the cold run);
* expand all: click to drawn, and the drawing's own part of it (stage.drawMs: building the
  typed arrays and uploading them, or building the SVG);
* pan/zoom frames: the browser's own frame timing, i.e. the intervals between
  requestAnimationFrame timestamps while every frame pans and zooms a little (60 frames),
  median and 90th percentile, at reading zoom (k = 1) and far out (k = 0.02);
* memory: resident memory of the page's renderer process and of the GPU process (which runs
  SwiftShader), read from /proc for the processes Chromium reports (SystemInfo), and the JS
  heap in use.

The server's layout is the ``layout`` side's (bench/graph.py measures it): here it is part of
"first view" and "expand all" only. Run: ``python bench/graph_frames.py [--sizes 10000,50000]
[--svg-max 50000]`` (several minutes on 2 cores: the 100k layout alone takes a while).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout: its tests' ONNX model builders

from tests.helpers import onnx_models  # noqa: E402
from visualdl.server.background import start_server  # noqa: E402
from visualdl.testing import launch_chromium  # noqa: E402

FRAMES = 60
PAN_LOOP = """async ([n, k]) => {
  const c = window.__vdlGraph.canvas; const data = c.data;
  const mid = data.nodes[Math.floor(data.nodes.length / 2)];
  const r = c.active.element.getBoundingClientRect();
  await c.pz.set(k, r.width / 2 - (mid.x + mid.w / 2) * k, r.height / 2 - (mid.y + mid.h / 2) * k);
  await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
  const times = [];
  return new Promise((resolve) => {
    let last = null; let i = 0;
    const step = (t) => {
      if (last !== null) times.push(t - last);
      last = t;
      if (i >= n) { resolve(times); return; }
      i += 1;
      const pz = c.pz;
      pz.zoomAt(i % 2 ? 1.03 : 1 / 1.03, r.width / 2, r.height / 2);
      pz.panBy(i % 20 < 10 ? 7 : -7, 4);
      requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  });
}"""


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def memory(browser, page) -> dict[str, float]:
    cdp = browser.new_browser_cdp_session()
    info = cdp.send("SystemInfo.getProcessInfo")["processInfo"]
    renderers = [p["id"] for p in info if p["type"] == "renderer"]
    gpu = [p["id"] for p in info if p["type"] == "GPU"]
    metrics = page.context.new_cdp_session(page)
    metrics.send("Performance.enable")
    heap = next(m["value"] for m in metrics.send("Performance.getMetrics")["metrics"] if m["name"] == "JSHeapUsedSize")
    # one page per context at a time: the biggest renderer is this page's
    return {"renderer": max((rss_mb(p) for p in renderers), default=float("nan")),
            "gpu": sum(rss_mb(p) for p in gpu), "heap": heap / 2**20}


def measure(browser, url: str, model: str, renderer: str, nodes: int) -> dict:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(600_000)
    try:
        page.goto(f"{url}/?tab=graph&graph_model={model}&graph_renderer={renderer}")
        page.wait_for_function("() => window.__vdlGraph && window.__vdlGraph.svg.dataset.state === 'ready'")
        first = page.evaluate("() => window.__vdlGraph.timings.firstDrawn") / 1000
        t0 = time.perf_counter()
        page.click("#graph-expand-all")
        page.wait_for_function(
            f"() => window.__vdlGraph.svg.dataset.nodes === '{nodes}' && window.__vdlGraph.svg.dataset.state === 'ready'")
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        expand = time.perf_counter() - t0
        drawn_by = page.evaluate("() => window.__vdlGraph.renderer")
        draw_ms = page.evaluate("() => window.__vdlGraph.canvas.drawMs")
        out = {"first": first, "expand": expand, "draw": draw_ms, "renderer": drawn_by}
        for name, k in (("near", 1.0), ("far", 0.02)):
            times = page.evaluate(PAN_LOOP, [FRAMES, k])
            times.sort()
            out[name] = (statistics.median(times), times[int(len(times) * 0.9)])
        out["memory"] = memory(browser, page)
        return out
    finally:
        context.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,50000,100000")
    parser.add_argument("--svg-max", type=int, default=50000, help="largest size drawn with SVG too")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="vdl-graph-frames-"))
    paths = []
    for n in sizes:
        path = folder / f"chain{n}.onnx"
        onnx.save(onnx_models.residual_chain(n), path)
        paths.append(path)
    server = start_server(models=paths)
    rows = []
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            for i, n in enumerate(sizes):
                shown = n + 2  # the ops, the graph's input and output
                for renderer in ("auto", "svg"):
                    if renderer == "svg" and n > args.svg_max:
                        continue
                    r = measure(browser, server.url, f"file:{i}", renderer, shown)
                    rows.append((n, renderer, r))
                    print(f"{n} {renderer}: {r}", file=sys.stderr, flush=True)
            browser.close()
    finally:
        server.stop()
    print("| ops | drawn by | first view | expand all (drawing's part) | frame k=1 median / p90 "
          "| frame k=0.02 median / p90 | renderer RSS | GPU process RSS | JS heap |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n, renderer, r in rows:
        m = r["memory"]
        print(f"| {n:,} | {r['renderer']} | {r['first']:.2f} s | {r['expand']:.1f} s ({r['draw'] / 1000:.2f} s) "
              f"| {r['near'][0]:.1f} / {r['near'][1]:.1f} ms | {r['far'][0]:.1f} / {r['far'][1]:.1f} ms "
              f"| {m['renderer']:.0f} MB | {m['gpu']:.0f} MB | {m['heap']:.0f} MB |")
    by = {(n, r): v for n, r, v in rows}
    for n in sizes:
        if (n, "svg") in by:
            gl, svg = by[(n, "auto")], by[(n, "svg")]
            print(f"{n:,} ops, SVG/WebGL ratio of median frame: k=1 {svg['near'][0] / gl['near'][0]:.1f}x, "
                  f"k=0.02 {svg['far'][0] / gl['far'][0]:.1f}x; of drawing time {svg['draw'] / gl['draw']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
