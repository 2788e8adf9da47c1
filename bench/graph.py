"""Benchmark of the model graph view: server parse + layout, and the browser.

Synthetic residual-chain ONNX graphs (MatMul/Add/Relu/MatMul/Add blocks scoped
``stageS/blockB/...``) of 1,000, 5,000 and 10,000 nodes. Measured:

* server: parse (onnx decode + shape inference + flattening), hierarchy, layout of the
  initial (collapsed) view and of the fully expanded graph;
* Chromium (Debian's /usr/bin/chromium, headless): from navigation to the graph tab until
  the first view is drawn and has answered a zoom (server parse and layout included: the
  model is parsed on first request), pan/zoom frame time (median of 20 zoom steps, time
  from the transform change until the next frame), and expanding one collapsed group
  (click to drawn); the same frame time and expand-all time on the fully expanded graph.

Run: ``python bench/graph.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

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
from visualdl.kinds.graph import GraphDocument, Options, parse_bytes  # noqa: E402
from visualdl.testing import launch_chromium  # noqa: E402

SIZES = (1000, 5000, 10000)
TARGET_FIRST_VIEW = 3.0
TARGET_FRAME_MS = 50.0
TARGET_EXPAND_MS = 300.0


def server_times(raw: bytes) -> dict[str, float]:
    t0 = time.perf_counter()
    model = parse_bytes(raw)
    t1 = time.perf_counter()
    doc = GraphDocument(model)
    t2 = time.perf_counter()
    initial = doc.view(doc.initial, Options())
    t3 = time.perf_counter()
    full = doc.view(doc.expanded_set("all"), Options())
    t4 = time.perf_counter()
    return {"parse": t1 - t0, "hierarchy": t2 - t1, "initial": t3 - t2, "full": t4 - t3,
            "initial_nodes": len(initial["nodes"]), "full_nodes": len(full["nodes"])}


def browser_times(page, url: str, model_id: str) -> dict[str, float]:
    page.goto(f"{url}?tab=graph&graph_model={model_id}")
    page.wait_for_function("() => window.__vdlGraph && window.__vdlGraph.svg.dataset.state === 'ready'",
                           timeout=60000)
    first = page.evaluate("async () => { await window.__vdlGraph.zoomFrame(1.05);"
                          " return performance.now() / 1000; }")
    frames = page.evaluate("async () => { const out = []; for (let i = 0; i < 20; i++)"
                           " out.push(await window.__vdlGraph.zoomFrame(i % 2 ? 0.9 : 1.1));"
                           " return out; }")
    group = page.evaluate("() => (window.__vdlGraph.data.nodes.find(n => n.type === 'group') || {}).path")
    expand = page.evaluate(
        "async (path) => { const t = performance.now();"
        " await window.__vdlGraph.toggleGroup(path, true);"
        " await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));"
        " return performance.now() - t; }", group)
    expand_all = page.evaluate(
        "async () => { const t = performance.now(); await window.__vdlGraph.setExpanded('all');"
        " await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));"
        " return performance.now() - t; }")
    drawn = page.evaluate("() => Number(document.querySelector('svg.graph-svg').dataset.nodes)")
    full_frames = page.evaluate("async () => { const out = []; for (let i = 0; i < 10; i++)"
                                " out.push(await window.__vdlGraph.zoomFrame(i % 2 ? 0.9 : 1.1));"
                                " return out; }")
    fit_frames = page.evaluate("async () => { await window.__vdlGraph.fit(); const out = [];"
                               " for (let i = 0; i < 6; i++)"
                               " out.push(await window.__vdlGraph.zoomFrame(i % 2 ? 0.9 : 1.1));"
                               " return out; }")
    in_doc = page.evaluate("() => document.querySelectorAll('svg.graph-svg .nodes g.node').length")
    return {"first": first, "frame": statistics.median(frames), "expand": expand,
            "expand_all": expand_all, "full_frame": statistics.median(full_frames),
            "fit_frame": statistics.median(fit_frames), "drawn_full": drawn, "in_doc": in_doc}


def row(name: str, value: str, target: str = "", ok: bool | None = None) -> str:
    verdict = "" if ok is None else ("PASS" if ok else "MISS")
    return f"| {name} | {value} | {target} | {verdict} |"


def main() -> int:
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="vdl-graph-bench-"))
    paths, server_rows = [], {}
    for n in SIZES:
        model = onnx_models.residual_chain(n)
        path = folder / f"chain{n}.onnx"
        onnx.save(model, path)
        paths.append(path)
        server_rows[n] = server_times(path.read_bytes())
    server = start_server(models=paths)
    results = {}
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            for i, n in enumerate(SIZES):
                context = browser.new_context(viewport={"width": 1400, "height": 900})
                page = context.new_page()
                results[n] = browser_times(page, server.url, f"file:{i}")
                context.close()
            browser.close()
    finally:
        server.stop()
    lines = ["| measurement | value | target | |", "| --- | --- | --- | --- |"]
    for n in SIZES:
        s, b = server_rows[n], results[n]
        lines += [
            row(f"{n:,} nodes: server parse (decode + shape inference + flatten)", f"{s['parse']:.3f} s"),
            row(f"{n:,} nodes: server hierarchy + initial layout ({s['initial_nodes']} boxes)",
                f"{s['hierarchy'] + s['initial']:.3f} s"),
            row(f"{n:,} nodes: server layout, everything expanded ({s['full_nodes']} boxes)",
                f"{s['full']:.3f} s"),
            row(f"{n:,} nodes: Chromium, open to first interactive view", f"{b['first']:.2f} s",
                f"≤ {TARGET_FIRST_VIEW:.0f} s" if n == 10000 else "",
                b["first"] <= TARGET_FIRST_VIEW if n == 10000 else None),
            row(f"{n:,} nodes: pan/zoom frame (median of 20)", f"{b['frame']:.1f} ms",
                f"≤ {TARGET_FRAME_MS:.0f} ms", b["frame"] <= TARGET_FRAME_MS),
            row(f"{n:,} nodes: expand one group", f"{b['expand']:.0f} ms",
                f"≤ {TARGET_EXPAND_MS:.0f} ms", b["expand"] <= TARGET_EXPAND_MS),
            row(f"{n:,} nodes: expand all ({b['drawn_full']:,} boxes drawn)", f"{b['expand_all'] / 1000:.2f} s"),
            row(f"{n:,} nodes: pan/zoom frame, everything expanded (median of 10)",
                f"{b['full_frame']:.1f} ms", f"≤ {TARGET_FRAME_MS:.0f} ms",
                b["full_frame"] <= TARGET_FRAME_MS),
            row(f"{n:,} nodes: pan/zoom frame, everything expanded, fit to screen "
                f"({b['in_doc']:,} boxes in the document; median of 6)",
                f"{b['fit_frame']:.1f} ms", f"≤ {TARGET_FRAME_MS:.0f} ms",
                b["fit_frame"] <= TARGET_FRAME_MS),
        ]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
