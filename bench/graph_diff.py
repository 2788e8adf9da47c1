"""Benchmark of the model diff: two 50,000-node models, server side and in the browser.

The models are bench/graph.py's synthetic residual chain (MatMul/Add/Relu/MatMul/Add blocks
scoped ``stageS/blockB/...``) and an edited copy of it: every 7th op renamed in its scope
(matched by structure), the Relu of every 500th block turned into a LeakyRelu, the first
MatMul's weight changed and the last op (a residual Add) removed. Measured:

* server: parsing each model (onnx decode + shape inference + flattening, done once per
  model and cached), ``diff_models`` alone, opening both models on a fresh server, and
  ``GET /api/graph/diff`` once the diff is cached;
* Chromium (both models open on the server, the diff not yet computed): from "Compare
  with…" until the diff's summary, the list of changed ops, the other model's drawing and
  the colours of both are on screen.

Run: ``python bench/graph_diff.py`` (a few minutes on 2 cores).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout: its tests' ONNX model builders

from tests.helpers import onnx_models  # noqa: E402
from visualdl.kinds.graph.diff import diff_models  # noqa: E402
from visualdl.kinds.graph.parse import parse_bytes  # noqa: E402
from visualdl.server.background import start_server  # noqa: E402

NODES = 50_000
TARGET_S = 4.0


def edited(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, int]]:
    """A copy with ops renamed, retyped, a weight changed and the last op removed."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes = out.graph.node
    renamed = retyped = 0
    for i, node in enumerate(nodes):
        if node.op_type == "Relu" and i % 2500 == 2:
            node.op_type = "LeakyRelu"
            node.attribute.append(helper.make_attribute("alpha", 0.1))
            retyped += 1
        elif i % 7 == 0:  # renamed in its scope (an exporter's naming changed)
            node.name = f"{node.name.rsplit('/', 1)[0]}/renamed_{i}"
            renamed += 1
    last = nodes[-1]
    del nodes[-1]
    out.graph.output[0].name = last.input[0]
    w = numpy_helper.to_array(next(t for t in out.graph.initializer if t.name == "w"))
    out.graph.initializer.append(numpy_helper.from_array((w * 2).astype(np.float32), "w2"))
    nodes[0].input[1] = "w2"
    return out, {"renamed": renamed, "retyped": retyped}


def http_diff(url: str, session) -> tuple[float, dict]:
    t = time.perf_counter()
    response = session.get(f"{url}/api/graph/diff", params={"model": "file:0", "other": "file:1"},
                           timeout=600)
    elapsed = time.perf_counter() - t
    response.raise_for_status()
    return elapsed, response.json()


def browser_time(url: str) -> float | None:
    """Seconds from choosing the other model to the diff drawn (None: no Playwright)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    from visualdl.testing import launch_chromium

    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}?tab=graph&graph_model=file:0")
        page.wait_for_function("() => window.__vdlGraph && window.__vdlGraph.svg.dataset.state"
                               " === 'ready'", timeout=300000)
        seconds = page.evaluate("async () => { const t = performance.now();"
                                " await window.__vdlGraph.compareWith('file:1');"
                                " await new Promise(r => requestAnimationFrame(() =>"
                                " requestAnimationFrame(r)));"
                                " return (performance.now() - t) / 1000; }")
        browser.close()
    return seconds


def main() -> int:
    import requests

    base = onnx_models.residual_chain(NODES)
    other, edits = edited(base)
    folder = Path(tempfile.mkdtemp(prefix="vdl-graph-diff-bench-"))
    paths = [folder / "before.onnx", folder / "after.onnx"]
    for model, path in zip((base, other), paths):
        onnx.save(model, path)
    t0 = time.perf_counter()
    a = parse_bytes(paths[0].read_bytes())
    t1 = time.perf_counter()
    b = parse_bytes(paths[1].read_bytes())
    t2 = time.perf_counter()
    body = diff_models(a, b)
    t3 = time.perf_counter()
    server = start_server(models=paths)
    try:
        with requests.Session() as session:
            t = time.perf_counter()
            for model in ("file:0", "file:1"):
                session.get(f"{server.url}/api/graph/summary", params={"model": model},
                            timeout=600).raise_for_status()
            opened = time.perf_counter() - t
            drawn = browser_time(server.url)  # the diff is computed on this request
            warm, answer = http_diff(server.url, session)
    finally:
        server.stop()
    c = body["summary"]["counts"]
    ok = t3 - t2 <= TARGET_S
    rows = [
        ("ops before / after", f"{a.op_count:,} / {b.op_count:,}", "", ""),
        ("edits: renamed / retyped / weights changed / removed",
         f"{edits['renamed']:,} / {edits['retyped']} / 1 / 1", "", ""),
        ("diff: matched by name / by structure",
         f"{c['matched_by_name']:,} / {c['matched_by_structure']:,}", "", ""),
        ("diff: changed / removed / added / unchanged",
         f"{c['changed']:,} / {c['removed']:,} / {c['added']:,} / {c['unchanged']:,}", "", ""),
        ("server: parse before (decode + shape inference + flatten)", f"{t1 - t0:.2f} s", "", ""),
        ("server: parse after", f"{t2 - t1:.2f} s", "", ""),
        ("server: diff_models (both parsed)", f"{t3 - t2:.2f} s", f"≤ {TARGET_S:.0f} s",
         "PASS" if ok else "MISS"),
        ("HTTP: open both models on a fresh server (parse + hierarchy, each once)",
         f"{opened:.2f} s", "", ""),
        ("HTTP /api/graph/diff again (cached)", f"{warm:.3f} s", "", ""),
        ("answer size (JSON)", f"{len(json.dumps(answer)) / 1e3:.1f} kB", "", ""),
    ]
    if drawn is not None:
        rows.append(("Chromium: Compare with… to diff drawn (the diff computed, the other"
                     " model's initial view laid out and drawn, list, summary, colours)",
                     f"{drawn:.2f} s", f"≤ {TARGET_S:.0f} s",
                     "PASS" if drawn <= TARGET_S else "MISS"))
    print("| measurement | value | target | |\n| --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
