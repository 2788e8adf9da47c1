"""Profiler benchmark: a generated trace of 1,000,000 events in the profiler dashboard, in
headless Chromium, against the old approach (the whole trace JSON sent to the browser and
parsed there, as VisualDL 2.x's profiler and chrome://tracing-style viewers do).

Workload: one run holding ``bench.<ts>.pt.trace.json`` (the file name PyTorch's
tensorboard_trace_handler writes) with EVENTS complete events in our recorder's categories:
steps of data loading, forward and backward spans around nested operators (each with a
child), an optimizer span, and memory events. Served by ``python -m visualdl`` in a
subprocess of its own, each measurement on a fresh server (the trace not yet parsed).

* first timeline view: navigation start (fresh browser context) to the timeline canvas
  drawn with the server's first window (target <= 2 s). The server parses the newest
  profile in the background as soon as it finds it; measured with the tab opened
  ``--settle`` seconds after start-up (warmed), and ``--cold`` times with the tab opened as
  soon as the server has found the trace: on a first start (an empty disk cache, the parse
  included: the target's case) and on a restart (the model an earlier server saved in
  the disk cache, ``VISUALDL_CACHE_DIR``). Each server gets a cache folder of its own.
* pan/zoom frame: a W, S, A or D key on the canvas until the frame under the new window is
  drawn (the last answer redrawn at once; target <= 50 ms), and until the window the server
  sends for it is drawn (the refetch).
* responsiveness: while each tab loads (the trace being parsed, on a cold start), the
  slowest answer to ``/api/runs`` polled every 50 ms from another connection (a page's other
  requests, which a parse holding the server's interpreter lock would hold up).
* server RSS after the views were used (target <= 600 MB).
* old approach: fetch the whole trace and JSON.parse it in the page (time, and the page's JS
  heap after); drawing it would only add to that.

* stages (``--stages``): the server's cold path in a fresh interpreter, each stage timed:
  imports, read, parse (JSON decode into columns), model (sort, nesting, classification),
  the first timeline window, the overview; and whether Numba had to be imported.
  With ``--epoch`` the trace's times are Unix-epoch microseconds (about 1.7e15, as newer
  Kineto writes them), which the parse reads exactly (Decimals, less a base): its cost.

``--checkout DIR`` (repeatable) measures other checkouts' ``visualdl`` too (their server,
their web app), on the same trace, interleaved, to compare versions on one (noisy) machine:
one column per checkout.

Usage: python bench/profiler.py [--events 1000000] [--reps 3] [--cold 1] [--keep DIR]
                                 [--checkout DIR ...]
       python bench/profiler.py --stages N [--checkout DIR ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from media import start_server  # noqa: E402  (bench/media.py: the same server start-up)
from server import rss_mb, stop  # noqa: E402

from visualdl.testing import launch_chromium  # noqa: E402

TARGETS = {"first_view_s": 2.0, "frame_ms": 50.0, "rss_mb": 600.0}
OPS = 40  # operators per forward (and per backward) pass


def write_trace(path: Path, events: int, t0: float = 0.0) -> int:
    """Write a trace of about ``events`` complete events, the first at ``t0`` us (``--epoch``:
    Unix-epoch microseconds, as newer Kineto writes them); returns the exact count."""
    per_step = 1 + 1 + 1 + OPS * 2 + 1 + OPS + 1 + OPS  # step, data, fwd, ops+children, bwd, ops, opt, mem
    steps = max(1, events // (per_step - OPS))
    out = ['{"schemaVersion": 1, "env": {"framework": "visualdl bench", "threads": 1},\n'
           '"traceEvents": [\n{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, '
           '"args": {"name": "main"}}']
    count = 0
    t = t0
    allocated = 0
    for step in range(steps):
        start = t
        parts = []
        parts.append(f'{{"ph":"X","cat":"Dataloader","name":"DataLoader.__next__","pid":1,"tid":1,"ts":{t + 1:.3f},"dur":20.0}}')
        t += 22
        fwd0 = t
        parts.append(f'{{"ph":"X","cat":"Forward","name":"forward","pid":1,"tid":1,"ts":{t:.3f},"dur":{OPS * 6 + 2:.3f}}}')
        t += 1
        for i in range(OPS):
            name = ("linear", "relu", "conv2d", "add")[i % 4]
            parts.append(f'{{"ph":"X","cat":"Operator","name":"{name}","pid":1,"tid":1,"ts":{t:.3f},"dur":5.0,'
                         f'"args":{{"Input Dims":[[64,{i % 7 + 1}]]}}}}')
            parts.append(f'{{"ph":"X","cat":"Operator","name":"empty","pid":1,"tid":1,"ts":{t + 1:.3f},"dur":0.5}}')
            allocated += 256
            parts.append(f'{{"ph":"i","cat":"Memory","name":"[memory]","s":"t","pid":1,"tid":1,"ts":{t + 1.2:.3f},'
                         f'"args":{{"Bytes":256,"Total Allocated":{allocated},"Device Type":0,"Device Id":-1}}}}')
            t += 6
        t = fwd0 + OPS * 6 + 2
        bwd0 = t
        parts.append(f'{{"ph":"X","cat":"Backward","name":"backward","pid":1,"tid":1,"ts":{t:.3f},"dur":{OPS * 4 + 2:.3f}}}')
        t += 1
        for i in range(OPS):
            parts.append(f'{{"ph":"X","cat":"Operator","name":"grad_{i % 4}","pid":1,"tid":1,"ts":{t:.3f},"dur":3.0}}')
            t += 4
        t = bwd0 + OPS * 4 + 2
        parts.append(f'{{"ph":"X","cat":"Optimizer","name":"SGD.step","pid":1,"tid":1,"ts":{t:.3f},"dur":10.0}}')
        t += 11
        allocated -= 256 * OPS
        parts.append(f'{{"ph":"i","cat":"Memory","name":"[memory]","s":"t","pid":1,"tid":1,"ts":{t:.3f},'
                     f'"args":{{"Bytes":{-256 * OPS},"Total Allocated":{allocated},"Device Type":0,"Device Id":-1}}}}')
        t += 1
        parts.append(f'{{"ph":"X","cat":"ProfileStep","name":"ProfilerStep#{step}","pid":1,"tid":1,"ts":{start:.3f},"dur":{t - start:.3f}}}')
        t += 1
        count += 3 + OPS * 3 + 2
        out.append(",\n".join(parts))
    path.write_text(",\n".join(out) + "\n]}\n")
    return count


FIRST_VIEW = """() => new Promise((resolve) => {
  const check = () => {
    const c = document.querySelector('.prof-canvas');
    if (c && c.dataset.state === 'ready') requestAnimationFrame(() => resolve(performance.now()));
    else setTimeout(check, 5);
  };
  check();
})"""

# Presses keys on the canvas; per key: ms until the immediate frame is drawn, and until the
# server's window for it is drawn.
KEYS = """async (keys) => {
  const c = document.querySelector('.prof-canvas');
  const frames = [], refetch = [];
  for (const key of keys) {
    const before = Number(c.dataset.requests || 0);
    const t0 = performance.now();
    c.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true}));
    await new Promise((r) => requestAnimationFrame(() => r()));
    frames.push(performance.now() - t0);
    await new Promise((resolve) => {
      const check = () => {
        if (Number(c.dataset.requests || 0) > before && c.dataset.start === c.dataset.viewStart) resolve();
        else setTimeout(check, 1);
      };
      check();
    });
    await new Promise((r) => requestAnimationFrame(() => r()));
    refetch.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 30));
  }
  return {frames, refetch};
}"""

OLD_WAY = """async (url) => {
  const t0 = performance.now();
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const gz = (response.headers.get('content-type') || '').includes('gzip');
  const text = gz ? await new Response(response.body.pipeThrough(new DecompressionStream('gzip'))).text()
    : await response.text();
  const trace = JSON.parse(text);
  const t1 = performance.now();
  return {ms: t1 - t0, events: trace.traceEvents.length, mb: text.length / 1048576,
          heap: performance.memory ? performance.memory.usedJSHeapSize / 1048576 : null};
}"""


def _serve(logdir: Path, checkout: Path, cache: Path) -> tuple:
    """``python -m visualdl`` started in ``checkout`` (so its ``visualdl`` is the one
    imported), with its disk cache in ``cache``."""
    import media

    os.environ["VISUALDL_CACHE_DIR"] = str(cache)
    media.REPO, before = checkout, media.REPO  # start_server's cwd
    try:
        return start_server(logdir)
    finally:
        media.REPO = before


def _view(browser, url: str, old: list | None, poll: "_Poll", first_only: bool = False) -> dict:
    """One tab: the first timeline view, the keys, the other panes (``poll`` stopped then:
    its answer times in ``slowest``); the old approach too when ``old`` is a list.
    ``first_only``: the first view alone (many quick repeats for an A/B)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(url + "/?tab=profiler&pane=timeline")
    out = {"first": page.evaluate(FIRST_VIEW) / 1000, "frames": [], "refetch": []}
    if not first_only:
        keys = ["w", "w", "d", "a", "s", "w", "d", "d", "s", "a"] * 2
        out.update(page.evaluate(KEYS, keys))
        for pane in ("overview", "operators", "memory"):
            page.click(f".prof-tab[data-pane={pane}]")
            page.wait_for_selector(f".prof-{pane}[data-state]", timeout=60_000)
    context.close()
    out["slowest"] = max(poll.stop())
    if old is not None:
        context = browser.new_context()
        page = context.new_page()
        page.goto(url + "/api/info")
        for _ in range(2):
            old.append(page.evaluate(OLD_WAY, f"{url}/api/profile/trace?run=run&tag=bench"))
        context.close()
    return out


class _Poll:
    """``/api/runs`` asked every ``every`` seconds on a thread of its own, each answer's
    time kept, until :meth:`stop`."""

    def __init__(self, url: str, every: float = 0.05) -> None:
        self.url, self.every, self.times = url + "/api/runs", every, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            t = time.perf_counter()
            try:
                with urllib.request.urlopen(self.url, timeout=30) as r:
                    r.read()
            except OSError:
                pass
            self.times.append(time.perf_counter() - t)
            self._stop.wait(self.every)

    def stop(self) -> list[float]:
        self._stop.set()
        self._thread.join()
        return self.times


MODES = ("cold", "restart", "warm")


def measure(logdir: Path, reps: int, settle: float, cold_reps: int,
            checkouts: list[Path], first_only: bool = False) -> dict:
    """Per checkout and mode, interleaved (checkouts alternate within each round, the order
    rotated from round to round; a restart follows each first start):
    cold: a fresh server with an empty disk cache, the tab opened at once (the parse
    included); restart: the same, the disk cache left by an earlier server; warm: the tab
    opened ``settle`` seconds after start-up."""
    from playwright.sync_api import sync_playwright

    res = {c: {m: [] for m in MODES} | {"frames": [], "refetch": [], "rss": [], "old": [],
                                        "slowest": []} for c in checkouts}
    caches = Path(tempfile.mkdtemp(prefix="vdl-prof-cache-"))
    plan = ["cold", "restart"] * cold_reps + ["warm"] * reps
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            for k, mode in enumerate(plan):
                turn = k % len(checkouts)  # each checkout in each place of the order in turn
                order = [*enumerate(checkouts)]
                for n, checkout in order[turn:] + order[:turn]:
                    r = res[checkout]
                    kept = caches / f"kept{n}"  # filled by the cold servers, reused after
                    cache = kept if mode == "restart" else caches / f"{mode}{k}-{n}"
                    if mode == "cold":
                        shutil.rmtree(kept, ignore_errors=True)
                    proc, url = _serve(logdir, checkout, cache)
                    try:
                        if mode == "warm":
                            time.sleep(settle)
                        poll = _Poll(url)
                        try:
                            old = r["old"] if k == 0 and not first_only else None
                            got = _view(browser, url, old, poll, first_only)
                        finally:
                            poll.stop()
                        if mode == "cold":
                            r["slowest"].append(got["slowest"])
                        r[mode].append(got["first"])
                        r["frames"] += got["frames"]
                        r["refetch"] += got["refetch"]
                        r["rss"].append(rss_mb(proc.pid))
                    finally:
                        stop(proc)
                    if mode == "cold" and cache.exists():
                        shutil.copytree(cache, kept, dirs_exist_ok=True)
                    # the model files just written (~130 MB each server) are flushed to
                    # disk here, not while the next server is being measured
                    os.sync()
        finally:
            browser.close()
            shutil.rmtree(caches, ignore_errors=True)
    return res


STAGES = r"""
import sys, time, json
class _Ref:  # the trace file as the server's index lists it
    source, path, offset, tag, step = "torchtrace", sys.argv[1], 0, "bench", 0
t0 = time.perf_counter()
from visualdl.kinds.profile import parse, model, views
from visualdl.sources import torchtrace
t1 = time.perf_counter()
raw = torchtrace.load(sys.argv[1]).json
t2 = time.perf_counter()
cols = parse.parse_trace(raw)
t3 = time.perf_counter()
m = model.TraceModel(cols, "pytorch")
t4 = time.perf_counter()
views.timeline(m, None, None, 1400)
t5 = time.perf_counter()
views.overview(m)
t6 = time.perf_counter()
import visualdl
out = {"checkout": visualdl.__file__.rsplit("/", 2)[0], "imports": t1 - t0, "read": t2 - t1, "parse": t3 - t2, "model": t4 - t3,
       "first window": t5 - t4, "first view total": t5 - t0,
       "overview": t6 - t5, "numba imported": "numba" in sys.modules}
try:  # the same through build_model (a big trace: by the runner), a fresh cache folder
    import os, tempfile
    os.environ["VISUALDL_CACHE_DIR"] = tempfile.mkdtemp()
    try:
        from visualdl.kinds.profile import build
        make = lambda: build.build_model(build.source(_Ref(), None))
    except ImportError:  # checkouts before build_model: their worker
        from visualdl.kinds.profile import store, worker
        make = lambda: worker.build(store.identity(sys.argv[1], 0, "bench", 0), sys.argv[1])
    del raw, cols, m
    t7 = time.perf_counter()
    m = make()
    t8 = time.perf_counter()
    views.timeline(m, None, None, 1400)
    t9 = time.perf_counter()
    out.update({"off-process: model mapped": t8 - t7, "off-process: first window": t9 - t8,
                "off-process: total": t9 - t7})
except ImportError:
    pass
print(json.dumps(out))
"""


def stages(path: Path, reps: int, checkouts: list[Path]) -> None:
    """The cold path's stages, each rep in a fresh interpreter started in the checkout
    (so its ``visualdl`` is the one imported); checkouts interleaved; medians."""
    import json
    import subprocess

    runs: dict[Path, list[dict]] = {c: [] for c in checkouts}
    for _ in range(reps):
        for checkout in checkouts:
            out = subprocess.run([sys.executable, "-c", STAGES, str(path)], check=True,
                                 capture_output=True, text=True, cwd=checkout).stdout
            runs[checkout].append(json.loads(out.strip().splitlines()[-1]))
    keys = list(dict.fromkeys(k for c in checkouts for k in runs[c][0]
                              if k not in ("checkout", "numba imported")))
    print(f"\nstages of the cold path, seconds (median of {reps} fresh interpreters each)")
    print(f"  {'stage':<22}" + "".join(f"{str(c)[-24:]:>26}" for c in checkouts))
    for key in keys:
        print(f"  {key:<22}" + "".join(
            f"{statistics.median(r[key] for r in runs[c]):26.2f}" if key in runs[c][0]
            else f"{'-':>26}" for c in checkouts))
    print(f"  {'numba imported':<22}" + "".join(
        f"{str(runs[c][0]['numba imported']):>26}" for c in checkouts))
    for c in checkouts:
        print(f"  {str(c)}: visualdl from {runs[c][0]['checkout']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--cold", type=int, default=1,
                        help="servers whose tab is opened at once (the parse included)")
    parser.add_argument("--settle", type=float, default=15.0,
                        help="seconds between server start and opening the tab (warm runs)")
    parser.add_argument("--first-view-only", action="store_true",
                        help="time the first views alone (no keys, panes or old approach): "
                             "quick repeats for an A/B of checkouts")
    parser.add_argument("--keep", type=Path, default=None, help="write the trace here and keep it")
    parser.add_argument("--stages", type=int, default=0, metavar="N",
                        help="only time the cold path's stages, N fresh interpreters")
    parser.add_argument("--epoch", action="store_true",
                        help="times in Unix-epoch microseconds (about 1.7e15), read exactly")
    parser.add_argument("--checkout", type=Path, action="append", default=[],
                        help="also measure this checkout's visualdl, interleaved with this "
                             "one's on the same trace (a noisy machine: compare in one run)")
    args = parser.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="vdl-prof-bench-"))
    run = root / "run"
    run.mkdir(parents=True, exist_ok=True)
    path = run / "bench.1700000000000.pt.trace.json"
    t = time.perf_counter()
    count = write_trace(path, args.events, 1.7e15 if args.epoch else 0.0)
    print(f"trace: {count:,} events, {path.stat().st_size / 2**20:.0f} MB "
          f"(written in {time.perf_counter() - t:.1f} s)")
    if args.stages:
        stages(path, args.stages, [REPO] + args.checkout)
        return 0
    checkouts = [REPO] + args.checkout
    res = measure(root, args.reps, args.settle, args.cold, checkouts, args.first_view_only)
    med = statistics.median

    def p95(v):
        return sorted(v)[int(0.95 * (len(v) - 1))] if v else float("nan")

    rows = [
        (f"first timeline view, tab opened {args.settle:g} s after start",
         lambda r: f"{med(r['warm']):.2f} s", f"<= {TARGETS['first_view_s']:g} s",
         lambda r: med(r["warm"]) <= TARGETS["first_view_s"]),
        ("first timeline view, tab at once, first start (parse included)",
         lambda r: f"{med(r['cold']):.2f} s", f"<= {TARGETS['first_view_s']:g} s",
         lambda r: med(r["cold"]) <= TARGETS["first_view_s"]),
        ("first timeline view, tab at once, restart (disk cache)",
         lambda r: f"{med(r['restart']):.2f} s", f"<= {TARGETS['first_view_s']:g} s",
         lambda r: med(r["restart"]) <= TARGETS["first_view_s"]),
        ("pan/zoom frame (key -> frame drawn), median", lambda r: f"{med(r['frames']):.1f} ms",
         f"<= {TARGETS['frame_ms']:g} ms", lambda r: med(r["frames"]) <= TARGETS["frame_ms"]),
        ("pan/zoom frame, 95th percentile", lambda r: f"{p95(r['frames']):.1f} ms", "", None),
        ("key -> server window drawn, median", lambda r: f"{med(r['refetch']):.1f} ms", "", None),
        ("slowest /api/runs while the tab loads, first start (median)",
         lambda r: f"{med(r['slowest']) * 1000:.0f} ms", "", None),
        ("server RSS after all views (with children)", lambda r: f"{max(r['rss']):.0f} MB",
         f"<= {TARGETS['rss_mb']:g} MB", lambda r: max(r["rss"]) <= TARGETS["rss_mb"]),
        ("old approach: whole trace fetched + JSON.parse in the page",
         lambda r: f"{med([x['ms'] for x in r['old']]) / 1000:.2f} s", "(comparison)", None),
        ("old approach: JSON text in the page", lambda r: f"{r['old'][-1]['mb']:.0f} MB", "", None),
        ("old approach: page JS heap after parsing",
         lambda r: f"{r['old'][-1]['heap']:.0f} MB" if r["old"][-1]["heap"] else "-", "", None),
    ]
    names = [str(c)[-22:] for c in checkouts]
    width = max(len(name) for name, *_ in rows)
    print(f"\n{'measure'.ljust(width)}" + "".join(f"  {n:>22}" for n in names) + f"  {'target':>9}")
    for name, value, target, ok in rows:
        cells = []
        for c in checkouts:
            try:
                cell = value(res[c]) + ("" if ok is None else (" ok" if ok(res[c]) else " NO"))
            except (statistics.StatisticsError, IndexError, ValueError):
                cell = "-"
            cells.append(f"  {cell:>22}")
        print(name.ljust(width) + "".join(cells) + f"  {target:>9}")
    for c in checkouts:
        r = res[c]
        print(f"\n{c}: first views, s: " + "; ".join(
            f"{m} {', '.join(f'{v:.2f}' for v in r[m])}" for m in MODES)
              + "; slowest /api/runs, ms: " + ", ".join(f"{v * 1000:.0f}" for v in r["slowest"]))
    print(f"reps={args.reps}, cold={args.cold} (and as many restarts), settle={args.settle:g} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
