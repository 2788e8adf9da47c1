"""Benchmark of the data on the graph's nodes (issue 26 item 4).

Measured in one run, medians of 5, on 2 shared cores (noisy: read the ratios):

* server: ``parameters`` and ``flops`` of 1,000 / 10,000-node residual chains, and the
  per-group sums of the answer, against the same model's initial view (parse excluded,
  layout cached as in the server): what colouring costs beside drawing;
* profile mapping: a ``vf.profiler`` profile of a small CNN trained by ``Model.fit``
  (several steps) mapped onto its exported graph, against building the profile's operator
  table (the profiler tab's own view of the same trace);
* ``Layer.__call__``: one call of a layer whose forward does nothing, and 50 training
  steps of an MLP, with the profiler's layer-scope check in ``Layer.__call__`` (this
  branch) against the call without it (the previous code, installed on the class for the
  comparison), no profiler recording.

Run: ``python bench/node_values.py``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import onnx_models  # noqa: E402
from visualdl.kinds.graph.document import GraphDocument  # noqa: E402
from visualdl.kinds.graph.measure import Options  # noqa: E402
from visualdl.kinds.graph.node_values import flops, parameters, to_json  # noqa: E402
from visualdl.kinds.graph.parse import parse_model  # noqa: E402

REPEAT = 5


def median_s(fn) -> float:
    out = []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def graphs() -> list[tuple[str, float, float]]:
    rows = []
    for n in (1000, 10000):
        model = parse_model(onnx_models.residual_chain(n))
        doc = GraphDocument(model)
        doc.view(doc.initial, Options())  # layout cached, as the server keeps it
        view = median_s(lambda: doc.view(doc.initial, Options()))
        for name, fn in (("params", parameters), ("flops", flops)):
            t = median_s(lambda: to_json(doc.hierarchy, fn(model)))
            rows.append((f"{name}, {n:,} nodes", t, view))
    return rows


def profile() -> tuple[str, float, float]:
    import gzip
    import json

    from tests.kinds.graph.node_data import fit_tiny_cnn
    from visualdl import LogReader
    from visualdl.kinds.graph.profile_map import profile_values
    from visualdl.kinds.profile.build import build_model, source
    from visualdl.kinds.profile.views import operators

    with tempfile.TemporaryDirectory() as tmp:
        fit_tiny_cnn(f"{tmp}/cnn", steps=24, profile_steps=(2, 22))
        reader = LogReader(tmp)
        (ref,) = reader.blobs("cnn", "profile", "worker0")
        (gref,) = reader.blobs("cnn", "graph", "model")
        import onnx

        graph = parse_model(onnx.load_from_string(bytes(reader.load(gref).onnx)))
        trace = build_model(source(ref, reader.load))
        events = int(trace.is_op.sum())
        t_map = median_s(lambda: profile_values(graph, trace))
        t_ops = median_s(lambda: operators(trace))
        del json, gzip
    return (f"profile mapping, {events:,} op events", t_map, t_ops)


def layer_call() -> list[tuple[str, float, float]]:
    """Per call of a layer that does nothing, and per 50 steps of an MLP (alternating which
    version goes first)."""
    import timeit

    import numpy as np

    import visualdl.framework as vf
    import visualdl.framework.nn.functional as F
    from visualdl.framework import hooks, nn
    from visualdl.framework.nn.layer import Layer

    class Nothing(nn.Layer):
        def forward(self, x):
            return x

    vf.seed(0)
    net = nn.Sequential(*[m for _ in range(8) for m in (nn.Linear(32, 32), nn.ReLU())])
    x = vf.tensor(np.random.default_rng(0).random((16, 32), np.float32))
    layer = Nothing()

    def steps():
        for _ in range(50):
            F.mse_loss(net(x), x).backward()

    def calls():
        return min(timeit.repeat(lambda: layer(1), number=100_000, repeat=3)) / 100_000

    def timed_steps():
        t0 = time.perf_counter()
        steps()
        return time.perf_counter() - t0

    new = Layer.__call__

    def old(self, *args, **kwargs):  # the call before this change
        d = self.__dict__
        if d.get(hooks.PRE) or d.get(hooks.POST):
            return hooks.call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    steps()
    out = []
    for label, measure in (("one Layer.__call__ (forward does nothing)", calls),
                           ("50 MLP train steps (16 layers)", timed_steps)):
        times: dict[str, list[float]] = {"new": [], "old": []}
        for k in range(2 * REPEAT):  # alternating which goes first
            order = (("new", new), ("old", old)) if k % 2 else (("old", old), ("new", new))
            for name, fn in order:
                Layer.__call__ = fn
                times[name].append(measure())
        Layer.__call__ = new
        out.append((label, statistics.median(times["new"]), statistics.median(times["old"])))
    return out


def main() -> None:
    rows = graphs()
    print(f"{'measure':52} {'ours (ms)':>10} {'peer (ms)':>10} {'ratio':>7}  peer")
    for name, t, ref in rows:
        print(f"{name:52} {t * 1e3:10.1f} {ref * 1e3:10.1f} {t / ref:7.2f}  initial view")
    name, t, ref = profile()
    print(f"{name:52} {t * 1e3:10.1f} {ref * 1e3:10.1f} {t / ref:7.2f}  operator table")
    for name, t, ref in layer_call():
        print(f"{name:52} {t * 1e3:10.4f} {ref * 1e3:10.4f} {t / ref:7.2f}  call without the check")


if __name__ == "__main__":
    main()
