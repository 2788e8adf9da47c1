"""Opening a VisualDL 2.x model graph (``vdlgraph.*.log``): ours against VisualDL 2.5.3.

    python bench/vdl2_graph.py                      # ResNet-50, 3 repeats, medians
    python bench/vdl2_graph.py --model mobilenet_v3_small --repeat 1

VisualDL 2.5.3's own ``LogWriter.add_graph`` writes the graph of a ``paddle.vision`` model
(in the peer venv, ``.bench/venvs/visualdl-2.5.3`` as bench/write_read.py makes it, with
PaddlePaddle added: ``.bench/venvs/visualdl-2.5.3/bin/pip install paddlepaddle==2.6.2``; or
name another with ``--peer-python``). Each side then opens it in a fresh process, imports
included, up to the first picture the graph view draws:

* ours: ``LogReader(logdir)`` finds the file, the graph converted to ONNX
  (:mod:`visualdl.sources.vdl2.graph`), parsed, and the initial view laid out (coordinates
  of every box and edge, as ``/api/graph/view`` answers);
* VisualDL: ``GraphReader(logdir)``, ``get_graph(run)`` (its ``/graph/graph`` answer: the
  JSON parsed and the visible nodes chosen; its browser then lays them out).

Each opens the graph as it opens by default (VisualDL collapsed to the model's top layers,
ours expanded to a readable size), then with every layer expanded (``expand=all``;
VisualDL's ``expand_all``), in the same process. Peak RSS is each process's
(``ru_maxrss``). The ``/ours`` columns are each time divided by ours (below 1: faster).
Not the same work: ours answers with the coordinates of every box and edge, VisualDL with
the list of visible nodes, which its browser code then lays out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PEER = REPO / ".bench" / "venvs" / "visualdl-2.5.3" / "bin" / "python"

WRITE = """
import sys, numpy as np
np.float = float  # VisualDL 2.5.3 still uses it
import paddle, paddle.vision.models as models
from visualdl import LogWriter
net = getattr(models, sys.argv[2])()
net.eval()
with LogWriter(logdir=sys.argv[1]) as w:
    w.add_graph(net, [paddle.static.InputSpec([-1, 3, 224, 224], 'float32', name='image')])
"""

OURS = """
import json, resource, sys, time
t0 = time.perf_counter()
from visualdl.reader import LogReader
from visualdl.kinds.graph.document import GraphDocument
from visualdl.kinds.graph.measure import Options
from visualdl.kinds.graph.parse import parse_bytes
reader = LogReader(sys.argv[1])
(run,) = reader.runs()
(ref,) = reader.graphs(run, "vdlgraph")
doc = GraphDocument(parse_bytes(bytes(reader.load(ref).onnx)))
view = doc.view(doc.expanded_set("initial"), Options())
first = time.perf_counter() - t0
t1 = time.perf_counter()
full = doc.view(doc.expanded_set("all"), Options())
print(json.dumps({"s": first, "ops": len(doc.model.nodes), "shown": len(view["nodes"]),
                  "all_s": time.perf_counter() - t1, "all_shown": len(full["nodes"]),
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

PEER_READ = """
import json, resource, sys, time
t0 = time.perf_counter()
from visualdl.reader.graph_reader import GraphReader
reader = GraphReader(sys.argv[1])
(run,) = reader.runs()
graph = reader.get_graph(run)
first = time.perf_counter() - t0
t1 = time.perf_counter()
full = reader.get_graph(run, expand_all=True)
print(json.dumps({"s": first, "shown": len(graph["nodes"]),
                  "all_s": time.perf_counter() - t1, "all_shown": len(full["nodes"]),
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _run(python: str, code: str, work: str, *args: str, ours: bool = False) -> dict:
    """One fresh process, run outside the checkout (``-c`` puts the cwd on sys.path: the
    peer must import its own visualdl, ours this checkout's)."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)} if ours else {"PATH": "/usr/bin:/bin"}
    done = subprocess.run([python, "-c", code, *args], capture_output=True, text=True,
                          env=env, cwd=work, check=False, timeout=900)
    if done.returncode != 0:
        sys.exit(f"{python} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50", help="a paddle.vision.models name")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peer-python", default=str(PEER),
                        help="python of a venv with visualdl==2.5.3 and paddlepaddle")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vdl2-graph-bench-") as work:
        logdir = Path(work) / "logs"
        run = logdir / args.model
        print(f"writing the {args.model} graph with VisualDL 2.5.3's add_graph ...",
              file=sys.stderr)
        done = subprocess.run([args.peer_python, "-c", WRITE, str(run), args.model],
                              capture_output=True, text=True, cwd=work, check=False)
        if done.returncode != 0:
            sys.exit("could not write the graph (VisualDL 2.5.3 and PaddlePaddle are needed in "
                     f"{args.peer_python}):\n{done.stderr[-1500:]}")
        size = sum(p.stat().st_size for p in run.glob("vdlgraph.*"))
        rows: dict[str, list[dict]] = {"ours": [], "visualdl": []}
        for k in range(args.repeat):
            print(f"open {k + 1}/{args.repeat}", file=sys.stderr)
            rows["ours"].append(_run(sys.executable, OURS, work, str(logdir), ours=True))
            rows["visualdl"].append(_run(args.peer_python, PEER_READ, work, str(logdir)))
    ours_s = statistics.median(r["s"] for r in rows["ours"])
    peer_s = statistics.median(r["s"] for r in rows["visualdl"])
    print(f"\n{args.model}: vdlgraph file {size / 1e6:.2f} MB, {rows['ours'][0]['ops']} ops; "
          f"medians of {args.repeat}, fresh processes, imports included\n")
    ours_all = statistics.median(r["all_s"] for r in rows["ours"])
    print(f"{'system':<16}{'first view s':>13}{'boxes':>7}{'/ours':>7}"
          f"{'expand all s':>14}{'boxes':>7}{'/ours':>7}{'peak RSS MB':>13}")
    for key, label, sec in (("ours", "visualdl (ours)", ours_s),
                            ("visualdl", "VisualDL 2.5.3", peer_s)):
        rss = statistics.median(r["rss"] for r in rows[key])
        all_s = statistics.median(r["all_s"] for r in rows[key])
        print(f"{label:<16}{sec:>13.3f}{rows[key][0]['shown']:>7}{sec / ours_s:>6.2f}x"
              f"{all_s:>14.3f}{rows[key][0]['all_shown']:>7}{all_s / ours_all:>6.2f}x"
              f"{rss:>13.0f}")


if __name__ == "__main__":
    main()
