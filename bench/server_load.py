"""Server under hostile load (issue 13): slow clients, concurrent t-SNE, a maximum batch,
pathological Markdown. Prints one table per part, to compare before and after a change.

(a) slow:     150 clients send a request header one byte per second (for at most 25 s)
              while 30 normal ``GET /api/runs`` run at once: how many are served, latency.
(b) tsne:     8 t-SNE projections (8 tags, 1,000 x 32, none cached) requested at once while
              ``/api/runs`` is polled: its latency before and during, and what the 8 got.
(c) batch:    the maximum scalar batch, 2,000 series x ``points=1000000`` (40 runs x 50
              tags x 2,000 steps): time, response size, server RSS before and at peak.
(d) markdown: ``render_markdown`` of pathological text in a child process each (killed after
              ``--md-timeout`` s): time and peak RSS.

The server is ``python -m visualdl`` from this checkout in a child process on 127.0.0.1
with a free port; every client has a timeout and every loop a bound; the children are
ended by their own handles. The data is written to a temporary folder, removed at the end.

Usage: python bench/server_load.py [--only slow,tsne,batch,markdown] [--md-timeout 60]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import requests

REPO = Path(__file__).resolve().parents[1]
PARTS = ("slow", "tsne", "batch", "markdown")
RUNS, TAGS, STEPS = 40, 50, 2000
EMB_TAGS, EMB_ROWS, EMB_DIMS = 8, 1000, 32


def _env() -> dict[str, str]:
    rest = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), *([rest] if rest else [])]))


WRITE = """
import sys, numpy as np
from visualdl import LogWriter
root, runs, tags, steps, etags, rows, dims = sys.argv[1], *map(int, sys.argv[2:])
values = np.sin(np.arange(steps) / 100.0)
for r in range(runs):
    with LogWriter(logdir=f"{root}/r{r:02d}") as w:
        for t in range(tags):
            for s in range(steps):
                w.add_scalar(f"t{t:02d}", float(values[s] + t), step=s)
rng = np.random.default_rng(0)
with LogWriter(logdir=f"{root}/emb") as w:
    for k in range(etags):
        w.add_embeddings(f"e{k}", rng.normal(size=(rows, dims)).astype("float32"),
                         metadata=[str(i % 10) for i in range(rows)])
"""


def write_data(root: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", WRITE, str(root), str(RUNS), str(TAGS), str(STEPS),
                    str(EMB_TAGS), str(EMB_ROWS), str(EMB_DIMS)], env=_env(), check=True,
                   cwd=REPO, timeout=600)
    return time.perf_counter() - start


class Server:
    """``python -m visualdl --logdir ROOT --port 0`` as a child, from ``repo`` (this checkout
    by default: bench/hostile.py runs another's); ``stop()`` ends it."""

    def __init__(self, root: Path, repo: Path = REPO) -> None:
        rest = os.environ.get("PYTHONPATH")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(repo), *([rest] if rest else [])]))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "visualdl", "--logdir", str(root), "--port", "0",
             "--reload-interval", "600"],
            cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.url = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self.url:
            line = self.proc.stdout.readline()
            if not line:
                break
            found = re.search(r"serving at (http://[^/]+)/", line)
            if found:
                self.url = found.group(1).replace("localhost", "127.0.0.1")
        if not self.url:
            self.stop()
            raise RuntimeError("the server did not start")
        threading.Thread(target=self._drain, daemon=True).start()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if requests.get(self.url + "/api/info", timeout=30).json().get("loaded"):
                return
            time.sleep(0.2)
        raise RuntimeError("the server did not load the logdir in 300 s")

    def _drain(self) -> None:
        for _ in self.proc.stdout:
            pass

    def rss(self) -> int:
        try:
            return psutil.Process(self.proc.pid).memory_info().rss
        except psutil.Error:
            return 0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def _ms(values: list[float]) -> str:
    if not values:
        return "-"
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"{statistics.median(values) * 1000:.0f} / {p95 * 1000:.0f} / {values[-1] * 1000:.0f}"


# -- (a) slow clients ---------------------------------------------------------------------------
def part_slow(server: Server) -> list[tuple[str, str]]:
    host, port = urlsplit(server.url).hostname, urlsplit(server.url).port
    stop = threading.Event()
    opened, dropped = [0], [0]
    lock = threading.Lock()

    def slow_client() -> None:
        try:
            sock = socket.create_connection((host, port), timeout=5)
        except OSError:
            return
        with lock:
            opened[0] += 1
        try:
            sock.sendall(b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            for _ in range(25):  # a byte a second, 25 s at most
                if stop.wait(1.0):
                    return
                sock.sendall(b"x")
        except OSError:
            with lock:
                dropped[0] += 1
        finally:
            sock.close()

    slow = [threading.Thread(target=slow_client, daemon=True) for _ in range(150)]
    for t in slow:
        t.start()
    time.sleep(2.0)

    def normal(_: int) -> float | None:
        start = time.perf_counter()
        try:
            ok = requests.get(server.url + "/api/runs", timeout=10).status_code == 200
        except requests.RequestException:
            return None
        return time.perf_counter() - start if ok else None

    with ThreadPoolExecutor(30) as pool:
        results = list(pool.map(normal, range(30)))
    served = [r for r in results if r is not None]
    time.sleep(12.0)  # long enough for a 10 s header deadline to act on the slow ones
    stop.set()
    for t in slow:
        t.join(10)
    return [("slow clients connected", f"{opened[0]} of 150"),
            ("normal requests served (10 s timeout)", f"{len(served)} of 30"),
            ("their latency ms p50 / p95 / max", _ms(served)),
            ("slow clients cut off by the server within 14 s", str(dropped[0]))]


# -- (b) t-SNE while polling /api/runs ------------------------------------------------------------
def part_tsne(server: Server) -> list[tuple[str, str]]:
    def poll(seconds: float, until: threading.Event | None = None) -> list[float]:
        out = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not (until and until.is_set()):
            start = time.perf_counter()
            try:
                requests.get(server.url + "/api/runs", timeout=60)
                out.append(time.perf_counter() - start)
            except requests.RequestException:
                out.append(60.0)
            time.sleep(0.1)
        return out

    idle = poll(3.0)
    done = threading.Event()

    def projection(k: int) -> tuple[int, float]:
        start = time.perf_counter()
        try:
            status = requests.get(server.url + "/api/embeddings/projection", timeout=150, params={
                "run": "emb", "tag": f"e{k}", "step": 0, "method": "tsne", "dims": 2}).status_code
        except requests.RequestException:
            status = 0
        return status, time.perf_counter() - start

    start = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(projection, k) for k in range(EMB_TAGS)]
        watcher = threading.Thread(target=lambda: ([f.result() for f in futures], done.set()),
                                   daemon=True)
        watcher.start()
        busy = poll(150.0, done)
        results = [f.result() for f in futures]
    elapsed = time.perf_counter() - start
    statuses: dict[int, int] = {}
    for status, _ in results:
        statuses[status] = statuses.get(status, 0) + 1
    return [("/api/runs ms p50 / p95 / max, idle", _ms(idle)),
            ("/api/runs ms p50 / p95 / max, during 8 t-SNE", _ms(busy)),
            ("t-SNE answers (status: count)", ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))),
            ("t-SNE slowest answer s", f"{max(t for _, t in results):.1f}"),
            ("all 8 answered after s", f"{elapsed:.1f}")]


# -- (c) the maximum batch --------------------------------------------------------------------
def part_batch(server: Server) -> list[tuple[str, str]]:
    series = [{"run": f"r{r:02d}", "tag": f"t{t:02d}"} for r in range(RUNS) for t in range(TAGS)]
    base = server.rss()
    peak = [base]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            try:
                peak[0] = max(peak[0], server.rss())
            except psutil.Error:
                return
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    response = requests.post(server.url + "/api/scalars/batch", timeout=300,
                             json={"series": series, "points": 1_000_000},
                             headers={"Accept-Encoding": "identity"})
    elapsed = time.perf_counter() - start
    stop.set()
    sampler.join(5)
    body = response.json() if response.status_code == 200 else {}
    points = sum(len(s.get("values", ())) for s in body.get("series", ()))
    return [("status", str(response.status_code)),
            ("series x points asked", f"{len(series)} x 1,000,000"),
            ("points answered", f"{points:,} ({body.get('points')} per series)"),
            ("time s", f"{elapsed:.2f}"),
            ("response MB", f"{len(response.content) / 1e6:.1f}"),
            ("server RSS MB before / peak", f"{base / 1e6:.0f} / {peak[0] / 1e6:.0f}")]


# -- (d) pathological Markdown --------------------------------------------------------------
MD_CASES = {
    "16,000 '[' + 320 '](' (17 KB)": "'[' * 16000 + '](' * 320",
    "50,000 '[' + 1,000 '](' (52 KB)": "'[' * 50000 + '](' * 1000",
    "list nested 600 deep (1.2 KB)": "'- ' * 600 + 'x'",
    "list 2,000 levels, indented (4 MB)": "''.join('  ' * i + '- x\\n' for i in range(2000))",
    "ordinary notes, 90 KB": "'Some **bold** text, a [link](https://example.org) and `code`.\\n\\n' * 1400",
}
MD_CHILD = """
import json, resource, sys, time
from visualdl.kinds.text.api import render_markdown
text = eval(sys.argv[1])
start = time.perf_counter()
try:
    html = render_markdown(text)
    outcome = f"ok, {len(html):,} chars of HTML"
except RecursionError:
    outcome = "RecursionError"
elapsed = time.perf_counter() - start
print(json.dumps({"s": elapsed, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "outcome": outcome}))
"""


def part_markdown(timeout: float) -> list[tuple[str, str]]:
    rows = []
    for name, expr in MD_CASES.items():
        try:
            done = subprocess.run([sys.executable, "-c", MD_CHILD, expr], env=_env(), cwd=REPO,
                                  capture_output=True, text=True, timeout=timeout)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append((name, f"{result['s']:.2f} s, peak RSS {result['rss'] / 1024:.0f} MB, "
                               f"{result['outcome']}"))
        except subprocess.TimeoutExpired:
            rows.append((name, f"> {timeout:.0f} s (killed)"))
        except (ValueError, IndexError):
            rows.append((name, "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]))
    return rows


def _table(title: str, rows: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in rows)
    print(f"\n{title}")
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(PARTS), help="parts to run (comma-separated)")
    parser.add_argument("--md-timeout", type=float, default=60.0)
    args = parser.parse_args()
    parts = [p for p in args.only.split(",") if p]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    head = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h %s"],
                          capture_output=True, text=True).stdout.strip()
    print(f"server_load on {head[:90]}")
    if "markdown" in parts:
        _table("(d) Markdown rendering, one child process per case", part_markdown(args.md_timeout))
    server_parts = [p for p in parts if p != "markdown"]
    if not server_parts:
        return 0
    root = Path(tempfile.mkdtemp(prefix="visualdl-load-"))
    server = None
    try:
        print(f"\nwriting {RUNS} runs x {TAGS} tags x {STEPS} steps and {EMB_TAGS} embeddings: "
              f"{write_data(root):.1f} s")
        started = time.perf_counter()
        server = Server(root)
        print(f"server loaded in {time.perf_counter() - started:.1f} s, RSS {server.rss() / 1e6:.0f} MB")
        if "batch" in parts:  # first: its RSS figure is not inflated by the other parts
            _table("(c) the maximum scalar batch", part_batch(server))
        if "slow" in parts:
            _table("(a) 150 slow clients + 30 normal requests", part_slow(server))
        if "tsne" in parts:
            _table("(b) 8 uncached t-SNE requests while /api/runs is polled", part_tsne(server))
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
