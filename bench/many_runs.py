"""Many-runs benchmark: a sweep of 2,000 runs x 20 scalar tags x 1,000 steps, with hparams.

Measures, on a real ``python -m visualdl`` server process:

* first chart: from process start until the chart the scalars page opens on (``tag0`` of
  every run, selected by default: ``/api/scalars/batch``, 150 points each as the app asks for 2,000 lines) has
  answered complete (every run, every step, no ``loading`` flag), asked again while the
  logdir loads as the web app does; then the first grouped chart (below) once loaded;
* grouped chart: ``POST /api/scalars/groups`` for ``tag0`` over all runs, grouped by the
  ``lr`` hparam (10 groups), mean with a std band, smoothing 0.6: median wall time of the
  request on localhost (an upper bound of the server time), and the same grouped by a name
  regex;
* run table: ``/api/runs/table`` with two metric columns;
* idle reload: with nothing changing, the server's CPU seconds per reload (psutil, over
  ``--idle`` seconds at ``--reload-interval 1``) and the reload's own wall time from
  ``/api/info``;
* RSS of the server once loaded, and again after the run table (which reads every tag of
  every run: it must not undo the reader's compact layout);
* the reader alone (``LogReader(logdir)`` in a fresh process): wall and CPU seconds, peak
  RSS; CPU seconds are the figure to compare on a busy machine;
* browser: a keystroke in the run filter applied to the run list (handler + the next frame),
  median over a few keystrokes, measured in Chromium (Playwright), when it is available;
* with ``--tensorboard``: TensorBoard 2.21 ``--load_fast=true`` over the same runs written
  as event files (one ``simple_value`` event per point, framed as TensorBoard writes them):
  time until its ``scalars`` route answers ``tag0`` of the last run with all steps, RSS,
  and idle CPU over the same window. Its files are 10x the size of ours; pass smaller
  ``--steps`` when disk or time is short (the table says what was run).

Data is written once per shape under ``--cache`` (default ``.bench``) with the record codec
directly (a LogWriter per run would spend minutes here for 40M points).

``--long STEPS`` instead measures one run of ``--tags`` tags x STEPS steps three times: the
disk cache built from the records (its folder emptied first), a restart that reuses that
cache, and every point in RAM (below 50M points): load, first chart, full views, 40 random
step windows (median and max), RSS.

Usage: python bench/many_runs.py [--runs 2000] [--tags 20] [--steps 1000] [--tensorboard]
       python bench/many_runs.py --long 10000000   # 200M points, about 9 GB of disk
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from visualdl import LogWriter  # noqa: E402
from visualdl.format.framing import frame  # noqa: E402
from visualdl.format.scalar_codec import encode_entry, record_entry, varint  # noqa: E402
from server import free_port, rss_mb, stop  # noqa: E402  (bench/server.py: the same helpers)

LRS = [0.1 / 2**i for i in range(10)]
SERVER_REPO = REPO  # the checkout whose server and reader are measured (--repo)
TARGETS = {
    "first chart (s)": 1.5,
    "grouped chart (ms)": 300.0,
    "idle reload CPU (ms)": 100.0,
    "RSS (MB)": 1024.0,
    "filter keystroke (ms)": 100.0,
}


def run_name(i: int) -> str:
    return f"lr{LRS[i % len(LRS)]:.5f}/seed{i // len(LRS):04d}"


def series(i: int, k: int, steps: int) -> np.ndarray:
    s = np.arange(steps, dtype=np.float64)
    lr = LRS[i % len(LRS)]
    return np.exp(-s * lr / 50) + 0.05 * np.sin(s / 7 + i + k) + 0.01 * k


# -- data ----------------------------------------------------------------------------------------
def write_ours(root: Path, runs: int, tags: int, steps: int) -> None:
    """Per run: a LogWriter writes the header and hparams, then the scalars are appended as
    records of 20 packed series each, as the writer's flush would."""
    root.mkdir(parents=True)
    step_col = np.arange(steps, dtype=np.float64)
    for i in range(runs):
        run_dir = root / run_name(i)
        with LogWriter(logdir=str(run_dir)) as w:
            w.add_hparams({"lr": LRS[i % len(LRS)], "seed": i // len(LRS),
                           "opt": "adam" if i % 3 else "sgd"}, ["tag0"], walltime=1e9)
            path = w.file_path if hasattr(w, "file_path") else None
        path = path or next(p for p in run_dir.iterdir() if "vdlrecords" in p.name)
        walls = 1e9 + i + step_col
        with open(path, "ab") as f:
            for lo in range(0, steps, 500):  # two records per 1,000 steps, as a flush would
                hi = min(steps, lo + 500)
                entries = []
                for k in range(tags):
                    flat = np.column_stack([step_col[lo:hi], walls[lo:hi],
                                            series(i, k, steps)[lo:hi]]).ravel().tolist()
                    entries.append(record_entry(encode_entry(f"tag{k}", flat)))
                f.write(frame(b"".join(entries)))




def write_events(root: Path, runs: int, tags: int, steps: int) -> None:
    """The same values as TensorBoard event files: one event per point, hand-encoded
    (Event{wall_time, step, summary{value{tag, simple_value}}}), CRC-framed."""
    import struct

    root.mkdir(parents=True)
    for i in range(runs):
        run_dir = root / run_name(i)
        run_dir.mkdir(parents=True)
        path = run_dir / f"events.out.tfevents.1000000000.bench.{i}"
        header = b"\x09" + struct.pack("<d", 1e9) + b"\x1a\x0dbrain.Event:2"
        chunks = [frame(header)]
        tag_bytes = [f"tag{k}".encode() for k in range(tags)]
        for k in range(tags):
            values = series(i, k, steps).astype(np.float32)
            tb = b"\x0a" + varint(len(tag_bytes[k])) + tag_bytes[k]
            for s in range(steps):
                value = tb + b"\x15" + struct.pack("<f", float(values[s]))
                summary = b"\x0a" + varint(len(value)) + value
                event = (b"\x09" + struct.pack("<d", 1e9 + i + s) + b"\x10" + varint(s)
                         + b"\x2a" + varint(len(summary)) + summary)
                chunks.append(frame(event))
        path.write_bytes(b"".join(chunks))


def dataset(cache: Path, kind: str, runs: int, tags: int, steps: int) -> Path:
    target = cache / f"data-many-{kind}-{runs}x{tags}x{steps}"
    if not (target / ".done").exists():
        if target.exists():
            shutil.rmtree(target)
        started = time.perf_counter()
        (write_ours if kind == "ours" else write_events)(target, runs, tags, steps)
        (target / ".done").write_text("")
        print(f"  wrote {kind} data in {time.perf_counter() - started:.1f} s: {target}",
              flush=True)
    return target


# -- server helpers ------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    proc = psutil.Process(pid)
    total = sum(proc.cpu_times()[:2])
    for child in proc.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.Error:
            pass
    return total






def timed(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


# -- ours ----------------------------------------------------------------------------------------
def bench_ours(logdir: Path, runs: int, steps: int, idle: float, browser: bool) -> dict:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    names = [run_name(i) for i in range(runs)]
    s = requests.Session()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "visualdl", "--logdir", str(logdir),
                             "--port", str(port), "--reload-interval", "1"],
                            cwd=str(SERVER_REPO),
                            env=dict(os.environ, PYTHONPATH=str(SERVER_REPO)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out: dict = {}
    try:
        # what the app asks for a full view of 2,000 lines (linePoints in scalars/store.js:
        # a budget of 300,000 points a batch, 150 a line here)
        body = {"series": [{"run": r, "tag": "tag0"} for r in names],
                "points": max(100, min(1000, 300_000 // len(names)))}
        group = {"tag": "tag0", "hparams": ["lr"], "stat": "mean", "band": "std",
                 "smoothing": 0.6, "points": 1000}

        def complete(answer: dict) -> bool:
            return not answer.get("loading") and \
                sum(len(g["members"]) for g in answer["groups"]) == runs and \
                all(len(g["steps"]) == steps for g in answer["groups"])

        def complete_batch(answer: dict) -> bool:
            items = answer.get("series", [])
            return not answer.get("loading") and len(items) == runs and \
                all(item.get("total") == steps and not item.get("loading") for item in items)

        # As the web app does: poll the cheap status route, and while the logdir loads,
        # ask for the chart (the app: on each new data version, at most every 0.5 s; here
        # every 0.2 s) until an answer is complete: every run, every step, no "loading"
        # flag; while the first load runs, the app asks the server to hold an answer until
        # the tag is loaded (scalars/store.js, "wait", at most 5 s).
        last_chart, polls = -1.0, 0
        while "first chart (s)" not in out or "loaded (s)" not in out:
            now = time.perf_counter() - started
            if now > 600:
                raise TimeoutError("not loaded within 600 s")
            try:
                info = s.get(url + "/api/info", timeout=60).json()
            except (requests.ConnectionError, ValueError):
                time.sleep(0.02)
                continue
            if info.get("loaded") and "loaded (s)" not in out:
                out["loaded (s)"] = now
                out["server CPU when loaded (s)"] = cpu_seconds(proc.pid)
            if "first chart (s)" not in out and (now - last_chart >= 0.2 or info.get("loaded")):
                last_chart = now
                polls += 1
                # as the app: while the first load runs, the server holds the answer until
                # the tag is loaded (at most 5 s: "wait"), instead of one per poll
                ask = body if info.get("loaded") else {**body, "wait": 5}
                answer = s.post(url + "/api/scalars/batch", json=ask, timeout=120).json()
                if complete_batch(answer):
                    out["first chart (s)"] = time.perf_counter() - started
                    # the figure to compare on a busy machine (others stretch the wall time)
                    out["server CPU at first chart (s)"] = cpu_seconds(proc.pid)
                    out["chart requests until complete"] = polls
                    continue
            time.sleep(0.02)
        t = time.perf_counter()
        answer = s.post(url + "/api/scalars/groups", json=group, timeout=60).json()
        assert complete(answer), "incomplete after load"
        out["first grouped chart, once loaded (s)"] = time.perf_counter() - t
        time.sleep(1.5)
        out["RSS (MB)"] = rss_mb(proc.pid)
        assert len(answer["groups"]) == len(LRS), answer.keys()
        assert sum(len(g["members"]) for g in answer["groups"]) == runs
        out["grouped chart (ms)"] = 1000 * timed(
            lambda: s.post(url + "/api/scalars/groups", json=group, timeout=60), 7)
        regex = {**group, "hparams": None, "regex": r"^(lr[\d.]+)/", "band": "minmax",
                 "stat": "median"}
        out["grouped by regex, median (ms)"] = 1000 * timed(
            lambda: s.post(url + "/api/scalars/groups", json=regex, timeout=60), 7)
        out["run table (ms)"] = 1000 * timed(
            lambda: s.get(url + "/api/runs/table", params={"tag": ["tag0", "tag1"]},
                          timeout=60), 5)
        out["RSS after run table (MB)"] = rss_mb(proc.pid)
        out["batch: tag0 of every run (ms)"] = 1000 * timed(
            lambda: s.post(url + "/api/scalars/batch", json=body, timeout=60), 3)
        # idle: nothing changes; the reload thread ticks every second
        cpu0, t0 = cpu_seconds(proc.pid), time.perf_counter()
        time.sleep(idle)
        ticks = (time.perf_counter() - t0) / 1.0
        out["idle reload CPU (ms)"] = 1000 * (cpu_seconds(proc.pid) - cpu0) / ticks
        out["idle reload wall (ms)"] = 1000 * s.get(url + "/api/info").json()[
            "last_reload_seconds"]
        if browser:
            out.update(bench_browser(url))
    finally:
        stop(proc)
    return out


_READER = """
import resource, sys, time
t, c = time.perf_counter(), time.process_time()
from visualdl.reader.log_reader import LogReader
reader = LogReader(sys.argv[1])
print(time.perf_counter() - t, time.process_time() - c,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, len(reader.runs()))
"""


def bench_reader(logdir: Path, runs: int) -> dict:
    """``LogReader(logdir)`` alone in a fresh process: wall and CPU seconds of the load
    (imports included) and peak RSS. CPU seconds are the figure to compare on a busy
    machine: other processes stretch the wall time, not the CPU time."""
    env = dict(os.environ, PYTHONPATH=str(SERVER_REPO))
    line = subprocess.run([sys.executable, "-c", _READER, str(logdir)], env=env, check=True,
                          capture_output=True, text=True).stdout.split()
    wall, cpu, peak, found = float(line[0]), float(line[1]), float(line[2]), int(line[3])
    assert found == runs, f"read {found} runs of {runs}"
    return {"reader: load wall (s)": wall, "reader: load CPU (s)": cpu,
            "reader: peak RSS (MB)": peak}


def bench_browser(url: str) -> dict:
    try:
        from playwright.sync_api import sync_playwright

        from visualdl.testing import chromium_missing, launch_chromium
    except ImportError as err:
        return {"filter keystroke (ms)": f"skipped: {err}"}
    missing = chromium_missing()
    if missing:
        return {"filter keystroke (ms)": f"skipped: {missing}"}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        started = time.perf_counter()
        page.goto(url + "/?group=hp:lr&tags=^tag0$")
        page.wait_for_selector('.card[data-tag="tag0"][data-state="ready"]', timeout=120_000)
        first_grouped = time.perf_counter() - started
        times = page.evaluate("""async () => {
            const input = document.querySelector('input[name=run-filter]');
            const out = [];
            for (const text of ['s', 'se', 'see', 'seed', 'seed0', 'seed00', 'seed001', 'seed0', '']) {
              const t0 = performance.now();
              input.value = text;
              input.dispatchEvent(new Event('input', {bubbles: true}));
              await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
              out.push(performance.now() - t0);
            }
            return out;
        }""")
        rows = page.locator(".run-list li[data-run]").count()
        browser.close()
    return {"filter keystroke (ms)": statistics.median(times),
            "page to grouped chart (s)": first_grouped, "run rows in the DOM": rows}


# -- long runs -----------------------------------------------------------------------------------
def write_long(root: Path, tags: int, steps: int) -> None:
    """One run of ``tags`` x ``steps`` points, in records of 10,000 points per tag."""
    root.mkdir(parents=True)
    run_dir = root / "long"
    with LogWriter(logdir=str(run_dir)):
        pass
    path = next(p for p in run_dir.iterdir() if "vdlrecords" in p.name)
    chunk = 10_000
    with open(path, "ab") as f:
        for lo in range(0, steps, chunk):
            hi = min(steps, lo + chunk)
            s = np.arange(lo, hi, dtype=np.float64)
            entries = []
            for k in range(tags):
                values = np.sin(s / 10_000 + k) + 1e-3 * ((s * 7919 + k) % 1000)
                flat = np.column_stack([s, 1e9 + s * 0.01, values]).ravel().tolist()
                entries.append(record_entry(encode_entry(f"tag{k}", flat)))
            f.write(frame(b"".join(entries)))


def bench_long(cache: Path, tags: int, steps: int, mode: str) -> dict:
    """One server over the long run: ``spill`` (the disk cache and its pyramid, built from
    the records: the cache folder is emptied first), ``warm`` (a restart that finds the
    cache ``spill`` left) or ``memory`` (every point in RAM, as before)."""
    target = cache / f"data-long-{tags}x{steps}"
    if not (target / ".done").exists():
        if target.exists():
            shutil.rmtree(target)
        t = time.perf_counter()
        write_long(target, tags, steps)
        (target / ".done").write_text("")
        print(f"  wrote long data in {time.perf_counter() - t:.1f} s", flush=True)
    scalar_dir = cache / "scalar-cache"
    if mode == "spill" and scalar_dir.exists():
        shutil.rmtree(scalar_dir)
    env = dict(os.environ, VISUALDL_CACHE_DIR=str(scalar_dir))
    if mode == "memory":
        env["VISUALDL_SPILL_POINTS"] = str(10**15)
        env["VISUALDL_NO_CACHE"] = "1"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    s = requests.Session()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "visualdl", "--logdir", str(target),
                             "--port", str(port), "--reload-interval", "5"], cwd=str(REPO),
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out: dict = {}
    try:
        while True:
            if time.perf_counter() - started > 1800:
                raise TimeoutError("long run not loaded within 1800 s")
            try:
                if s.get(url + "/api/info", timeout=60).json().get("loaded"):
                    break
            except (requests.ConnectionError, ValueError):
                pass
            time.sleep(0.05)
        out["load / cache build (s)"] = loaded = time.perf_counter() - started
        out["load speed (M points/s)"] = tags * steps / 1e6 / loaded
        body = s.get(url + "/api/scalars", params={"run": "long", "tag": "tag0",
                                                   "points": 1000}, timeout=120).json()
        assert body["total"] == steps, body.get("total")
        out["first full chart (s)"] = time.perf_counter() - started
        full = []
        for k in range(1, min(tags, 6)):
            t = time.perf_counter()
            s.get(url + "/api/scalars", params={"run": "long", "tag": f"tag{k}",
                                                "points": 1000}, timeout=120)
            full.append(time.perf_counter() - t)
        out["uncached full view (ms, median)"] = 1000 * statistics.median(full)
        rng = np.random.default_rng(0)
        windows = []
        for _ in range(40):
            width = int(10 ** rng.uniform(1, math.log10(steps)))
            lo = int(rng.integers(0, max(1, steps - width)))
            k = int(rng.integers(0, tags))
            t = time.perf_counter()
            r = s.get(url + "/api/scalars", params={"run": "long", "tag": f"tag{k}",
                                                    "points": 1000, "start_step": lo,
                                                    "end_step": lo + width}, timeout=120)
            windows.append(time.perf_counter() - t)
            assert r.status_code == 200
        out["window (ms, median)"] = 1000 * statistics.median(windows)
        out["window (ms, max)"] = 1000 * max(windows)
        out["RSS (MB)"] = rss_mb(proc.pid)
    finally:
        stop(proc)
    return out


# -- TensorBoard ---------------------------------------------------------------------------------
def bench_tensorboard(logdir: Path, cache: Path, runs: int, steps: int, idle: float) -> dict:
    tb = cache / "venvs" / "tensorboard-2.21.0" / "bin" / "tensorboard"
    if not tb.exists():
        tb = Path("/work/main/.bench/venvs/tensorboard-2.21.0/bin/tensorboard")
    if not tb.exists():
        return {"note": "TensorBoard 2.21 venv not found (see bench/server.py --setup-only)"}
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    last = run_name(runs - 1)
    workdir = cache / "peer-cwd"
    workdir.mkdir(parents=True, exist_ok=True)
    s = requests.Session()
    started = time.perf_counter()
    proc = subprocess.Popen([str(tb), "--logdir", str(logdir), "--host", "127.0.0.1",
                             "--port", str(port), "--load_fast=true"], cwd=str(workdir),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out: dict = {}
    try:
        while True:
            if time.perf_counter() - started > 900:
                raise TimeoutError("TensorBoard: no complete chart within 900 s")
            try:
                r = s.get(url + "/data/plugin/scalars/scalars",
                          params={"run": last, "tag": "tag0"}, timeout=60)
                if r.status_code == 200 and r.json() and \
                        max(p[1] for p in r.json()) >= steps - max(1, steps // 100):
                    break
            except (requests.ConnectionError, ValueError):
                pass
            time.sleep(0.05)
        out["first chart (s)"] = time.perf_counter() - started
        time.sleep(1.5)
        out["RSS (MB)"] = rss_mb(proc.pid)
        cpu0, t0 = cpu_seconds(proc.pid), time.perf_counter()
        time.sleep(idle)
        # TensorBoard reloads every 5 s by default: CPU per second of idling, x5 per reload
        per_s = (cpu_seconds(proc.pid) - cpu0) / (time.perf_counter() - t0)
        out["idle reload CPU (ms)"] = 1000 * per_s * 5
        out["grouped chart (ms)"] = "no grouping"
    finally:
        stop(proc)
    return out


# -- table ---------------------------------------------------------------------------------------
def fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if v < 10 else f"{v:.0f}"
    return str(v)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--tags", type=int, default=20)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle to measure")
    parser.add_argument("--cache", default=str(REPO / ".bench"))
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--tensorboard", action="store_true",
                        help="also run TensorBoard 2.21 --load_fast=true on event files")
    parser.add_argument("--repo", default=str(REPO),
                        help="the visualdl checkout to run (e.g. an export of the previous "
                             "commit, for before/after figures from one bench run)")
    parser.add_argument("--long", type=int, default=0, metavar="STEPS",
                        help="instead: one run of --tags tags x STEPS steps, disk cache vs RAM")
    args = parser.parse_args(argv)
    global SERVER_REPO
    SERVER_REPO = Path(args.repo).resolve()
    cache = Path(args.cache)
    if args.long:
        shape = f"1 run x {args.tags} tags x {args.long:,} steps"
        print(f"workload: {shape} ({args.tags * args.long / 1e6:.0f}M points)", flush=True)
        spill = bench_long(cache, args.tags, args.long, "spill")
        warm = bench_long(cache, args.tags, args.long, "warm")
        memory = bench_long(cache, args.tags, args.long, "memory") if args.tags * args.long \
            < 50_000_000 else {}
        print(f"\n| measure ({shape}) | disk cache, built from the records | restart, cache "
              "reused | all in RAM (before) |")
        print("|---|---|---|---|")
        for key, value in spill.items():
            print(f"| {key} | {fmt(value)} | {fmt(warm.get(key, ''))} | "
                  f"{fmt(memory.get(key, 'not run'))} |")
        return 0
    shape = f"{args.runs:,} runs x {args.tags} tags x {args.steps:,} steps"
    print(f"workload: {shape} ({args.runs * args.tags * args.steps / 1e6:.0f}M points)",
          flush=True)
    data = dataset(cache, "ours", args.runs, args.tags, args.steps)
    ours = bench_reader(data, args.runs)
    ours.update(bench_ours(data, args.runs, args.steps, args.idle, not args.no_browser))
    peer = {}
    if args.tensorboard:
        events = dataset(cache, "tb", args.runs, args.tags, args.steps)
        peer = bench_tensorboard(events, cache, args.runs, args.steps, args.idle)
    print()
    print(f"| measure ({shape}) | visualdl | target | TensorBoard 2.21 load_fast |")
    print("|---|---|---|---|")
    for key, value in ours.items():
        target = TARGETS.get(key)
        ok = "" if target is None or not isinstance(value, float) else (
            " ok" if value <= target else " MISSED")
        print(f"| {key} | {fmt(value)} | {fmt(target) if target else ''}{ok} | "
              f"{fmt(peer.get(key, '')) if peer else 'not run'} |")
    if peer.get("note"):
        print(f"\nTensorBoard: {peer['note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
