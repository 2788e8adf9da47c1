"""Benchmark of the model graph view against Google's Model Explorer on the same files.

Graphs of 10k, 50k and 100k ops, two kinds: a synthetic residual chain
(``stageS/blockB/op``, 200 blocks of 5 ops per stage, so a stage is a 1,000-op scope) and
a BERT-like transformer exported op by op (``/encoder/layer.3/attention/self/...``), both
built by tests/helpers/onnx_models.py. For each file:

* the server part, in this process: parse (decode, shape inference, flatten), hierarchy +
  the first (collapsed) view as JSON, expanding one scope of ~1,000 ops, and "expand all"
  (layout + the answer's JSON, encoded as the server encodes it);
* ours in Chromium, served by ``python -m visualdl --model FILE`` in a process of its own
  (as a user starts it): first view from opening the tab, pan/zoom frame time from the
  browser's own frame timing (``requestAnimationFrame`` timestamps while one wheel event
  a frame zooms the view), expand that scope and expand all as seen by the page (click to
  drawn), and the page's JS heap (CDP ``Performance.getMetrics``) before and after;
* Model Explorer (``ai-edge-model-explorer`` 0.1.x with ``model-explorer-onnx``, in its
  own venv) served on 127.0.0.1 by a process started here and ended by its PID, in the
  same Chromium: first drawn graph from opening its URL (its WebGL canvas is in the page
  and its "Processing graph" notice is gone), frame time the same way, and its heap.

The hooks read in our page are ``window.__vdlGraph``: ``timings.firstDrawn`` (ms since the
page's time origin when the first view was drawn), ``setExpanded(spec)`` (a promise that
settles once that state is drawn: ``'all'`` or a list of group paths), ``data.nodes``
(what is drawn) and ``progress`` (a pending layout's progress, or null). The wheel events
go to whatever element is drawn at the centre of ``.graph-canvas``, so the bench does
not depend on how the graph is drawn (SVG today, WebGL later).

Run: ``python bench/graph.py [--sizes 10000,50000,100000] [--kinds chain,transformer]
[--peer-timeout 300] [--no-peer] [--repeats 3]``. Each viewer's first view is the median of
``--repeats`` runs, each with a fresh server. Model Explorer's venv is made at /tmp/me-venv
when missing (``python3 -m venv /tmp/me-venv && /tmp/me-venv/bin/pip install
ai-edge-model-explorer model-explorer-onnx``). Headless Chromium draws WebGL in software
(SwiftShader), so both viewers' frame times are software-rendering times.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Iterator

import onnx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout: its tests' ONNX model builders

from tests.helpers import onnx_models  # noqa: E402
from visualdl.api.jsonio import dumps_bytes  # noqa: E402
from visualdl.kinds.graph import GraphDocument, Options  # noqa: E402
from visualdl.kinds.graph.api import view_body  # noqa: E402
from visualdl.kinds.graph.collector import paused  # noqa: E402
from visualdl.kinds.graph.parse import parse_bytes  # noqa: E402
from visualdl.testing import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

ME_VENV = Path("/tmp/me-venv")
WEBGL_ARGS = ["--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist"]
FIRST_VIEW_TARGET = {10_000: 1.5, 50_000: 3.0, 100_000: 6.0}
SCOPE_OPS = 1000
FRAMES = 40
GIVE_UP_MS = 180_000  # an expand not drawn by then is reported as not drawn

FRAME_JS = """async ([x, y, n]) => {
  const target = document.elementFromPoint(x, y);
  const stamps = [];
  for (let i = 0; i < n; i++) {
    target.dispatchEvent(new WheelEvent('wheel', { clientX: x, clientY: y, deltaY: i % 2 ? 60 : -60,
                                                   bubbles: true, cancelable: true }));
    stamps.push(await new Promise((r) => requestAnimationFrame(r)));
  }
  const d = stamps.slice(1).map((t, i) => t - stamps[i]).sort((a, b) => a - b);
  return d[Math.floor(d.length / 2)];
}"""


def build(kind: str, n: int) -> onnx.ModelProto:
    if kind == "chain":
        return onnx_models.residual_chain(n, blocks_per_stage=200)
    return onnx_models.transformer(n)


# -- the server part ---------------------------------------------------------------------------
def scope_of(doc: GraphDocument) -> str:
    """The group whose op count is nearest SCOPE_OPS (a stage of the chain)."""
    groups = [g for p, g in doc.hierarchy.groups.items() if p]
    return min(groups, key=lambda g: (abs(g.ops - SCOPE_OPS), g.path)).path


def scope_state(doc: GraphDocument, path: str) -> list[str]:
    """The initial state plus ``path`` and everything inside it expanded."""
    return sorted(set(doc.initial) | {path, *doc.hierarchy.descendants(path)}
                  | set(doc.hierarchy.chain(path)[1:]))


def answer(view: dict) -> bytes:
    """The view's JSON as the server encodes it (msgspec over plain lists)."""
    return dumps_bytes(view_body("file:0", view))


def server_times(raw: bytes) -> dict:
    t0 = time.perf_counter()
    with paused():
        model = parse_bytes(raw)  # what the server does: inference started on the bytes
    t1 = time.perf_counter()
    with paused():
        doc = GraphDocument(model)
    initial = answer(doc.view(doc.initial, Options()))
    t2 = time.perf_counter()
    scope = scope_of(doc)
    state = doc.expanded_set(scope_state(doc, scope))
    t3 = time.perf_counter()
    answer(doc.view(state, Options()))
    t4 = time.perf_counter()
    everything = doc.view(doc.expanded_set("all"), Options())
    size = len(answer(everything))
    t5 = time.perf_counter()
    return {"ops": model.op_count, "parse": t1 - t0, "first": t2 - t1, "initial_bytes": len(initial),
            "scope": scope, "scope_ops": doc.hierarchy.groups[scope].ops, "expand": t4 - t3,
            "all": t5 - t4, "all_bytes": size, "all_boxes": len(everything["nodes"]),
            "shapes": doc.layouter.computed, "groups": len(doc.hierarchy.groups)}


# -- browsers ----------------------------------------------------------------------------------
def heap_mb(page) -> float:
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    cdp.detach()
    return metrics.get("JSHeapUsedSize", 0.0) / 2**20


def centre(page, selector: str) -> tuple[float, float]:
    box = page.locator(selector).first.bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def open_first_view(context, url: str, model_id: str, timeout_s: float):  # noqa: ANN001, ANN201
    """Open the graph tab; the page, the first view's time (s since the page's time origin)
    and how long the view request waited for its answer."""
    page = context.new_page()
    page.goto(f"{url}/?tab=graph&graph_model={urllib.parse.quote(model_id)}")
    page.wait_for_function("() => window.__vdlGraph && window.__vdlGraph.timings.firstDrawn !== null",
                           timeout=timeout_s * 1000)
    first = page.evaluate("() => window.__vdlGraph.timings.firstDrawn") / 1000
    waited = page.evaluate("() => { const e = performance.getEntriesByType('resource')"
                           ".find((r) => r.name.includes('api/graph/view'));"
                           " return e ? e.responseEnd - e.requestStart : null; }")
    return page, first, (waited or 0) / 1000


def ours_first(browser, url: str, model_id: str, timeout_s: float) -> dict:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        _, first, waited = open_first_view(context, url, model_id, timeout_s)
        return {"first": first, "view_wait": waited}
    finally:
        context.close()


def ours(browser, url: str, model_id: str, scope: list[str], timeout_s: float) -> dict:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page, first, waited = open_first_view(context, url, model_id, timeout_s)
        heap0 = heap_mb(page)
        x, y = centre(page, ".graph-canvas")
        frame = page.evaluate(FRAME_JS, [x, y, FRAMES])
        click_to_drawn = ("async (spec) => { const t = performance.now();"
                          " const drawn = (async () => { await window.__vdlGraph.setExpanded(spec);"
                          " await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));"
                          " return performance.now() - t; })();"
                          f" return Promise.race([drawn, new Promise((r) => setTimeout(() => r(null), {GIVE_UP_MS}))]); }}")
        expand = page.evaluate(click_to_drawn, scope)
        page.evaluate("() => window.__vdlGraph.setExpanded('initial')")
        expand_all = page.evaluate(click_to_drawn, "all")
        if expand_all is None:
            return {"first": first, "view_wait": waited, "frame": frame,
                    "expand": expand / 1000 if expand is not None else None, "all": None,
                    "boxes": 0, "frame_all": None, "heap0": heap0, "heap1": heap_mb(page)}
        boxes = page.evaluate("() => window.__vdlGraph.data.nodes.length")
        frame_all = page.evaluate(FRAME_JS, [x, y, FRAMES // 2])
        heap1 = heap_mb(page)
        return {"first": first, "view_wait": waited, "frame": frame,
                "expand": expand / 1000 if expand is not None else None, "all": expand_all / 1000,
                "boxes": boxes, "frame_all": frame_all, "heap0": heap0, "heap1": heap1}
    finally:
        context.close()


def ensure_model_explorer() -> Path | None:
    exe = ME_VENV / "bin" / "model-explorer"
    if not exe.exists():
        print("making Model Explorer's venv at", ME_VENV, file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(ME_VENV)], check=True)
        subprocess.run([str(ME_VENV / "bin" / "pip"), "install", "-q", "ai-edge-model-explorer",
                        "model-explorer-onnx"], check=True)
    return exe if exe.exists() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served(cmd: list[str], port: int, log_path: Path, ready: str) -> Iterator[str]:
    """Run a viewer's server as a process of its own (as a user starts it) and yield its URL
    once it says it is ready (``ready`` in its output: the address a user opens; ours binds
    its port before its imports, so an accepted connection is not that moment) and accepts
    connections; RuntimeError naming the log when it does not. End it by its PID."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            if not _wait_ready(proc, port, log_path, ready, timeout_s=120):
                raise RuntimeError(f"{Path(cmd[0]).name} did not start serving: see {log_path}")
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()  # its PID only
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_ready(proc: subprocess.Popen, port: int, log_path: Path, ready: str,
                timeout_s: float) -> bool:
    deadline = time.time() + timeout_s
    while time.time() < deadline and proc.poll() is None:
        if ready in log_path.read_text(errors="replace"):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                pass
        time.sleep(0.02)
    return False


def model_explorer(browser, exe: Path, path: Path, timeout_s: float) -> dict:
    port = free_port()
    cmd = [str(exe), str(path), "--host", "127.0.0.1", "--port", str(port),
           "--no_open_in_browser", "--extensions", "model_explorer_onnx"]
    with served(cmd, port, path.with_suffix(".me.log"), "Starting Model Explorer server at") as base:
        data = json.dumps({"models": [{"url": str(path)}]})
        url = f"{base}/?data={urllib.parse.quote(data)}"
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        try:
            page.goto(url)
            try:
                page.wait_for_function(
                    "() => { const c = document.querySelector('canvas.main');"
                    " const busy = document.body.innerText.includes('Processing graph');"
                    " if (c && c.width > 0 && !busy) { window.__drawnAt = window.__drawnAt || performance.now();"
                    " return true; } return false; }", polling="raf", timeout=timeout_s * 1000)
            except Exception:  # noqa: BLE001 - a timeout: not drawn within the limit
                return {"first": None}
            first = page.evaluate("() => window.__drawnAt") / 1000
            heap = heap_mb(page)
            x, y = centre(page, "canvas.main")
            frame = page.evaluate(FRAME_JS, [x, y, FRAMES])
            return {"first": first, "frame": frame, "heap0": heap}
        finally:
            context.close()


# -- table -------------------------------------------------------------------------------------
def fmt(value, unit: str, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f} {unit}"


def median_first(runs: list[dict]) -> dict:
    """The last run's figures with the median first view (and view wait) of all runs;
    ``firsts``: every run's, for the log."""
    out = dict(runs[-1])
    firsts = [r["first"] for r in runs]
    out["firsts"] = firsts
    out["first"] = None if None in firsts else statistics.median(firsts)
    if "view_wait" in out:
        out["view_wait"] = statistics.median(r["view_wait"] for r in runs)
    return out


def ratio(peer, mine) -> str:
    if peer is None or mine is None or mine <= 0:
        return "—"
    return f"{peer / mine:.1f}×"


def main() -> int:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,50000,100000")
    ap.add_argument("--kinds", default="chain,transformer")
    ap.add_argument("--peer-timeout", type=float, default=300.0)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--repeats", type=int, default=3, help="first views timed per viewer and file (median)")
    ap.add_argument("--server-only", action="store_true", help="only the server part, no browser")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    kinds = args.kinds.split(",")
    folder = Path(tempfile.mkdtemp(prefix="vdl-graph-bench-"))
    files, server = [], {}
    for kind in kinds:
        for n in sizes:
            path = folder / f"{kind}{n}.onnx"
            onnx.save(build(kind, n), path)
            files.append((kind, n, path))
            server[path] = server_times(path.read_bytes())
            print(f"server {kind} {n}: {server[path]}", file=sys.stderr)
    if args.server_only:
        print(server_table(files, server))
        return 0
    exe = None if args.no_peer else ensure_model_explorer()
    mine, peer = {}, {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + WEBGL_ARGS)
        for kind, n, path in files:
            with paused():
                doc = GraphDocument(parse_bytes(path.read_bytes()))
            scope = scope_state(doc, server[path]["scope"])
            del doc
            # a process of its own, as Model Explorer gets and as a user starts it, the tab
            # opened as soon as it prints its address: the first view includes the parse
            # (the server starts it at once). The first view is timed args.repeats times
            # (this VM's runs vary by a third); the rest on the last run.
            runs = []
            for run in range(args.repeats):
                port = free_port()
                cmd = [sys.executable, "-m", "visualdl", "--model", str(path),
                       "--host", "127.0.0.1", "--port", str(port)]
                with served(cmd, port, path.with_suffix(".vdl.log"), "serving at") as base:
                    last = run == args.repeats - 1
                    runs.append(ours(browser, base, "file:0", scope, 600) if last
                                else ours_first(browser, base, "file:0", 600))
            mine[path] = median_first(runs)
            print(f"ours {kind} {n}: {mine[path]}", file=sys.stderr)
            if exe is not None:
                runs = [model_explorer(browser, exe, path, args.peer_timeout)]
                while runs[-1]["first"] is not None and len(runs) < args.repeats:
                    runs.append(model_explorer(browser, exe, path, args.peer_timeout))
                peer[path] = median_first(runs)
                print(f"model explorer {kind} {n}: {peer[path]}", file=sys.stderr)
        browser.close()
    lines = [
        "| graph | ops | first view: ours | Model Explorer | ME ÷ ours | target | pan/zoom frame: ours | ME |"
        " expand ~1k scope (server / page) | expand all (server / page, boxes) | heap: ours first → all | ME |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for kind, n, path in files:
        s, m, e = server[path], mine[path], peer.get(path, {})
        target = FIRST_VIEW_TARGET.get(n)
        lines.append(
            f"| {kind} {n // 1000}k | {s['ops']:,} | {fmt(m['first'], 's')} (view answer {m['view_wait']:.2f} s; median of {len(m['firsts'])}) | "
            f"{fmt(e.get('first'), 's') if e else 'not run'}"
            f"{' (not drawn in ' + str(int(args.peer_timeout)) + ' s)' if e and e.get('first') is None else ''} | "
            f"{ratio(e.get('first'), m['first'])} | {'≤ ' + str(target) + ' s' if target else ''} | "
            f"{fmt(m['frame'], 'ms', 1)} | {fmt(e.get('frame'), 'ms', 1)} | "
            f"{s['expand'] * 1000:.0f} ms / {fmt(m['expand'] and m['expand'] * 1000, 'ms', 0)} ({s['scope_ops']} ops) | "
            f"{s['all']:.2f} s / {fmt(m['all'], 's')} ({m['boxes'] or s['all_boxes']:,}) | "
            f"{m['heap0']:.0f} → {m['heap1']:.0f} MB | {fmt(e.get('heap0'), 'MB', 0)} |")
    lines.append("")
    lines.append(server_table(files, server, mine))
    print("\n".join(lines))
    return 0


def server_table(files: list, server: dict, mine: dict | None = None) -> str:
    lines = ["| graph | server: parse | hierarchy + first view | expand ~1k scope | expand all |"
             " first view JSON | expand all JSON | groups (distinct shapes laid out) |"
             " page frame, all expanded |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for kind, n, path in files:
        s, m = server[path], (mine or {}).get(path, {})
        lines.append(f"| {kind} {n // 1000}k | {s['parse']:.2f} s | {s['first']:.2f} s | "
                     f"{s['expand'] * 1000:.0f} ms ({s['scope_ops']} ops) | {s['all']:.2f} s | "
                     f"{s['initial_bytes'] / 1024:.0f} KB | {s['all_bytes'] / 2**20:.1f} MB | "
                     f"{s['groups']:,} ({s['shapes']}) | {fmt(m.get('frame_all'), 'ms', 1)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
