"""Hostile logdir and hostile requests (issue 29): how long the worst hostile request takes
to be answered, and how ``GET /api/runs`` fares meanwhile. Prints one table.

The logdir holds every class of issue 29: a trace whose event args nest 200,000 deep, a
trace with ``ProfilerStep#<20 digits>``, a trace that is a symlink to a file outside the
logdir, a gzip bomb trace (``--bomb-mib`` of JSON whitespace, 1 GiB by default, from a few
MB on disk), custom-scalars layouts with a backtracking regex (logged by the writer) and
with a huge repeat count and 1,000 nested groups (written past the writer's checks), and
runs whose 40-character names a backtracking grouping regex never finishes with.

The server is ``python -m visualdl --logdir DIR --port 0`` from ``--repo`` (default: this
checkout), so the same script measures an old checkout and a new one in one sitting. The
requests go one at a time, each with a client timeout of ``--timeout`` seconds (a timeout
is reported as such); the ones that would stall a backtracking engine go last. Then the
three slowest are sent again, each in a loop of its own, for ``--load-seconds``. A second
client polls ``/api/runs`` every 0.1 s throughout: its p95 is reported idle, during each
request, and while the three slowest loop. Every child and thread is ended by its own handle;
the data is written to a temporary folder, removed at the end.

Usage: python bench/hostile.py [--repo PATH] [--timeout 30] [--bomb-mib 1024] [--load-seconds 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_load import Server  # noqa: E402  (bench/server_load.py)

REPO = Path(__file__).resolve().parents[1]
LONG_RUNS = ["a" * 40 + "_b", "lr0.1_seed" + "1" * 30, "lr0.01_seed" + "2" * 30]
NESTED_REGEX = "(" * 1000 + "x" + ")" * 1000

WRITE = r"""
import json, sys
from visualdl import LogWriter
from visualdl.format.record_pb2 import Entry, Record
from visualdl.writer.record_file import RecordFileWriter
root, long_runs, nested = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
for i, run in enumerate(long_runs + [f"r{k:02d}" for k in range(20)]):
    with LogWriter(logdir=f"{root}/{run}") as w:
        for s in range(200):
            w.add_scalar("loss", float(i + s), s)
        if i == 0:
            w.add_custom_scalars({"Hostile": {"backtracks": ["Multiline", ["(a+)+$", "^loss$"]]}})
for run, pattern in (("layout_huge", "x{4294967295}"), ("layout_nested", nested)):
    with LogWriter(logdir=f"{root}/{run}") as w:
        w.add_scalar("keep", 1.0, 0)
        path = w.file_name
    entry = Entry()
    entry.custom_scalars.layout_json = json.dumps({"H": {"c": ["Multiline", [pattern]]}})
    f = RecordFileWriter(path)
    f.write([Record(entries=[entry]).SerializeToString()])
    f.close()
"""

OP = {"ph": "X", "name": "aten::mm", "ts": 2, "dur": 3, "pid": 1, "tid": 1, "cat": "cpu_op"}


def _step(name: str) -> dict:
    return {"ph": "X", "name": name, "ts": 0, "dur": 10, "pid": 1, "tid": 1,
            "cat": "user_annotation"}


def write_traces(root: Path, outside: Path, bomb_mib: int) -> None:
    """The four hostile traces, each run ``<class>`` with worker ``w0``."""
    def trace(run: str, text: str | bytes, name: str = "w0.1.pt.trace.json") -> Path:
        (root / run).mkdir(parents=True, exist_ok=True)
        path = root / run / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        return path

    deep = "[" * 200_000 + "]" * 200_000
    event = json.dumps(_step("ProfilerStep#1"))[:-1] + ', "args": {"deep": ' + deep + "}}"
    trace("trace_nested", '{"traceEvents": [' + event + ", " + json.dumps(OP) + "]}")
    trace("trace_bigstep", json.dumps({"traceEvents": [_step("ProfilerStep#" + "9" * 20), OP]}))
    secret = outside / "secret.pt.trace.json"
    secret.write_text(json.dumps({"traceEvents": [_step("ProfilerStep#1"), OP]}))
    (root / "trace_linked").mkdir()
    os.symlink(secret, root / "trace_linked" / "w0.1.pt.trace.json")
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip stream
    parts = [packer.compress(b'{"traceEvents": [' + json.dumps(_step("ProfilerStep#1")).encode())]
    blank = b" " * (1 << 20)
    parts += [packer.compress(blank) for _ in range(bomb_mib)]
    parts.append(packer.compress(b"]}") + packer.flush())
    trace("trace_bomb", b"".join(parts), "w0.1.pt.trace.json.gz")


def hostile_requests() -> list[tuple[str, str, str, dict]]:
    """(name, method, path, params or JSON body); those a backtracking engine stalls on last."""
    out: list[tuple[str, str, str, dict]] = []
    for run in ("trace_nested", "trace_bigstep", "trace_linked", "trace_bomb"):
        for route in ("/api/profile", "/api/profile/overview", "/api/profile/operators"):
            out.append((f"{route.rsplit('/', 1)[-1]} {run}", "GET", route,
                        {"run": run, "tag": "w0"}))
    out += [
        ("layouts (backtracking, huge repeat, nested)", "GET", "/api/scalars/layouts", {}),
        ("run table, 100k-char tag", "GET", "/api/runs/table", {"tag": ["loss", "x" * 100_000]}),
        ("window, 5000-digit start_step", "GET", "/api/scalars",
         {"run": LONG_RUNS[0], "tag": "loss", "start_step": "9" * 5000}),
        ("batch, body nested 100k deep", "POSTRAW", "/api/scalars/batch",
         {"data": '{"series": ' + "[" * 100_000 + "]" * 100_000 + "}"}),
        ("groups x{4294967295}", "POST", "/api/scalars/groups", {"tag": "loss", "regex": "x{4294967295}"}),
        ("groups 1000 nested groups", "POST", "/api/scalars/groups", {"tag": "loss", "regex": NESTED_REGEX}),
        ("groups (a)\\1", "POST", "/api/scalars/groups", {"tag": "loss", "regex": r"(a)\1"}),
        ("groups (a+)+$", "POST", "/api/scalars/groups", {"tag": "loss", "regex": "(a+)+$"}),
        ("groups (.*)*X", "POST", "/api/scalars/groups", {"tag": "loss", "regex": "(.*)*X"}),
    ]
    return out


class Poller:
    """A second client: ``GET /api/runs`` every 0.1 s; a timeout counts as its limit."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url, self.timeout = url, timeout
        self.samples: list[tuple[float, float]] = []  # (start, seconds)
        self.peak_rss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        session = requests.Session()
        while not self._stop.is_set():
            start = time.monotonic()
            try:
                session.get(self.url + "/api/runs", timeout=self.timeout)
                took = time.monotonic() - start
            except requests.RequestException:
                took = self.timeout
            self.samples.append((start, took))
            self._stop.wait(0.1)

    def settle(self, end: float) -> None:
        """Wait until a poll that started after ``end`` is in (the polls under way then,
        which may be waiting on a stalled server, are counted once they end)."""
        deadline = time.monotonic() + self.timeout + 5
        while time.monotonic() < deadline and not any(s > end for s, _ in self.samples[-3:]):
            time.sleep(0.02)

    def between(self, start: float, end: float) -> list[float]:
        self.settle(end)
        return [t for s, t in self.samples if start <= s <= end or s <= start <= s + t]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(self.timeout + 5)


def fire(url: str, method: str, path: str, args: dict, timeout: float,
         server: Server) -> tuple[str, float, int]:
    """One request, following 503 + Retry-After until ``timeout``: (status, seconds, peak RSS)."""
    start = time.monotonic()
    peak = server.rss()
    while True:
        left = timeout - (time.monotonic() - start)
        try:
            if method == "GET":
                r = requests.get(url + path, params=args, timeout=max(left, 0.1))
            elif method == "POST":
                r = requests.post(url + path, json=args, timeout=max(left, 0.1))
            else:
                r = requests.post(url + path, data=args["data"], timeout=max(left, 0.1),
                                  headers={"Content-Type": "application/json"})
        except requests.RequestException as exc:
            status = "timeout" if isinstance(exc, requests.Timeout) else type(exc).__name__
            return status, time.monotonic() - start, max(peak, server.rss())
        peak = max(peak, server.rss())
        wait = float(r.headers.get("Retry-After", "1") or 1)
        if r.status_code != 503 or time.monotonic() - start + wait > timeout:
            return str(r.status_code), time.monotonic() - start, peak
        time.sleep(wait)


def under_load(server: Server, poller: Poller, chosen: list[tuple], opts) -> tuple[list, int]:
    """``chosen`` requests, each looping in a thread of its own for ``--load-seconds`` (a
    request under way is waited for, up to its timeout): the /api/runs latencies meanwhile
    and how many hostile answers came."""
    until = time.monotonic() + opts.load_seconds
    answers = [0]

    def loop(method: str, path: str, args: dict) -> None:
        while time.monotonic() < until:
            fire(server.url, method, path, args, opts.timeout, server)
            answers[0] += 1

    threads = [threading.Thread(target=loop, args=c[1:], daemon=True) for c in chosen]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(opts.load_seconds + opts.timeout + 5)
    return poller.between(start, time.monotonic()), answers[0]


def p95(values: list[float]) -> str:
    if not values:
        return "-"
    values = sorted(values)
    return f"{values[min(len(values) - 1, int(0.95 * len(values)))] * 1000:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=REPO, help="checkout to import visualdl from")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    parser.add_argument("--bomb-mib", type=int, default=1024, help="the gzip bomb, inflated")
    parser.add_argument("--load-seconds", type=float, default=10.0,
                        help="how long the three slowest requests loop together")
    opts = parser.parse_args()
    repo = opts.repo.resolve()
    tmp = Path(tempfile.mkdtemp(prefix="vdl-hostile-"))
    server = poller = None
    try:
        root, outside = tmp / "logs", tmp / "outside"
        root.mkdir()
        outside.mkdir()
        subprocess.run([sys.executable, "-c", WRITE, str(root), json.dumps(LONG_RUNS),
                        NESTED_REGEX], env=dict(os.environ, PYTHONPATH=str(repo)), cwd=repo,
                       check=True, timeout=300)
        write_traces(root, outside, opts.bomb_mib)
        server = Server(root, repo)
        poller = Poller(server.url, opts.timeout)
        time.sleep(3)  # an idle baseline for /api/runs
        idle = [t for _, t in poller.samples]
        rows = []
        by_name = {r[0]: r for r in hostile_requests()}
        for name, method, path, args in hostile_requests():
            start = time.monotonic()
            status, took, rss = fire(server.url, method, path, args, opts.timeout, server)
            rows.append((name, status, took, poller.between(start, time.monotonic()), rss))
        slowest = sorted(rows, key=lambda r: r[2])[-3:]
        loaded = under_load(server, poller, [by_name[r[0]] for r in slowest], opts)
        poller.stop()
        report(repo, opts, idle, rows, slowest, loaded)
    finally:
        if poller is not None:
            poller.stop()
        if server is not None:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def report(repo: Path, opts: argparse.Namespace, idle: list[float], rows: list,
           slowest: list, loaded: tuple[list, int]) -> None:
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "?"
    print(f"\nhostile requests against {repo} ({commit}); timeout {opts.timeout:g} s, "
          f"gzip bomb {opts.bomb_mib} MiB inflated")
    print(f"{'request':<46} {'status':>8} {'seconds':>8} {'runs p95 ms':>12} {'polls':>6} "
          f"{'server RSS MB':>14}")
    for name, status, took, during, rss in rows:
        print(f"{name:<46} {status:>8} {took:>8.2f} {p95(during):>12} {len(during):>6} "
              f"{rss / 2**20:>14.0f}")
    worst = max(rows, key=lambda r: r[2])
    during, answers = loaded
    print(f"\nworst answer: {worst[2]:.2f} s, status {worst[1]} ({worst[0]})")
    print(f"/api/runs p95 idle: {p95(idle)} ms over {len(idle)} polls")
    print(f"/api/runs p95 while the 3 slowest looped for {opts.load_seconds:g} s "
          f"({' | '.join(r[0] for r in slowest)}; {answers} hostile answers): {p95(during)} ms "
          f"over {len(during)} polls, {sum(t >= opts.timeout for t in during)} timed out")


if __name__ == "__main__":
    main()
