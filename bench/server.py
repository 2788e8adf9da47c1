"""Server benchmark: time to first chart, latency, response size and RSS, against the peers.

Workload: one run with 10 scalar tags x 100,000 steps (1M points), each server reading the
same values written by its own writer. Each peer lives in its own venv under
``.bench/venvs/`` (shared with bench/write_read.py; PyPI's ``visualdl==2.5.3`` shares our
import name, so it can only live in a venv) and runs from a folder outside the repository;
the data is written once and cached under ``.bench/data-*``:

* ours: ``python -m visualdl`` from this checkout; data written by our LogWriter.
* TensorBoard 2.21 with ``--load_fast=true`` and ``--load_fast=false``; data by tensorboardX 2.6.
* ours on TensorBoard's files (issue 12): ``visualdl --logdir`` on the same tensorboardX
  event files TensorBoard reads; its first chart is compared with TensorBoard
  ``--load_fast=true`` on those files (target: 1.5x sooner).
* VisualDL 2.5.3; data by its own LogWriter.

"Time to first chart" runs from process start until the server has answered the chart
request for ``tag0`` with the whole series loaded (ours: the downsampled view of all 100,000
points, ``total == 100000``; the peers: whatever sample they serve once it reaches the last
1% of steps; the table notes the sample size). First-chart runs are interleaved across the
servers so that load from other processes hits each alike; latency is the median of 20
requests for the same tag on a warm server, response size is measured on the wire (gzip when
the server offers it) and raw, RSS covers the server and its child processes.

Usage: python bench/server.py [--skip-peers] [--skip-tb-slow] [--repeats 5] [--only NAME[,NAME]] [--cache .bench]
       [--before DIR]  (another checkout, e.g. a git worktree of main: before/after in one run)
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import psutil
import requests

REPO = Path(__file__).resolve().parents[1]
TAGS = 10
STEPS = 100_000
TARGETS = "first chart >= 2.5x faster than TB fast and >= 15x faster than VisualDL; latency <= 10 ms; response <= 100 KB; RSS <= 300 MB"

# Each writer gets the same values: sin(step / 1000 + k) for tag k, at steps 0..STEPS-1.
WRITE_OURS = """
import math, sys
from visualdl import LogWriter
w = LogWriter(logdir=sys.argv[1])
for s in range({steps}):
    for k in range({tags}):
        w.add_scalar(f"tag{{k}}", math.sin(s / 1000 + k), step=s)
w.close()
"""
WRITE_TBX = """
import math, sys
from tensorboardX import SummaryWriter
w = SummaryWriter(logdir=sys.argv[1], max_queue=10000, flush_secs=60)
for s in range({steps}):
    for k in range({tags}):
        w.add_scalar(f"tag{{k}}", math.sin(s / 1000 + k), global_step=s)
w.close()
"""
# VisualDL 2.5.3's LogWriter has the same call shape as ours; its venv's interpreter runs it.
WRITE_VDL = WRITE_OURS


@dataclass
class Result:
    name: str
    first_chart: list[float] = field(default_factory=list)
    served_points: int = 0
    latency_ms: float = float("nan")
    wire_bytes: int = 0
    raw_bytes: int = 0
    rss_mb: float = float("nan")
    note: str = ""


# -- environments -----------------------------------------------------------------------------------
# The peers' venvs are shared with bench/write_read.py (one place that knows how to install
# them: tensorboardX 2.6 and TensorBoard 2.21 need separate venvs because of protobuf pins).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from write_read import (  # noqa: E402
    TENSORBOARD, TENSORBOARDX, VISUALDL, VenvSpec, ensure_venv, peer_env,
)


def write_data(python: Path, script: str, target: Path, env: dict | None = None, isolated: bool = True) -> Path:
    """Write the workload once; a marker file says it is complete."""
    marker = target / ".complete"
    if marker.exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    (target / "run").mkdir(parents=True)
    code = textwrap.dedent(script.format(steps=STEPS, tags=TAGS))
    started = time.perf_counter()
    flags = ["-I"] if isolated else []
    subprocess.run([str(python), *flags, "-c", code, str(target / "run")], check=True, env=env, cwd=target)
    print(f"  wrote {target.name} in {time.perf_counter() - started:.1f} s", flush=True)
    marker.write_text("ok")
    return target


# -- measuring ---------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    name: str
    cmd: list[str]
    url: str  # chart data for tag0, with {port}
    done: callable  # response JSON -> (complete?, points served)
    env: dict | None = None
    cwd: str | None = None  # peers run from outside the repository


def ours_done(body) -> tuple[bool, int]:
    return body.get("total") == STEPS, len(body.get("steps", []))


# A peer's sample is "the chart" once it reaches the end of the series. TensorBoard always
# keeps the newest point; VisualDL 2.5.3's reservoir usually does but not always (it served
# step 99,988 of 99,999 here), and it reads everything before it listens anyway.
NEAR_END = STEPS - STEPS // 100


def tb_done(body) -> tuple[bool, int]:
    return bool(body) and max(p[1] for p in body) >= NEAR_END, len(body)


def vdl_done(body) -> tuple[bool, int]:
    data = body.get("data") if isinstance(body, dict) else None
    if not data:
        return False, 0
    return max(p[1] for p in data) >= NEAR_END, len(data)


def rss_mb(pid: int) -> float:
    proc = psutil.Process(pid)
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        for child in psutil.Process(proc.pid).children(recursive=True):
            try:
                child.terminate()
            except psutil.Error:
                pass
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def first_chart(server: Server, timeout: float) -> tuple[float, int, subprocess.Popen, str]:
    """Start the server, poll the chart URL; returns (seconds, points, process, url)."""
    port = free_port()
    cmd = [c.format(port=port) for c in server.cmd]
    url = server.url.format(port=port)
    session = requests.Session()
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=server.env, cwd=server.cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    while True:
        elapsed = time.perf_counter() - started
        if elapsed > timeout:
            stop(proc)
            raise TimeoutError(f"{server.name}: no complete chart after {timeout:.0f} s")
        if proc.poll() is not None:
            raise RuntimeError(f"{server.name}: exited with {proc.returncode}")
        try:
            response = session.get(url, timeout=30)
            if response.status_code == 200:
                complete, points = server.done(response.json())
                if complete:
                    return time.perf_counter() - started, points, proc, url
        except (requests.ConnectionError, ValueError):
            pass
        time.sleep(0.01)


def steady_state(result: Result, url: str, proc: subprocess.Popen, repeats: int = 20) -> None:
    session = requests.Session()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        response = session.get(url, timeout=30)
        times.append(time.perf_counter() - t)
        response.raise_for_status()
    result.latency_ms = statistics.median(times) * 1000
    wire = session.get(url, timeout=30, headers={"Accept-Encoding": "gzip"}, stream=True)
    result.wire_bytes = len(wire.raw.read(decode_content=False))
    result.raw_bytes = len(session.get(url, timeout=30, headers={"Accept-Encoding": "identity"}).content)
    result.rss_mb = rss_mb(proc.pid)


def measure_all(servers: list[Server], repeats: int, timeout: float) -> list[Result]:
    """First-chart runs interleaved across servers (round-robin), so that load from other
    processes on the machine hits every server alike; steady state on each one's last run.
    TensorBoard --load_fast=false runs once (minutes)."""
    results = {s.name: Result(s.name) for s in servers}
    for i in range(repeats):
        for server in servers:
            result = results[server.name]
            slow = "load_fast=false" in server.name
            if result.note or (slow and i > 0):
                continue
            last = i == repeats - 1 or slow
            try:
                seconds, points, proc, url = first_chart(server, timeout)
            except (TimeoutError, RuntimeError, requests.RequestException) as err:
                result.note = f"failed: {err}"
                continue
            result.first_chart.append(seconds)
            result.served_points = points
            try:
                if last:
                    time.sleep(1.0)  # let background loading finish before steady state
                    steady_state(result, url, proc)
            finally:
                stop(proc)
            print(f"  {server.name}: first chart {seconds:.2f} s", flush=True)
    return list(results.values())


# -- the table -----------------------------------------------------------------------------------------
def table(results: list[Result]) -> str:
    ours = next((r for r in results if r.name == "visualdl (ours)" and r.first_chart), None)
    ours_first = statistics.median(ours.first_chart) if ours else float("nan")
    lines = [
        "| server | first chart (s, median) | peer/ours | points served | latency (ms, median of 20) | response wire / raw (KB) | RSS (MB) | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if not r.first_chart:
            lines.append(f"| {r.name} | - | - | - | - | - | - | {r.note} |")
            continue
        first = statistics.median(r.first_chart)
        ratio = "1.0" if r is ours else (f"{first / ours_first:.2f}x slower" if ours else "-")
        lines.append(
            f"| {r.name} | {first:.2f} (n={len(r.first_chart)}) | {ratio} | {r.served_points:,} of {STEPS:,} "
            f"| {r.latency_ms:.1f} | {r.wire_bytes / 1024:.1f} / {r.raw_bytes / 1024:.1f} | {r.rss_mb:.0f} | {r.note} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=REPO / ".bench")
    parser.add_argument("--skip-peers", action="store_true", help="measure only ours")
    parser.add_argument("--skip-tb-slow", action="store_true", help="skip TensorBoard --load_fast=false (minutes)")
    parser.add_argument("--repeats", type=int, default=5, help="first-chart repeats (TB slow runs once)")
    parser.add_argument("--setup-only", action="store_true", help="create venvs and data, then exit")
    parser.add_argument("--only", help="measure only servers whose name contains this text")
    parser.add_argument(
        "--before", type=Path, metavar="DIR",
        help="also serve the TensorBoard files with the visualdl package of another checkout "
        "(e.g. `git worktree add /tmp/before main`), in the same interleaved runs: "
        "before/after figures from one run")
    args = parser.parse_args(argv)
    cache = args.cache.resolve()
    cache.mkdir(parents=True, exist_ok=True)
    ours_python = ours_interpreter(cache)
    ours_env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))

    print("preparing data (cached in %s)" % cache, flush=True)
    ours_dir = write_data(Path(ours_python), WRITE_OURS, cache / "data-ours", ours_env, isolated=False)
    servers = [
        Server(
            "visualdl (ours)",
            [ours_python, "-m", "visualdl", "--logdir", str(ours_dir), "--port", "{port}"],
            "http://127.0.0.1:{port}/api/scalars?run=run&tag=tag0&points=1000",
            ours_done,
            ours_env,
        )
    ]
    skipped: list[Result] = []
    if not args.skip_peers:
        peers = prepare_peers(cache, args.skip_tb_slow, skipped, (ours_python, ours_env),
                              args.before)
        servers.extend(peers)
    if args.setup_only:
        return 0
    if args.only:
        wanted = [w.strip().lower() for w in args.only.split(",") if w.strip()]
        servers = [s for s in servers if any(w in s.name.lower() for w in wanted)]
    results = measure_all(servers, args.repeats, timeout=600)
    results.extend(skipped)
    print()
    print(f"Workload: {TAGS} tags x {STEPS:,} steps = {TAGS * STEPS:,} points, one run. Targets: {TARGETS}.")
    print(table(results))
    print(verdicts(results))
    return 0


def verdicts(results: list[Result]) -> str:
    """The issue's targets, each with PASS or MISS, from this run's medians."""
    by_name = {r.name: r for r in results if r.first_chart}
    ours = by_name.get("visualdl (ours)")
    checks = []
    if ours is not None:
        first = statistics.median(ours.first_chart)
        checks = [("latency of one 100,000-point series", ours.latency_ms, "<=", 10.0, "ms"),
                  ("response size", ours.wire_bytes / 1024, "<=", 100.0, "KB"),
                  ("server RSS", ours.rss_mb, "<=", 300.0, "MB")]
        for peer, target in (("TensorBoard 2.21 --load_fast=true", 2.5),
                             ("VisualDL 2.5.3", 15.0)):
            if peer in by_name:
                ratio = statistics.median(by_name[peer].first_chart) / first
                checks.append((f"first chart vs {peer}", ratio, ">=", target, "x"))
    on_tb = by_name.get(OURS_ON_TB)
    tb_fast = by_name.get("TensorBoard 2.21 --load_fast=true")
    if on_tb and tb_fast:
        ratio = statistics.median(tb_fast.first_chart) / statistics.median(on_tb.first_chart)
        checks.append(("first chart on the same event files vs TB fast (issue 12)", ratio,
                       ">=", 1.5, "x"))
    if not checks:
        return "no result for ours"
    lines = ["Targets (issues 3 and 12), from this run:"]
    for name, value, op, target, unit in checks:
        ok = value <= target if op == "<=" else value >= target
        lines.append(f"  {name:<58} {value:8.2f} {unit:<3} target {op} {target:g} {unit}  "
                     f"{'PASS' if ok else 'MISS'}")
    for name, before in by_name.items():
        if name.startswith(f"{OURS_ON_TB} (before") and on_tb:
            was, now = (statistics.median(r.first_chart) for r in (before, on_tb))
            vs_tb = f"; TB fast / before {statistics.median(tb_fast.first_chart) / was:.2f}x" \
                if tb_fast else ""
            lines.append(f"  first chart on the event files, before -> now: {was:.2f} s -> "
                         f"{now:.2f} s ({was / now:.2f}x sooner{vs_tb})")
    return "\n".join(lines)


def ours_interpreter(cache: Path) -> str:
    """A venv of its own for ours too, holding only our runtime dependencies.

    The peers start from clean venvs; ours would otherwise start in the development
    environment, whose extra packages (test tools, numba-cuda's import hook, the editable
    install's finder) add interpreter start-up time a user's install does not have. The
    code itself comes from this checkout through PYTHONPATH, its bytecode compiled first.
    """
    try:
        import tomllib

        with open(REPO / "pyproject.toml", "rb") as f:
            deps = tuple(tomllib.load(f)["project"]["dependencies"])
    except (ImportError, OSError, KeyError) as err:
        print(f"  ours runs in this interpreter ({err})", flush=True)
        return sys.executable
    workdir = cache / "peer-cwd"
    workdir.mkdir(exist_ok=True)
    python, why = ensure_venv(VenvSpec("visualdl-ours-deps", deps, "flask"), str(workdir))
    if why:
        print(f"  ours runs in this interpreter: {why}", flush=True)
        python = sys.executable
    # pip compiles a package's bytecode when it installs it, as it did the peers'; code run
    # from the checkout would be compiled again at every start wherever
    # PYTHONDONTWRITEBYTECODE is set (it is on our machines).
    subprocess.run([python, "-m", "compileall", "-q", str(REPO / "visualdl")], check=True)
    return python


OURS_ON_TB = "visualdl (ours) on the TensorBoard files"


def prepare_peers(cache: Path, skip_tb_slow: bool, skipped: list[Result],
                  ours: tuple[str, dict], before: Path | None = None) -> list[Server]:
    """Venvs (shared with write_read.py), data written by each peer's own writer, commands;
    and ours serving TensorBoard's files (``ours``: its interpreter and environment; and
    ``before``, another checkout's package, run by the same interpreter)."""
    servers = []
    env = peer_env()
    workdir = cache / "peer-cwd"
    workdir.mkdir(exist_ok=True)
    writer, why_w = ensure_venv(TENSORBOARDX, str(workdir))
    reader, why_r = ensure_venv(TENSORBOARD, str(workdir))
    if why_w or why_r:
        skipped.append(Result("TensorBoard 2.21", note=f"could not be set up: {why_w or why_r}"))
    else:
        tb_dir = write_data(Path(writer), WRITE_TBX, cache / "data-tb", env)
        tb = str(Path(reader).parent / "tensorboard")
        servers.append(Server(
            OURS_ON_TB, [ours[0], "-m", "visualdl", "--logdir", str(tb_dir), "--port", "{port}"],
            "http://127.0.0.1:{port}/api/scalars?run=run&tag=tag0&points=1000",
            ours_done, ours[1]))
        if before is not None:
            servers.append(before_server(before, ours, tb_dir))
        for fast in ("true", "false"):
            if fast == "false" and skip_tb_slow:
                skipped.append(Result("TensorBoard 2.21 --load_fast=false", note="skipped (--skip-tb-slow)"))
                continue
            servers.append(
                Server(
                    f"TensorBoard 2.21 --load_fast={fast}",
                    [tb, "--logdir", str(tb_dir), "--host", "127.0.0.1", "--port", "{port}", f"--load_fast={fast}"],
                    "http://127.0.0.1:{port}/data/plugin/scalars/scalars?run=run&tag=tag0",
                    tb_done,
                    env,
                    str(workdir),
                )
            )
    python, why = ensure_venv(VISUALDL, str(workdir))
    if why:
        skipped.append(Result("VisualDL 2.5.3", note=f"could not be set up: {why}"))
    else:
        vdl_dir = write_data(Path(python), WRITE_VDL, cache / "data-vdl", env)
        servers.append(
            Server(
                "VisualDL 2.5.3",
                [str(Path(python).parent / "visualdl"), "--logdir", str(vdl_dir), "--host", "127.0.0.1", "--port", "{port}"],
                # VisualDL names a run by its path as given under --logdir
                "http://127.0.0.1:{port}/app/api/scalar/list?"
                + urlencode({"run": str(vdl_dir / "run"), "tag": "tag0"}),
                vdl_done,
                env,
                str(workdir),
            )
        )
    return servers


def before_server(checkout: Path, ours: tuple[str, dict], tb_dir: Path) -> Server:
    """Ours from another checkout (its ``visualdl`` package first on PYTHONPATH, bytecode
    compiled as ours is) on the TensorBoard files."""
    checkout = checkout.resolve()
    if not (checkout / "visualdl" / "__init__.py").is_file():
        raise SystemExit(f"--before: {checkout} holds no visualdl package")
    subprocess.run([ours[0], "-m", "compileall", "-q", str(checkout / "visualdl")], check=True)
    env = dict(ours[1], PYTHONPATH=os.pathsep.join(
        filter(None, [str(checkout), os.environ.get("PYTHONPATH")])))
    return Server(f"{OURS_ON_TB} (before: {checkout.name})",
                  [ours[0], "-m", "visualdl", "--logdir", str(tb_dir), "--port", "{port}"],
                  "http://127.0.0.1:{port}/api/scalars?run=run&tag=tag0&points=1000",
                  ours_done, env)


if __name__ == "__main__":
    sys.exit(main())
