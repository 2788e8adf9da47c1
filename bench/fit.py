"""Benchmark: ``vf.Model.fit`` throughput with and without the VisualDL callback.

Workload: MLP 784-256-128-10, batch 128, Adam, cross-entropy + Accuracy, synthetic data
(``--steps`` batches per epoch, ``--epochs`` epochs per fit). Each repeat runs one fit
without the callback and one with ``VisualDL(logdir)`` at default settings (per-batch
scalars, histograms every 50 steps, the graph traced once, hparams), alternating which goes
first; both with ``verbose=0`` so that only logging differs. Reports the median step time
of each, the overhead and PASS/MISS against the <= 5 % target.

    python bench/fit.py                    # 9 repeats of 2 epochs x 100 steps, 1 thread
    python bench/fit.py --repeats 3 --threads 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

TARGET = 5.0  # percent


def make_model(vf):
    from visualdl.framework import nn

    vf.seed(0)
    net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                        nn.Linear(128, 10))
    model = vf.Model(net)
    model.prepare(vf.optim.Adam(net.parameters(), 1e-3), vf.nn.CrossEntropyLoss(),
                  vf.metric.Accuracy())
    return model


def run_fit(vf, data, epochs: int, logdir: str | None) -> float:
    """Seconds for one fit (fresh model, fresh callback)."""
    model = make_model(vf)
    callbacks = [vf.callbacks.VisualDL(logdir)] if logdir else []
    start = time.perf_counter()
    model.fit(data, batch_size=128, epochs=epochs, verbose=0, shuffle=True,
              callbacks=callbacks)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--steps", type=int, default=100, help="batches per epoch")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)

    import visualdl.framework as vf

    vf.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    n = args.steps * 128
    data = vf.data.TensorDataset(rng.standard_normal((n, 784)).astype(np.float32),
                                 rng.integers(0, 10, n))
    tmp = tempfile.mkdtemp(prefix="vdl_bench_fit_")
    steps = args.steps * args.epochs
    try:
        # warm-up: compile/load kernels, import onnx, start the writer machinery once
        run_fit(vf, data, 1, None)
        run_fit(vf, data, 1, os.path.join(tmp, "warmup"))
        plain, logged = [], []
        for r in range(args.repeats):
            order = [False, True] if r % 2 == 0 else [True, False]
            for with_cb in order:
                logdir = os.path.join(tmp, f"run{r}") if with_cb else None
                (logged if with_cb else plain).append(run_fit(vf, data, args.epochs, logdir))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = statistics.median(plain) / steps
    with_cb = statistics.median(logged) / steps
    overhead = 100.0 * (with_cb - base) / base
    verdict = "PASS" if overhead <= TARGET else "MISS"
    print(f"Model.fit, MLP 784-256-128-10, batch 128, {args.epochs} epochs x {args.steps} steps "
          f"per fit, {args.threads} thread(s), median of {args.repeats}")
    print(f"{'run':<28}{'ms/step':>10}{'steps/s':>10}")
    print(f"{'fit, no callback':<28}{base * 1e3:>10.3f}{1 / base:>10.1f}")
    print(f"{'fit + VisualDL (defaults)':<28}{with_cb * 1e3:>10.3f}{1 / with_cb:>10.1f}")
    print(f"{'logging overhead':<28}{overhead:>9.2f}%   target <= {TARGET:.0f}%: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
