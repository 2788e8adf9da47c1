"""What recording costs: an MLP training step (784-256-128-10, batch 128, SGD momentum, as in
bench/framework.py) without a profiler, with ``vf.profiler`` recording ops, and with
``timer_only=True``; plus record_shapes / profile_memory for reference.

Modes are interleaved round by round, so drift on a shared machine hits all of them alike:
each round times every mode's median step; a mode's overhead is the median over rounds of
(its round median / the no-profiler round median). Targets: ops <= 10 %, timer_only <= 2 %.

    python bench/profiler_overhead.py [--rounds 21] [--steps 20] [--threads 1]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

MODES = {
    "no profiler": None,
    "timer_only": {"timer_only": True},
    "ops": {},
    "ops + shapes": {"record_shapes": True},
    "ops + shapes + memory": {"record_shapes": True, "profile_memory": True},
}
TARGETS = {"timer_only": 2.0, "ops": 10.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--steps", type=int, default=20, help="steps timed per mode per round")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    import visualdl.framework as vf
    import visualdl.framework.nn.functional as F
    from visualdl.framework import nn

    vf.set_num_threads(args.threads)
    vf.seed(0)
    net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                        nn.Linear(128, 10))
    opt = vf.optim.SGD(net.parameters(), 0.01, momentum=0.9)
    rng = np.random.default_rng(0)
    x = vf.tensor(rng.standard_normal((128, 784)).astype(np.float32))
    y = vf.tensor(rng.integers(0, 10, 128))

    def step() -> None:
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    def run(options: dict | None) -> float:
        """Median step time (s) of ``args.steps`` steps, under a profiler when options."""
        gc.collect()  # the previous mode's trace must not be collected inside this one
        times = []
        prof = None
        if options is not None:
            prof = vf.profiler.Profiler(**options)
            prof.start()
        for _ in range(args.steps):
            t0 = time.perf_counter()
            step()
            if prof is not None:
                prof.step()
            times.append(time.perf_counter() - t0)
        if prof is not None:
            prof.stop()
            events = len(prof.trace()["traceEvents"])
            run.events[id(options)] = events // (args.steps + 1)
        return statistics.median(times)

    run.events = {}
    for _ in range(20):  # compile and warm up
        step()
    results: dict[str, list[float]] = {m: [] for m in MODES}
    for _ in range(args.rounds):
        for mode, options in MODES.items():
            results[mode].append(run(options))
    base = statistics.median(results["no profiler"])
    base_rounds = results["no profiler"]
    print(f"MLP 784-256-128-10, batch 128, {args.threads} thread(s), {args.rounds} rounds x "
          f"{args.steps} steps; medians")
    print(f"{'mode':<24}{'step (ms)':>11}{'overhead':>10}{'events/step':>13}{'target':>9}")
    for mode, options in MODES.items():
        med = statistics.median(results[mode])
        over = 100.0 * (statistics.median(t / b for t, b in zip(results[mode], base_rounds)) - 1)
        target = f"<= {TARGETS[mode]:.0f}%" if mode in TARGETS else ""
        ev = run.events.get(id(options), "")
        print(f"{mode:<24}{med * 1e3:>11.3f}{over:>9.1f}%{ev!s:>13}{target:>9}")
    per_op_cost(vf, args.rounds)


def per_op_cost(vf, rounds: int) -> None:
    """The absolute price of one recorded op: a 1-element relu, 5,000 calls per round, with
    and without recording (interleaved; the fastest round of each, as load only adds)."""
    x = vf.tensor(np.ones(1, np.float32))
    n = 5000

    def calls() -> float:
        t0 = time.perf_counter_ns()
        for _ in range(n):
            vf.relu(x)
        return (time.perf_counter_ns() - t0) / n

    calls()
    off, on = [], []
    for _ in range(rounds):
        gc.collect()
        off.append(calls())
        with vf.profiler.Profiler():
            on.append(calls())
    a, b = min(off), min(on)
    print(f"\none op (1-element relu): {a:.0f} ns without a profiler, {b:.0f} ns recorded: "
          f"{b - a:.0f} ns per recorded op event")


if __name__ == "__main__":
    main()
