"""Run comparison benchmark: 100 runs with 300 config keys each, compared.

Measures, on a real ``python -m visualdl`` server process over a logdir of ``--runs`` runs
(each: ``add_config`` of ``--keys`` nested keys, of which ``--differ`` vary between runs;
``loss`` and ``eval/acc`` over ``--steps`` steps):

* server: ``POST /api/compare`` of every run, differing keys only and every key: the diff's
  own time (the answer's ``Server-Timing``) and the request's wall time on localhost,
  median of ``--repeat``;
* browser (Chromium, Playwright): from the click on the run list's "Compare selected" to
  the comparison's config table in the page (the click's handler, the request, the render,
  then the next frame: "shown", the first rows of the table), median of ``--repeat``
  clicks, with when the answer had arrived ("answered") and when the whole table was in
  ("complete": the view adds the rows past the first 40 after a paint), all from the
  click; and the same with "differences only" off (every key: a 300 x 100 table);
* the run table's config columns (``/api/runs/config``: only the keys that differ): time
  and size;
* baseline, same page: what a client-side diff costs instead: each run's ``/api/config``
  fetched (6 at a time, as a browser does) and the keys diffed in JavaScript, no render.

The target (issue 24): the comparison opened within 300 ms of the click.

Usage: python bench/compare.py [--runs 100] [--keys 300] [--differ 60] [--steps 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from visualdl import LogWriter  # noqa: E402
from visualdl.testing import chromium_missing, launch_chromium  # noqa: E402

TARGET_MS = 300.0


def config_of(run: int, keys: int, differ: int) -> dict:
    """``keys`` leaves in sections of 10 (``s03.k7``); the first ``differ`` vary by run."""
    out: dict = {}
    for k in range(keys):
        section, name = f"s{k // 10:02d}", f"k{k % 10}"
        value = (run * 7 + k) % 13 * 0.5 if k < differ else f"same-{k}"
        out.setdefault(section, {})[name] = value
    return out


def write_logdir(root: Path, runs: int, keys: int, differ: int, steps: int) -> Path:
    for r in range(runs):
        with LogWriter(logdir=str(root / f"run{r:03d}"), flush_secs=3600) as w:
            w.add_config(config_of(r, keys, differ))
            for step in range(steps):
                w.add_scalar("loss", 1.0 / (1 + step * (r + 1) * 1e-3), step)
                if step % 10 == 0:
                    w.add_scalar("eval/acc", 1.0 - 1.0 / (2 + step * (r + 1) * 1e-3), step)
    return root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(logdir: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "visualdl", "--logdir", str(logdir), "--host", "127.0.0.1",
         "--port", str(port), "--reload-interval", "60"],
        cwd=str(REPO), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    proc.terminate()
    raise TimeoutError("the server did not finish loading in 120 s")


def server_times(url: str, runs: list[str], everything: bool,
                 repeat: int) -> tuple[float, float, int]:
    """(median diff ms from Server-Timing, median request ms, keys answered)."""
    diffs, walls, keys = [], [], 0
    body = json.dumps({"runs": runs, "all": everything}).encode()
    for _ in range(repeat + 1):  # the first fills the server's per-version config cache
        req = urllib.request.Request(url + "/api/compare", data=body,
                                     headers={"Content-Type": "application/json"})
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=60) as r:
            answer = json.loads(r.read())
            timing = r.headers["Server-Timing"]
        walls.append((time.perf_counter() - t0) * 1e3)
        diffs.append(float(timing.split("diff;dur=")[1].split(",")[0]))
        keys = len(answer["config"]["keys"])
    return statistics.median(diffs[1:]), statistics.median(walls[1:]), keys


def table_time(url: str, repeat: int) -> tuple[float, int]:
    """(median ms, bytes) of the run table's config columns, ETag not sent."""
    walls, size = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        with urllib.request.urlopen(url + "/api/runs/config", timeout=60) as r:
            size = len(r.read())
        walls.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(walls), size


CLICK = """async (everything) => {
  const rows = () => document.querySelectorAll('.cmp-config tbody tr').length;
  let shown = null;
  let answered = null;
  performance.clearResourceTimings();
  const t0 = performance.now();
  document.querySelector('button[name=compare-runs]').click();
  for (;;) {
    await new Promise((r) => requestAnimationFrame(r));
    const root = document.querySelector('section.compare');
    const ok = root && root.dataset.runs && root.dataset.runs.split('\\n').length === RUNS
      && rows() > 0;
    if (ok && shown === null) {
      shown = performance.now() - t0;
      const req = performance.getEntriesByType('resource')
        .find((e) => e.name.includes('api/compare'));
      answered = req ? req.responseEnd - t0 : NaN;
    }
    if (ok && document.querySelector('.cmp-config[data-complete]')
        && (!everything || rows() === KEYS)) return [shown, answered, performance.now() - t0];
    if (performance.now() - t0 > 30000) throw new Error('no comparison within 30 s');
  }
}"""

BASELINE = """async (runs) => {
  const t0 = performance.now();
  const flats = new Array(runs.length);
  let next = 0;
  const worker = async () => {
    while (next < runs.length) {
      const i = next++;
      const r = await fetch('api/config?run=' + encodeURIComponent(runs[i]));
      flats[i] = (await r.json()).flat;
    }
  };
  await Promise.all(Array.from({length: 6}, worker));
  const keys = new Set(flats.flatMap((f) => Object.keys(f)));
  const differing = [...keys]
    .filter((k) => new Set(flats.map((f) => JSON.stringify(f[k]))).size > 1);
  return [performance.now() - t0, differing.length];
}"""


def browser_times(url: str, runs: int, keys: int, repeat: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    out: dict[str, float] = {}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(url + "/?tab=scalars")
        page.wait_for_selector("button[name=compare-runs]")
        page.wait_for_selector('.run-list li[data-run="run000"]')
        click = CLICK.replace("RUNS", str(runs)).replace("KEYS", str(keys))
        for label, everything in (("diff", False), ("all", True)):
            times, answered, complete = [], [], []
            for _ in range(repeat):
                page.goto(url + "/?tab=scalars" + ("&cmpall=1" if everything else ""))
                page.wait_for_selector('.run-list li[data-run="run000"]')
                page.wait_for_function("document.querySelector('.run-head button[data-sort]')")
                page.wait_for_load_state("networkidle")  # the page's own first requests done
                first, request, whole = page.evaluate(click, everything)
                times.append(first)
                answered.append(request)
                complete.append(whole)
            out[label] = statistics.median(times)
            out[label + "_request"] = statistics.median(answered)
            out[label + "_complete"] = statistics.median(complete)
        names = [f"run{r:03d}" for r in range(runs)]
        base = [page.evaluate(BASELINE, names) for _ in range(repeat)]
        out["baseline"] = statistics.median(b[0] for b in base)
        out["baseline_keys"] = base[0][1]
        browser.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--keys", type=int, default=300)
    ap.add_argument("--differ", type=int, default=60)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        logdir = write_logdir(Path(tmp), args.runs, args.keys, args.differ, args.steps)
        print(f"wrote {args.runs} runs x {args.keys} config keys ({args.differ} differ), "
              f"{args.steps} steps in {time.perf_counter() - t0:.1f} s")
        proc, url = start_server(logdir)
        try:
            names = [f"run{r:03d}" for r in range(args.runs)]
            rows = []
            for label, everything in (("differences only", False), ("every key", True)):
                diff, wall, keys = server_times(url, names, everything, args.repeat)
                rows.append((f"server /api/compare, {label} ({keys} keys)", diff, wall))
            print(f"\n{'measure':<52} {'diff ms':>9} {'request ms':>11}")
            for label, diff, wall in rows:
                print(f"{label:<52} {diff:>9.1f} {wall:>11.1f}")
            wall, size = table_time(url, args.repeat)
            print(f"{'server /api/runs/config (the run table columns)':<52} {'':>9} "
                  f"{wall:>11.1f}  ({size / 1024:.0f} KiB)")
            missing = chromium_missing()
            if missing:
                print(f"\nbrowser: skipped ({missing})")
                return
            b = browser_times(url, args.runs, args.keys, args.repeat)
            print(f"\n{'browser (Chromium), median of ' + str(args.repeat):<44} "
                  f"{'shown ms':>9} {'answered':>9} {'complete':>9} {'target':>11}")
            for label, key in (("click -> comparison, differences only", "diff"),
                               ("click -> comparison, every key", "all")):
                verdict = "ok" if b[key] <= TARGET_MS else "MISSED"
                print(f"{label:<44} {b[key]:>9.1f} {b[key + '_request']:>9.1f} "
                      f"{b[key + '_complete']:>9.1f} {f'<= {TARGET_MS:.0f} {verdict}':>11}")
            print(f"{f'baseline: {args.runs} x /api/config, diff in JS':<44} {b['baseline']:>9.1f}"
                  f"  (no render; {b['baseline_keys']} keys differ)")
            print(f"\nload average while measuring: {os.getloadavg()[0]:.1f} "
                  f"on {os.cpu_count()} cores")
        finally:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
