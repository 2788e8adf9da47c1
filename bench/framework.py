"""Benchmark visualdl.framework training steps against PyTorch CPU in the same run.

Workloads (forward + backward + SGD-momentum step):
  * MLP 784-256-128-10, batch 128
  * LeNet-5 (conv 6@5x5, max-pool, conv 16@5x5, max-pool, fc 120-84-10) on 1x28x28, batch 64
For each thread count: median step time over repeats, steps/s and the ours/torch ratio
(> 1 means faster than PyTorch), with the single-thread targets marked PASS or MISS
(LeNet-5 >= 1.0x, MLP >= 1.2x). Also numpy's float32 GEMM GFLOP/s for reference, and the
first-training-step time in a fresh process with a cold and a warm Numba cache.

    python bench/framework.py                 # threads 1 and 2
    python bench/framework.py --threads 1 --repeats 5
    python bench/framework.py --threads 1 --clock cpu   # steadier on a loaded machine
    python bench/framework.py --threads 1 --ops --no-cold   # + where our step's time goes
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


# --------------------------------------------------------------------------- models
def vf_models():
    import visualdl.framework as vf
    from visualdl.framework import nn

    mlp = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                        nn.Linear(128, 10))
    lenet = nn.Sequential(nn.Conv2D(1, 6, 5), nn.ReLU(), nn.MaxPool2D(2),
                          nn.Conv2D(6, 16, 5), nn.ReLU(), nn.MaxPool2D(2), nn.Flatten(),
                          nn.Linear(256, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                          nn.Linear(84, 10))
    return vf, mlp, lenet


def vf_step_fn(net, x_np, y_np, device: str = "cpu"):
    import visualdl.framework as vf
    import visualdl.framework.nn.functional as F

    net.to(device)
    opt = vf.optim.SGD(net.parameters(), 0.01, momentum=0.9)
    x, y = vf.tensor(x_np, device=device), vf.tensor(y_np, device=device)

    def step():
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step


def torch_step_fn(kind, x_np, y_np, device: str = "cpu"):
    from torch import nn

    if kind == "mlp":
        net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                            nn.Linear(128, 10))
    else:
        net = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                            nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120),
                            nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
    return torch_train_step(net, x_np, y_np, device)


def torch_train_step(net, x_np, y_np, device: str = "cpu"):
    """One SGD-momentum training step of the torch module ``net`` on ``device``."""
    import torch

    net.to(device)
    opt = torch.optim.SGD(net.parameters(), 0.01, momentum=0.9)
    x, y = torch.tensor(x_np, device=device), torch.tensor(y_np, device=device)

    def step():
        loss = torch.nn.functional.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step


def data(kind):
    rng = np.random.default_rng(0)
    if kind == "mlp":
        return rng.standard_normal((128, 784)).astype(np.float32), rng.integers(0, 10, 128)
    return rng.standard_normal((64, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 64)


def time_interleaved(steps_fns, repeats: int, steps: int, warmup: int = 5,
                     clock=time.perf_counter, sync=lambda: None) -> list[float]:
    """Median seconds per step for each step function. Timed blocks of ``steps`` steps
    alternate between the functions, so load from other processes on a shared machine hits
    all of them alike. ``clock`` is wall time, or the process's CPU time (``--clock cpu``),
    which other processes' load does not inflate while they only take turns on the cores.
    ``sync`` waits for queued device work (a GPU's): each block starts and ends with it."""
    for fn in steps_fns:
        for _ in range(warmup):
            fn()
    sync()
    times: list[list[float]] = [[] for _ in steps_fns]
    for _ in range(repeats):
        for i, fn in enumerate(steps_fns):
            sync()
            t0 = clock()
            for _ in range(steps):
                fn()
            sync()
            times[i].append((clock() - t0) / steps)
    return [statistics.median(t) for t in times]


def blas_description() -> str:
    """numpy's BLAS and the kernels it picked: our GEMMs (most of the MLP step) run at that
    kernel set's speed, e.g. OpenBLAS's AVX2 "Haswell" kernels when ``OPENBLAS_CORETYPE``
    forces them on a CPU with AVX-512."""
    try:
        from threadpoolctl import threadpool_info

        info = next(i for i in threadpool_info() if i.get("user_api") == "blas")
    except (ImportError, StopIteration):
        return "unknown"
    forced = os.environ.get("OPENBLAS_CORETYPE")
    return (f"{info.get('internal_api')} {info.get('version')}, {info.get('architecture')} "
            f"kernels" + (f" (OPENBLAS_CORETYPE={forced})" if forced else ""))


def gemm_gflops(n: int = 512, repeats: int = 20) -> float:
    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    b = a.copy()
    a @ b
    t0 = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * n**3 * repeats / (time.perf_counter() - t0) / 1e9


# --------------------------------------------------------------------------- per-op split
def op_split(step, steps: int) -> tuple[float, list[tuple[str, str, int, float]]]:
    """(CPU seconds per step, [(op, forward|backward, calls per step, CPU seconds per step)])
    for one of our step functions: every registered op's forward and backward is wrapped with
    a thread-CPU-time counter for ``steps`` steps, then restored. The wrappers add a little
    time of their own to each call; shares, not absolute times, are the point."""
    from visualdl.framework import dispatch

    totals: dict[tuple[str, str], list] = {}
    # every method as resolved before any wrapping (an op may inherit another op's forward)
    saved = [(cls, meth, cls.__dict__.get(meth), getattr(cls, meth))
             for cls in dispatch.registered_ops().values() for meth in ("forward", "backward")]
    for cls, meth, _, fn in saved:
        acc = totals.setdefault((cls.name, meth), [0, 0.0])

        def timed(self, *a, _fn=fn, _acc=acc, **k):
            t0 = time.thread_time()
            try:
                return _fn(self, *a, **k)
            finally:
                _acc[0] += 1
                _acc[1] += time.thread_time() - t0

        setattr(cls, meth, timed)
    try:
        for _ in range(3):
            step()
        for acc in totals.values():
            acc[0], acc[1] = 0, 0.0
        t0 = time.thread_time()
        for _ in range(steps):
            step()
        per_step = (time.thread_time() - t0) / steps
    finally:
        for cls, meth, fn, _ in saved:
            if fn is None:
                delattr(cls, meth)
            else:
                setattr(cls, meth, fn)
    rows = [(name, meth, n // steps, t / steps) for (name, meth), (n, t) in totals.items() if n]
    rows.sort(key=lambda r: -r[3])
    return per_step, rows


# --------------------------------------------------------------------------- cold start
_FIRST_STEP = r"""
import json, time, sys
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
import numpy as np
import visualdl.framework as vf
sys.path.insert(0, {bench!r})
import framework as fb
t_import = time.perf_counter() - t0
_, mlp, lenet = fb.vf_models()
out = {{"import_s": t_import}}
for name, net in (("mlp", mlp), ("lenet", lenet)):
    x, y = fb.data(name)
    step = fb.vf_step_fn(net, x, y)
    t0 = time.perf_counter(); step(); out[name + "_first_step_s"] = time.perf_counter() - t0
print(json.dumps(out))
"""


def first_step_times(cache_dir: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    code = _FIRST_STEP.format(root=ROOT, bench=os.path.dirname(os.path.abspath(__file__)))
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description="visualdl.framework vs PyTorch CPU")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold/warm cache runs")
    parser.add_argument("--ops", action="store_true",
                        help="also print each op's forward/backward share of our step")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time steps by wall clock (default) or by this process's CPU time "
                             "(steadier on a loaded machine; with N threads it sums them)")
    args = parser.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time

    import visualdl.framework as vf

    try:
        import torch
    except ImportError:
        torch = None
        print("torch not installed: PyTorch columns left empty (pip install torch==2.13.0)")

    print(f"visualdl.framework benchmark  (numpy {np.__version__}, "
          f"torch {torch.__version__ if torch else '-'}, {os.cpu_count()} CPUs, "
          f"{args.clock} clock, median of {args.repeats} x {args.steps} steps)")
    print(f"numpy BLAS: {blas_description()}")
    rows = []
    for n_threads in [int(t) for t in args.threads.split(",")]:
        vf.set_num_threads(n_threads)
        if torch is not None:
            torch.set_num_threads(n_threads)
        gf = gemm_gflops()
        for kind in ("mlp", "lenet"):
            vf.seed(0)
            _, mlp, lenet = vf_models()
            x, y = data(kind)
            fns = [vf_step_fn(mlp if kind == "mlp" else lenet, x, y)]
            if torch is not None:
                torch.manual_seed(0)
                fns.append(torch_step_fn(kind, x, y))
            medians = time_interleaved(fns, args.repeats, args.steps, clock=clock)
            ours, theirs = medians[0], (medians[1] if torch is not None else None)
            rows.append((n_threads, kind, ours, theirs, gf))

    label = {"mlp": "MLP 784-256-128-10 b128", "lenet": "LeNet-5 1x28x28 b64"}
    print()
    print("| threads | workload | ours ms/step | ours steps/s | torch ms/step | torch steps/s "
          "| ratio (ours/torch steps/s) | numpy sgemm GFLOP/s |")
    print("|---|---|---|---|---|---|---|---|")
    for n_threads, kind, ours, theirs, gf in rows:
        t_ms = f"{theirs * 1e3:.3f}" if theirs else "-"
        t_sps = f"{1 / theirs:.0f}" if theirs else "-"
        ratio = f"{theirs / ours:.2f}x" if theirs else "-"
        print(f"| {n_threads} | {label[kind]} | {ours * 1e3:.3f} | {1 / ours:.0f} | {t_ms} | "
              f"{t_sps} | {ratio} | {gf:.1f} |")

    targets = {"mlp": 1.2, "lenet": 1.0}  # issue 14: LeNet-5 >= 1.0x PyTorch, MLP >= 1.2x
    marks = [(kind, theirs / ours) for n_threads, kind, ours, theirs, _ in rows
             if n_threads == 1 and theirs]
    if marks:
        print()
        for kind, ratio in marks:
            verdict = "PASS" if ratio >= targets[kind] else "MISS"
            print(f"target {label[kind]}, 1 thread: >= {targets[kind]:.1f}x PyTorch -> "
                  f"{ratio:.2f}x {verdict}")

    if args.ops:
        vf.set_num_threads(int(args.threads.split(",")[0]))
        for kind in ("mlp", "lenet"):
            vf.seed(0)
            _, mlp, lenet = vf_models()
            x, y = data(kind)
            per_step, split = op_split(vf_step_fn(mlp if kind == "mlp" else lenet, x, y),
                                       args.steps * args.repeats)
            print()
            print(f"{label[kind]}: {per_step * 1e3:.3f} ms CPU per step (ops timed)")
            print("| op | pass | calls/step | ms/step | share of step |")
            print("|---|---|---|---|---|")
            for name, meth, calls, t in split:
                print(f"| {name} | {meth} | {calls} | {t * 1e3:.3f} | {t / per_step:.0%} |")
            rest = per_step - sum(r[3] for r in split)
            print(f"| (outside ops: optimizer, autograd engine, Python) | | | {rest * 1e3:.3f} | "
                  f"{rest / per_step:.0%} |")

    if not args.no_cold:
        with tempfile.TemporaryDirectory() as cache:
            cold = first_step_times(cache)
            warm = first_step_times(cache)
        print()
        print("| fresh process | import s | MLP first step s | LeNet first step s |")
        print("|---|---|---|---|")
        for name, r in (("cold Numba cache", cold), ("warm Numba cache", warm)):
            print(f"| {name} | {r['import_s']:.2f} | {r['mlp_first_step_s']:.2f} | "
                  f"{r['lenet_first_step_s']:.2f} |")


if __name__ == "__main__":
    main()
