"""Benchmark: the cost of the system metrics sampler (``LogWriter(system_metrics=...)``).

1. The sampler's own CPU: a sampler recording into a real LogWriter takes ``--samples``
   samples (every ``--sample-interval`` s, so the run is short); the CPU time of its thread
   per sample, divided by the default interval (10 s), is its share of one core in use.
   Target: <= 0.2 % of a core.
2. Its overhead on training: ``vf.Model.fit`` (bench/fit.py's MLP) with the VisualDL
   callback, sampler off vs on, alternating which goes first, medians of ``--repeats``.
   The sampler runs every ``--fit-interval`` s (default 1 s: ten times the default rate,
   so that each fit holds several samples; at 10 s the cost is a tenth). Target: <= 0.5 %
   of a training step. Each fit is timed by the clock and by the process's CPU time (all
   its threads, the sampler's included), which other processes on a shared machine
   disturb far less; the table says how far the clock's repeats spread.

    python bench/system_metrics.py
    python bench/system_metrics.py --repeats 5 --steps 200
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
sys.path.insert(0, os.path.join(ROOT, "bench"))

CORE_TARGET = 0.2  # percent of one core
FIT_TARGET = 0.5  # percent of a training step
DEFAULT_INTERVAL = 10.0


def sampler_cost(samples: int, interval: float, tmp: str) -> tuple[float, int, int]:
    """(CPU seconds per sample of the sampler thread, metrics per sample, GPUs)."""
    from visualdl import LogReader, LogWriter
    from visualdl.kinds import registry

    sample = registry.get("system").part("sample")
    logdir = os.path.join(tmp, "sampler")
    with LogWriter(logdir=logdir, system_metrics=False) as writer:
        sampler = sample.start(writer.add_scalar, interval, logdir)
        deadline = time.monotonic() + samples * interval * 5 + 30
        while sampler.samples < samples and time.monotonic() < deadline:
            time.sleep(interval)
        sampler.stop()
        taken, cpu, gpus = sampler.samples, sampler.cpu_seconds, sampler.gpus
    metrics = len(LogReader(tmp).tags("sampler").get("system", []))
    return cpu / max(1, taken), metrics, gpus


def run_fit(vf, data, epochs: int, logdir: str, system_metrics) -> tuple[float, float]:
    """(clock seconds, process CPU seconds) of one fit."""
    from fit import make_model

    model = make_model(vf)
    callback = vf.callbacks.VisualDL(logdir, system_metrics=system_metrics)
    start, cpu = time.perf_counter(), time.process_time()
    model.fit(data, batch_size=128, epochs=epochs, verbose=0, shuffle=True, callbacks=[callback])
    return time.perf_counter() - start, time.process_time() - cpu


def fit_overhead(args, tmp: str) -> dict[str, float]:
    """Median ms/step (clock and CPU) with the sampler off and on, and the clock's spread."""
    import visualdl.framework as vf

    vf.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    n = args.steps * 128
    data = vf.data.TensorDataset(rng.standard_normal((n, 784)).astype(np.float32),
                                 rng.integers(0, 10, n))
    steps = args.steps * args.epochs
    run_fit(vf, data, 1, os.path.join(tmp, "warmup"), False)
    times: dict[tuple[bool, int], list[float]] = {(s, i): [] for s in (False, True)
                                                  for i in (0, 1)}
    for r in range(args.repeats):
        for sampling in ([False, True] if r % 2 == 0 else [True, False]):
            logdir = os.path.join(tmp, f"fit{r}_{int(sampling)}")
            took = run_fit(vf, data, args.epochs, logdir, args.fit_interval if sampling else False)
            for i in (0, 1):
                times[sampling, i].append(took[i] / steps * 1e3)
    clock_off = times[False, 0]
    return {"clock_off": statistics.median(clock_off), "clock_on": statistics.median(times[True, 0]),
            "cpu_off": statistics.median(times[False, 1]), "cpu_on": statistics.median(times[True, 1]),
            "spread": 100.0 * (max(clock_off) - min(clock_off)) / statistics.median(clock_off)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--sample-interval", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=300, help="batches per epoch")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--fit-interval", type=float, default=1.0)
    args = parser.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="vdl_bench_sysmetrics_")
    try:
        per_sample, metrics, gpus = sampler_cost(args.samples, args.sample_interval, tmp)
        fit = fit_overhead(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    core = 100.0 * per_sample / DEFAULT_INTERVAL
    scale = args.fit_interval / DEFAULT_INTERVAL
    clock = 100.0 * (fit["clock_on"] - fit["clock_off"]) / fit["clock_off"]
    cpu = 100.0 * (fit["cpu_on"] - fit["cpu_off"]) / fit["cpu_off"]
    verdict = lambda ok: "PASS" if ok else "MISS"  # noqa: E731
    print(f"System metrics sampler: {metrics} metrics per sample ({gpus} GPUs), "
          f"{args.samples} samples")
    print(f"{'measure':<44}{'value':>12}   target")
    print(f"{'sampler CPU per sample':<44}{per_sample * 1e3:>10.3f}ms")
    print(f"{'sampler at 10 s: % of one core':<44}{core:>11.4f}%   <= {CORE_TARGET}%: "
          f"{verdict(core <= CORE_TARGET)}")
    print(f"Model.fit (bench/fit.py's MLP), {args.epochs} x {args.steps} steps, "
          f"{args.threads} thread(s), median of {args.repeats}")
    on = f"system_metrics={args.fit_interval:g}"
    print(f"{'ms/step':<44}{'clock':>12}{'CPU':>12}")
    print(f"{'fit + VisualDL, system_metrics=False':<44}{fit['clock_off']:>12.3f}"
          f"{fit['cpu_off']:>12.3f}")
    print(f"{f'fit + VisualDL, {on}':<44}{fit['clock_on']:>12.3f}{fit['cpu_on']:>12.3f}")
    print(f"{f'overhead at {args.fit_interval:g} s (%)':<44}{clock:>12.3f}{cpu:>12.3f}"
          f"   (clock spread of the off runs: {fit['spread']:.1f}%)")
    print(f"{'overhead at 10 s, scaled by the rate (%)':<44}{clock * scale:>12.3f}"
          f"{cpu * scale:>12.3f}   <= {FIT_TARGET}%: clock {verdict(clock * scale <= FIT_TARGET)}, "
          f"CPU {verdict(cpu * scale <= FIT_TARGET)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
