"""Where the server's first chart on TensorBoard's files spends its time, and its floor.

The workload of ``bench/server.py`` (tensorboardX's event files, 10 tags x 100,000 steps:
1M one-value events, 44 MB), or with ``--workload tf2`` that of ``bench/tf_scalars.py``
(TensorFlow 2's tensor scalars, 54 tags x 10,000 steps). The first chart of ``visualdl
--logdir`` needs, on one Python interpreter, the interpreter's start, the reader's imports
(numpy, protobuf, ours), the load of the file, the web stack (Flask, the app, waitress)
and the answer; the entry-point scans for plugins run off that path (the sources' once
the first load is done, the kinds' with the app). Each stage is timed here on its own, in
that order, in a fresh interpreter (with the garbage collector paused, as the server
starts); then the real server's first chart, where the load runs on a thread while the
web stack imports, and TensorBoard 2.21 ``--load_fast=true``'s on the same files,
interleaved (bench/server.py's measure, both in venvs of their own).

What the table shows: the real first chart is no sooner than the sum of the stages,
however the work is spread over threads: each stage holds the GIL nearly all the time
(the load is thousands of short numpy operations, each handing the GIL over and back).
The "data path" is the interpreter, the reader's imports, the load and the answer: the
first chart of a server whose web stack cost nothing, the floor of this design on this
interpreter; TensorBoard's time over it is the best ratio such a server could reach.

Reaching that floor with a second process was tried (2026-12-03) and dropped: a child forked
after the reader's imports loaded the logdir while the parent imported the web stack, then
handed the loaded reader back pickled (out of band, through a memory file: 13 MB here, ~25
ms to write and ~20 ms to unpickle). The child's load stayed the critical path (the
parent's web stack was ready 100-200 ms before it), so the transfer only added to it: on
this workload, 9 runs alternating with the thread design, 581 and 606 ms against 542 and
593 ms (TensorBoard 1,393 and 1,349 ms in the same runs), though the thread design's
checkout ran without bytecode files there (compiled at every start: ~100 ms more CPU). A
sooner first chart here needs a faster load, not more overlap.

Usage: python bench/first_chart_floor.py [--repeats 7] [--workload tbx|tf2] [--cache .bench]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import (  # noqa: E402  (bench/server.py)
    REPO, TENSORBOARD, TENSORBOARDX, WRITE_TBX, Server, ensure_venv, first_chart,
    ours_interpreter, peer_env, stop, write_data,
)
import tf_scalars  # noqa: E402  (bench/tf_scalars.py)

# One fresh interpreter, the server's start done stage by stage (milliseconds each).
STAGES = """
import gc, io, json, sys, time
gc.disable()
logdir, run, tag, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
marks = [time.perf_counter()]
import visualdl.server.cli as cli
from visualdl.server.reader_provider import open_provider
marks.append(time.perf_counter())
from visualdl.sources import registry
registry.load_plugins()  # the reader does it once its first load is done
marks.append(time.perf_counter())
data = open_provider([logdir], 5.0)
data.reload_once()
marks.append(time.perf_counter())
from visualdl.server.app import create_app
app = create_app(data=data, start_reload=False)
server = cli.make_server(app, cli.listen("127.0.0.1", 0))
marks.append(time.perf_counter())
environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/api/scalars", "SERVER_NAME": "127.0.0.1",
           "QUERY_STRING": f"run={run}&tag={tag}&points=1000", "SERVER_PORT": "80",
           "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "http",
           "wsgi.input": io.BytesIO(), "wsgi.errors": sys.stderr}
body = json.loads(b"".join(app(environ, lambda *args: None)))
marks.append(time.perf_counter())
assert body["total"] == steps and not body.get("loading"), body.get("total")
print(json.dumps([1000 * (b - a) for a, b in zip(marks, marks[1:])]))
"""
NAMES = ("reader imports (numpy, protobuf, ours)", "sources' entry-point scan (plugins)",
         "load of the event file", "web stack (Flask, app, waitress)", "first answer")


class Workload(NamedTuple):
    title: str
    logdir: Path
    run: str
    tag: str
    steps: int


def workload(name: str, cache: Path, tbx_python: str) -> Workload:
    """bench/server.py's tensorboardX files, or bench/tf_scalars.py's TensorFlow 2 ones."""
    if name == "tf2":
        logdir = tf_scalars.write_logdir(cache / "data-tf2-scalars", tf1=False)
        return Workload(f"TensorFlow 2's tensor scalars ({tf_scalars.TAGS} tags x "
                        f"{tf_scalars.STEPS:,} steps)", logdir, "train", "epoch_metric_0",
                        tf_scalars.STEPS)
    logdir = write_data(Path(tbx_python), WRITE_TBX, cache / "data-tb", peer_env())
    return Workload("tensorboardX's files (10 tags x 100,000 steps)", logdir, "run", "tag0",
                    100_000)


def servers(w: Workload, python: str, env: dict, tensorboard: str, cwd: Path) -> list:
    """``visualdl --logdir`` and TensorBoard ``--load_fast=true`` on the workload."""
    near = w.steps - w.steps // 100
    query = f"run={w.run}&tag={w.tag}"
    return [
        Server("visualdl --logdir (threads)",
               [python, "-m", "visualdl", "--logdir", str(w.logdir), "--port", "{port}"],
               "http://127.0.0.1:{port}/api/scalars?" + query + "&points=1000",
               lambda b: (b.get("total") == w.steps and not b.get("loading"), 0), env),
        Server("TensorBoard 2.21 --load_fast=true",
               [tensorboard, "--logdir", str(w.logdir), "--host", "127.0.0.1", "--port",
                "{port}", "--load_fast=true"],
               "http://127.0.0.1:{port}/data/plugin/scalars/scalars?" + query,
               lambda b: (bool(b) and max(p[1] for p in b) >= near, len(b)),
               peer_env(), str(cwd)),
    ]


def interpreter_start(python: str) -> float:
    """Milliseconds of ``python -c pass`` (site and the venv included)."""
    started = time.perf_counter()
    subprocess.run([python, "-c", "pass"], check=True)
    return 1000 * (time.perf_counter() - started)


def stages(python: str, env: dict, w: Workload) -> list[float]:
    out = subprocess.run([python, "-c", STAGES, str(w.logdir), w.run, w.tag, str(w.steps)],
                         env=env, check=True, capture_output=True, text=True,
                         cwd="/").stdout
    return json.loads(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--workload", choices=("tbx", "tf2"), default="tbx",
                        help="bench/server.py's files (default) or bench/tf_scalars.py's")
    parser.add_argument("--cache", type=Path, default=REPO / ".bench")
    args = parser.parse_args(argv)
    cache = args.cache.resolve()
    workdir = cache / "peer-cwd"
    workdir.mkdir(parents=True, exist_ok=True)
    python = ours_interpreter(cache)
    env = dict(os.environ, VISUALDL_NO_CACHE="1", PYTHONPATH=os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    writer, why_w = ensure_venv(TENSORBOARDX, str(workdir))
    reader, why_r = ensure_venv(TENSORBOARD, str(workdir))
    if why_w or why_r:
        raise SystemExit(f"TensorBoard's venvs could not be set up: {why_w or why_r}")
    w = workload(args.workload, cache, writer)
    both = servers(w, python, env, str(Path(reader).parent / "tensorboard"), workdir)
    starts, parts, charts = [], [], {s.name: [] for s in both}
    for _ in range(args.repeats):
        starts.append(interpreter_start(python))
        parts.append(stages(python, env, w))
        for server in both:
            seconds, _, proc, _ = first_chart(server, timeout=300)
            stop(proc)
            charts[server.name].append(1000 * seconds)
    med = [statistics.median(starts)] + [statistics.median(p) for p in zip(*parts)]
    real, tb = (statistics.median(charts[s.name]) for s in both)
    data_path = med[0] + med[1] + med[3] + med[5]
    rows = [("interpreter start", med[0]), *zip(NAMES, med[1:]),
            ("sum of the stages", sum(med)), ("data path (no web stack)", data_path),
            (both[0].name, real), (both[1].name, tb)]
    print(f"\nFirst chart on {w.title}, medians of {args.repeats} (ms)")
    print(f"{'stage':48} {'ms':>7}")
    for name, ms in rows:
        print(f"{name:48} {ms:7.0f}")
    print(f"\nTensorBoard / visualdl: {tb / real:.2f}x now; {tb / data_path:.2f}x at most "
          f"with a web stack that cost nothing; 2.5x needs a first chart of {tb / 2.5:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
