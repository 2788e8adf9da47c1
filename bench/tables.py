"""Tables benchmark (issue 25, "Targets"): what add_table costs its caller, and how the
Tables view handles 100,000 rows, in headless Chromium.

* caller's cost: ``add_table`` of ROWS rows (an id, a score, a name and a 32x32 RGB image
  per row) against ``add_image`` of the same pixels, measured in the same run: ROWS calls
  of one image each (the target's peer) and, for reference, one call with the batch
  (NHWC, drawn as a grid). Only the call is timed (the writer thread encodes afterwards);
  median of REPEATS, each on a fresh LogWriter. Target: at most 2x the add_image calls.
* open: in a fresh browser context (cold cache) with the app loaded on its Scalars tab, a
  click on the Tables tab until the first rows of the 100,000-row table are on screen (the
  view, the index and the table's columnar JSON on the way). Target: 1 s. Also, for
  reference, from navigation start (the app's own start-up included).
* sort: a header click until the next animation frame (the sorted rows drawn), timed in
  the page with performance.now(); numeric and text columns, each direction. Target: 200 ms.
* filter and scroll (for reference): a ``column > value`` filter, and one frame of a jump
  scroll (rows in view replaced).

Usage: python bench/tables.py [--rows 1000] [--big 100000] [--repeats 7]
Chromium is Debian's /usr/bin/chromium driven by Playwright; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from visualdl.testing import launch_chromium

sys.path.insert(0, str(Path(__file__).resolve().parent))
from media import start_server  # noqa: E402  (bench/media.py: a visualdl subprocess)
from server import stop  # noqa: E402

TARGETS = {"caller_ratio": 2.0, "open_s": 1.0, "sort_ms": 200.0}


def caller_costs(root: Path, rows: int, repeats: int) -> dict[str, list[float]]:
    """Seconds of the caller's thread: add_table, ROWS add_image calls, one batch call."""
    from visualdl import LogWriter

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (rows, 32, 32, 3), dtype=np.uint8)
    data = {"id": list(range(rows)), "score": rng.random(rows).tolist(),
            "name": [f"sample {i}" for i in range(rows)], "image": list(images)}
    out: dict[str, list[float]] = {"add_table": [], "add_image x rows": [], "add_image batch": []}
    for k in range(repeats):
        for name in out:
            with LogWriter(logdir=str(root / f"{name}-{k}")) as w:
                t0 = time.perf_counter()
                if name == "add_table":
                    w.add_table("table", data, 0)
                elif name == "add_image batch":
                    w.add_image("batch", images, 0, dataformats="NHWC")
                else:
                    for i in range(rows):
                        w.add_image("image", images[i], i)
                out[name].append(time.perf_counter() - t0)
    return out


def write_big(root: Path, rows: int) -> Path:
    from visualdl import LogWriter

    ids = np.arange(rows)
    with LogWriter(logdir=str(root / "big")) as w:
        w.add_table("results", {"id": ids, "value": (ids * 7919 % 100_003) / 1000.0,
                                "label": [f"item {i * 31 % rows:06d}" for i in range(rows)],
                                "ok": (ids % 3 == 0)}, 0)
        for step in range(10):  # the app opens on Scalars; the bench clicks the Tables tab
            w.add_scalar("loss", 1.0 / (step + 1), step)
    return root


ROWS_PROBE = """
window.__rows = null;
window.__click = null;
new MutationObserver((muts, obs) => {
  if (document.querySelector('.table-row')) {
    obs.disconnect();
    requestAnimationFrame(() => { window.__rows = performance.now(); });
  }
}).observe(document, {subtree: true, childList: true});
"""

OPEN_TAB = """() => {
  window.__click = performance.now();
  document.getElementById('tab-tables').click();
}"""

# Clicks header `col` and resolves with the ms until the next frame (rows redrawn).
TIMED_CLICK = """
(col) => new Promise((resolve) => {
  const b = document.querySelectorAll('.table-th button')[col];
  const t0 = performance.now();
  b.click();
  requestAnimationFrame(() => resolve(performance.now() - t0));
})
"""

TIMED_FILTER = """
(q) => new Promise((resolve) => {
  const f = document.querySelector('.table-filter');
  const t0 = performance.now();
  f.value = q;
  f.dispatchEvent(new Event('input', {bubbles: true}));
  requestAnimationFrame(() => resolve(performance.now() - t0));
})
"""

TIMED_SCROLL = """
async (n) => {
  const s = document.querySelector('.table-scroll');
  const out = [];
  for (let k = 1; k <= n; k += 1) {
    const t0 = performance.now();
    s.scrollTop = (s.scrollHeight - s.clientHeight) * k / n;
    s.dispatchEvent(new Event('scroll'));
    await new Promise((r) => requestAnimationFrame(() => r()));
    out.push(performance.now() - t0);
  }
  return [out, document.querySelectorAll('.table-row').length];
}
"""


def browse(url: str, repeats: int) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            opens, cold = [], []
            for _ in range(repeats):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.add_init_script(ROWS_PROBE)
                page.goto(url + "/?tab=scalars")
                page.wait_for_selector('.card[data-tag="loss"]', timeout=60_000)
                page.evaluate(OPEN_TAB)
                page.wait_for_function("() => window.__rows !== null", timeout=60_000)
                opens.append(page.evaluate("() => window.__rows - window.__click") / 1000)
                context.close()
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.add_init_script(ROWS_PROBE)
                page.goto(url + "/?tab=tables")
                page.wait_for_function("() => window.__rows !== null", timeout=60_000)
                cold.append(page.evaluate("() => window.__rows") / 1000)
                context.close()
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(url + "/?tab=tables")
            page.wait_for_selector(".table-row", timeout=60_000)
            sorts = {"number": [], "text": []}
            for _ in range(repeats):
                sorts["number"] += [page.evaluate(TIMED_CLICK, 1) for _ in range(2)]  # value
                sorts["text"] += [page.evaluate(TIMED_CLICK, 2) for _ in range(2)]  # label
            filters = [page.evaluate(TIMED_FILTER, q) for q in ("value > 50", "item 0", "")]
            scroll, in_dom = page.evaluate(TIMED_SCROLL, 40)
            context.close()
            return {"opens": opens, "cold": cold, "sorts": sorts, "filters": filters,
                    "scroll": scroll, "in_dom": in_dom}
        finally:
            browser.close()


def line(name: str, value: float, unit: str, target: str, ok: bool | None) -> str:
    verdict = "" if ok is None else ("ok" if ok else "MISSED")
    return f"{name:<44} {value:>10.3f} {unit:<3} {target:>10}  {verdict}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000)
    parser.add_argument("--big", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        costs = caller_costs(root / "caller", args.rows, args.repeats)
        med = {k: statistics.median(v) * 1000 for k, v in costs.items()}
        ratio = med["add_table"] / med["add_image x rows"]
        proc, url = start_server(write_big(root / "ui", args.big))
        try:
            ui = browse(url, args.repeats)
        finally:
            stop(proc)
    open_s = statistics.median(ui["opens"])
    sort_n, sort_t = (statistics.median(ui["sorts"][k]) for k in ("number", "text"))
    print(f"{'measure (medians)':<44} {'value':>10} {'':<3} {'target':>10}")
    print(line(f"add_table, {args.rows} rows with 32x32 images", med["add_table"], "ms", "", None))
    print(line(f"add_image x {args.rows} (same pixels)", med["add_image x rows"], "ms", "",
               None))
    print(line("add_image, one NHWC batch (same pixels)", med["add_image batch"], "ms", "", None))
    print(line("add_table / add_image x rows", ratio, "x", "<= 2.0",
               ratio <= TARGETS["caller_ratio"]))
    print(line(f"open the Tables tab, {args.big:,} rows", open_s, "s", "<= 1.0",
               open_s <= TARGETS["open_s"]))
    print(line("  the same from navigation start (app start-up)", statistics.median(ui["cold"]),
               "s", "", None))
    print(line("sort a number column", sort_n, "ms", "<= 200", sort_n <= TARGETS["sort_ms"]))
    print(line("sort a text column", sort_t, "ms", "<= 200", sort_t <= TARGETS["sort_ms"]))
    print(line("filter (value > 50, text, cleared)", statistics.median(ui["filters"]), "ms", "",
               None))
    print(line("one frame of a jump scroll", statistics.median(ui["scroll"]), "ms", "", None))
    print(f"rows in the page after scrolling: {ui['in_dom']} of {args.big:,}")
    print("opens (s):", ", ".join(f"{v:.3f}" for v in ui["opens"]))
    print("from navigation (s):", ", ".join(f"{v:.3f}" for v in ui["cold"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
