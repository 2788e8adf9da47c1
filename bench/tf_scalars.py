"""TensorFlow's own scalars: reading a Keras-like logdir, and the server's first chart on it.

Workload: one run (``train``) of 54 tags x 10,000 steps (540,000 points), as TensorFlow 2's
``tf.summary.scalar`` writes them (Keras' TensorBoard callback does): one event per value,
the value a float32 ``tensor_content``, the scalars plugin's metadata repeated in every
event. The events are made with our copy of TensorBoard's protos, byte for byte the layout
of ``tests/sources/tfevents/data/scalars/tf2`` (written by TensorFlow 2.21); ``--tf1`` writes
TensorFlow 1's merged summaries instead (every tag's ``simple_value`` in one event a step).

* read: a fresh interpreter reads every point, ``LogReader`` (no disk cache) against
  TensorBoard's ``EventAccumulator`` (every size guidance 0), interleaved, medians;
* first chart: from process start until the chart of ``epoch_metric_0`` is answered with
  every step (ours: ``total`` 10,000; TensorBoard: its sample reaches the last 1% of steps),
  ``visualdl --logdir`` against ``tensorboard --load_fast=true``, interleaved, medians.

The read runs TensorBoard's ``EventAccumulator`` of this interpreter (the ``test`` extra
has it); the first chart runs each server in a venv of its own, as bench/server.py does
(ours with only our dependencies, TensorBoard 2.21 alone), since a development venv's
start-up costs both time a user's install does not.

Usage: python bench/tf_scalars.py [--repeats 3] [--tf1] [--cache .bench]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from server import (  # noqa: E402  (bench/server.py)
    TENSORBOARD, Server, ensure_venv, first_chart, ours_interpreter, peer_env, stop,
)

TAGS, STEPS = 54, 10_000
TARGETS = "read >= 10x EventAccumulator; first chart >= 2.5x TensorBoard --load_fast=true"

READ_OURS = """
import sys, time
t = time.perf_counter()
from visualdl import LogReader
r = LogReader(sys.argv[1])
n = sum(len(r.scalars(run, tag)[0]) for run in r.runs() for tag in r.tags(run).get("scalar", []))
print(time.perf_counter() - t, n)
"""
READ_EA = """
import sys, time
t = time.perf_counter()
from tensorboard.backend.event_processing import event_accumulator as ea
acc = ea.EventAccumulator(sys.argv[1], size_guidance={k: 0 for k in ea.DEFAULT_SIZE_GUIDANCE})
acc.Reload()
n = sum(len(acc.Tensors(t)) for t in acc.Tags()["tensors"])
n += sum(len(acc.Scalars(t)) for t in acc.Tags()["scalars"])
print(time.perf_counter() - t, n)
"""


def write_logdir(target: Path, tf1: bool) -> Path:
    """The workload's event file under ``target/train`` (made once)."""
    run = target / "train"
    if run.is_dir() and any(run.iterdir()):
        return target
    from visualdl.sources.tfevents import event_pb2 as pb
    from visualdl.format.framing import frame

    run.mkdir(parents=True, exist_ok=True)
    values = np.random.default_rng(0).random((STEPS, TAGS)).astype(np.float32)
    meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(plugin_name="scalars"))
    wall = time.time() - STEPS
    with open(run / f"events.out.tfevents.{int(wall)}.bench.1.0.v2", "wb") as f:
        f.write(frame(pb.Event(wall_time=wall, file_version="brain.Event:2").SerializeToString()))
        for step in range(STEPS):
            if tf1:
                summary = pb.Summary(value=[pb.Summary.Value(tag=f"epoch_metric_{k}",
                                                             simple_value=values[step, k])
                                            for k in range(TAGS)])
                f.write(frame(pb.Event(wall_time=wall + step, step=step,
                                       summary=summary).SerializeToString()))
                continue
            for k in range(TAGS):
                tensor = pb.TensorProto(dtype=1, tensor_shape=pb.TensorShapeProto(),
                                        tensor_content=values[step, k].tobytes())
                value = pb.Summary.Value(tag=f"epoch_metric_{k}", tensor=tensor, metadata=meta)
                f.write(frame(pb.Event(wall_time=wall + step + k * 1e-4, step=step,
                                       summary=pb.Summary(value=[value])).SerializeToString()))
    return target


def timed(script: str, logdir: Path) -> tuple[float, int]:
    env = {**os.environ, "VISUALDL_NO_CACHE": "1", "TF_CPP_MIN_LOG_LEVEL": "3"}
    out = subprocess.run([sys.executable, "-c", script, str(logdir)], env=env, check=True,
                         capture_output=True, text=True, cwd=str(REPO)).stdout.split()
    return float(out[-2]), int(out[-1])


def servers(logdir: Path, cache: Path, workdir: Path) -> list[Server]:
    """The first-chart servers, each in a venv of its own as in bench/server.py (this
    interpreter's development venv adds start-up time a user's install does not have):
    ours with only our dependencies, TensorBoard 2.21 alone (this interpreter's when its
    venv cannot be set up)."""
    python = ours_interpreter(cache)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    ours = Server("visualdl", [python, "-m", "visualdl", "--logdir", str(logdir),
                               "--port", "{port}", "--no-cache"],
                  "http://127.0.0.1:{port}/api/scalars?run=train&tag=epoch_metric_0&points=1000",
                  lambda b: (b.get("total") == STEPS, len(b.get("steps", []))), env)
    venv, why = ensure_venv(TENSORBOARD, str(workdir))
    tb = str(Path(venv).parent / "tensorboard") if venv else \
        shutil.which("tensorboard", path=str(Path(sys.executable).parent))
    if why:
        print(f"  TensorBoard runs from this interpreter: {why}", flush=True)
    if tb is None:
        return [ours]
    near = STEPS - STEPS // 100
    return [ours, Server(
        "TensorBoard --load_fast=true",
        [tb, "--logdir", str(logdir), "--host", "127.0.0.1", "--port", "{port}",
         "--load_fast=true"],
        "http://127.0.0.1:{port}/data/plugin/scalars/scalars?run=train&tag=epoch_metric_0",
        lambda b: (bool(b) and max(p[1] for p in b) >= near, len(b)),
        {**(peer_env() if venv else os.environ), "TF_CPP_MIN_LOG_LEVEL": "3"}, str(workdir))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tf1", action="store_true", help="TF1 merged summaries instead")
    parser.add_argument("--cache", default=str(REPO / ".bench"))
    args = parser.parse_args(argv)
    cache = Path(args.cache)
    logdir = write_logdir(cache / ("data-tf1-scalars" if args.tf1 else "data-tf2-scalars"),
                          args.tf1)
    reads: dict[str, list[float]] = {"LogReader": [], "EventAccumulator": []}
    for _ in range(args.repeats):
        for name, script in (("LogReader", READ_OURS), ("EventAccumulator", READ_EA)):
            seconds, points = timed(script, logdir / "train")
            assert points == TAGS * STEPS, (name, points)
            reads[name].append(seconds)
    workdir = cache / "peer-cwd"
    workdir.mkdir(parents=True, exist_ok=True)
    charts: dict[str, list[float]] = {}
    both = servers(logdir, cache.resolve(), workdir)
    for _ in range(args.repeats):
        for server in both:
            seconds, _, proc, _ = first_chart(server, timeout=300)
            stop(proc)
            charts.setdefault(server.name, []).append(seconds)
    kind = "TF1 merged summaries" if args.tf1 else "TF2 tensor scalars"
    print(f"\n{kind}: {TAGS} tags x {STEPS:,} steps, medians of {args.repeats}")
    print(f"{'measure':34} {'seconds':>9} {'ratio':>8}")
    ours = statistics.median(reads["LogReader"])
    for name, runs in reads.items():
        med = statistics.median(runs)
        print(f"{'read: ' + name:34} {med:9.2f} {med / ours:7.1f}x")
    ours = statistics.median(charts["visualdl"])
    for name, runs in charts.items():
        med = statistics.median(runs)
        print(f"{'first chart: ' + name:34} {med:9.2f} {med / ours:7.1f}x")
    print(f"targets: {TARGETS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
