"""Notebook servers: how long ``%visualdl`` takes to show a dashboard with data, cold and
reused, against TensorBoard's notebook manager (what ``%tensorboard`` runs) on the same
event files.

    python bench/notebook.py [--repeats 5] [--points 10000]

For each system and repeat: ``start`` (a fresh server process, until it serves),
``data`` (from the call until the scalar series answers with every point, or
TensorBoard's 1,000-point sample: what the iframe's first chart waits for), ``reuse`` (a
second call with the same arguments; ours also asks the port whether the server answers,
TensorBoard's only reads its info file, so a hung or replaced server is reused). Medians in milliseconds; ratios are TensorBoard / ours.
TensorBoard is skipped when the ``tensorboard`` package is not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
TAG = "loss"


def write_events(root: Path, points: int) -> None:
    """One run of TensorBoard event files (both systems read them), written with our
    tfevents-compatible path when torch is missing."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        SummaryWriter = None
    if SummaryWriter is not None:
        writer = SummaryWriter(log_dir=str(root / "train"))
        for step in range(points):
            writer.add_scalar(TAG, 1.0 / (1 + step), step)
        writer.close()
        return
    from visualdl import LogWriter  # ours only: TensorBoard would find nothing

    with LogWriter(logdir=str(root / "train")) as writer:
        for step in range(points):
            writer.add_scalar(TAG, 1.0 / (1 + step), step=step)


def fetch_json(url: str) -> object | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.load(response)
    except (OSError, ValueError):
        return None


def wait(predicate, timeout: float = 120.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("no data in time")
        time.sleep(0.01)


def run_ours(logdir: Path, points: int) -> dict[str, float]:
    from visualdl import notebook

    began = time.perf_counter()
    info = notebook.start(["--logdir", str(logdir)])
    started = time.perf_counter()
    url = f"{info.url}api/scalars?run=train&tag={TAG}&points={points}"

    def complete() -> bool:
        body = fetch_json(url)
        return isinstance(body, dict) and len(body.get("steps", [])) == points

    wait(complete)
    loaded = time.perf_counter()
    again = notebook.start(["--logdir", str(logdir)])
    reused = time.perf_counter()
    assert again.reused and again.pid == info.pid
    notebook.stop(info.port)
    return {"start": started - began, "data": loaded - began, "reuse": reused - loaded}


def run_tensorboard(logdir: Path, points: int) -> dict[str, float]:
    from tensorboard import manager

    began = time.perf_counter()
    result = manager.start(["--logdir", str(logdir), "--port", "0"])
    started = time.perf_counter()
    if not isinstance(result, manager.StartLaunched):
        raise RuntimeError(f"tensorboard did not start: {result}")
    info = result.info
    url = f"http://localhost:{info.port}/data/plugin/scalars/scalars?run=train&tag={TAG}"

    def complete() -> bool:
        body = fetch_json(url)
        return isinstance(body, list) and len(body) == min(points, 1000)  # it samples 1,000

    try:
        wait(complete)
        loaded = time.perf_counter()
        again = manager.start(["--logdir", str(logdir), "--port", "0"])
        reused = time.perf_counter()
        assert isinstance(again, manager.StartReused)
    finally:
        os.kill(info.pid, signal.SIGTERM)
    return {"start": started - began, "data": loaded - began, "reuse": reused - loaded}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--points", type=int, default=10_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="vdl-bench-nb-"))
    os.environ["VISUALDL_NOTEBOOK_DIR"] = str(work / "registry")
    os.environ["PYTHONPATH"] = str(REPO)  # our servers import this checkout
    # TensorBoard's manager runs the `tensorboard` script from PATH: this interpreter's
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    systems = {"visualdl": run_ours}
    try:
        import tensorboard  # noqa: F401
        systems["TensorBoard"] = run_tensorboard
    except ImportError:
        print("TensorBoard not installed: measuring visualdl only", file=sys.stderr)
    results: dict[str, list[dict[str, float]]] = {name: [] for name in systems}
    try:
        for repeat in range(args.repeats):
            for name, run in systems.items():
                logdir = work / f"{name}-{repeat}"  # a fresh logdir: never a warm cache
                write_events(logdir, args.points)
                results[name].append(run(logdir, args.points))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"notebook server, {args.points:,} points, median of {args.repeats} (ms)")
    print(f"{'system':<12} {'start':>8} {'data':>8} {'reuse':>8}")
    medians = {name: {k: statistics.median(r[k] for r in runs) * 1000 for k in runs[0]}
               for name, runs in results.items()}
    for name, m in medians.items():
        print(f"{name:<12} {m['start']:>8.0f} {m['data']:>8.0f} {m['reuse']:>8.1f}")
    if "TensorBoard" in medians:
        tb, us = medians["TensorBoard"], medians["visualdl"]
        print(f"{'TB / ours':<12} {tb['start'] / us['start']:>7.1f}x {tb['data'] / us['data']:>7.1f}x "
              f"{tb['reuse'] / us['reuse']:>7.2f}x")


if __name__ == "__main__":
    main()
