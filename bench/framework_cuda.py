"""Benchmark visualdl.framework's CUDA kernels against PyTorch on the same GPU, same run.

Training steps (forward + backward + SGD-momentum step) of bench/framework.py's workloads,
plus one sized for a GPU:
  * MLP 784-256-128-10, batch 128 and LeNet-5 on 1x28x28, batch 64 (bench/framework.py)
  * MLP 784-2048-2048-10, batch 4096
Each row: median ms per step of ours on "cuda", PyTorch on "cuda", and ours on the CPU (one
thread per core), blocks of steps ending in a device synchronize, interleaved so that a
clock change hits all alike. Also the first step's time on "cuda" in this process (Numba
compiles each kernel on first use; a cached kernel loads from disk).

Needs a GPU: prints why and exits 0 without one.

    python bench/framework_cuda.py
    python bench/framework_cuda.py --repeats 5 --steps 20 --no-cpu
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import framework as cpu_bench  # noqa: E402  (bench/framework.py: the shared workloads)

LABELS = {"mlp": "MLP 784-256-128-10 b128", "lenet": "LeNet-5 1x28x28 b64",
          "wide": "MLP 784-2048-2048-10 b4096"}


def wide_models():
    """Both frameworks' wide MLP (GPU-sized: ~40 GFLOP a step)."""
    from visualdl.framework import nn

    ours = nn.Sequential(nn.Linear(784, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                         nn.Linear(2048, 10))
    try:
        import torch
    except ImportError:
        return ours, None
    theirs = torch.nn.Sequential(torch.nn.Linear(784, 2048), torch.nn.ReLU(),
                                 torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                                 torch.nn.Linear(2048, 10))
    return ours, theirs


def workload(kind: str, torch_ok: bool, with_cpu: bool):
    """(ours on cuda, torch on cuda or None, ours on cpu or None) step functions."""
    import visualdl.framework as vf

    if kind == "wide":
        rng = np.random.default_rng(0)
        x = rng.standard_normal((4096, 784)).astype(np.float32)
        y = rng.integers(0, 10, 4096)
        vf.seed(0)
        ours, theirs = wide_models()
        cpu = wide_models()[0] if with_cpu else None
        torch_fn = (cpu_bench.torch_train_step(theirs, x, y, "cuda")
                    if torch_ok and theirs is not None else None)
    else:
        x, y = cpu_bench.data(kind)
        vf.seed(0)
        _, mlp, lenet = cpu_bench.vf_models()
        ours = mlp if kind == "mlp" else lenet
        cpu = (cpu_bench.vf_models()[1 if kind == "mlp" else 2]) if with_cpu else None
        torch_fn = cpu_bench.torch_step_fn(kind, x, y, device="cuda") if torch_ok else None
    first = time.perf_counter()
    ours_fn = cpu_bench.vf_step_fn(ours, x, y, device="cuda")
    ours_fn().numpy()  # the first step: Numba compiles (or loads) every kernel it uses
    first = time.perf_counter() - first
    cpu_fn = cpu_bench.vf_step_fn(cpu, x, y) if cpu is not None else None
    return ours_fn, torch_fn, cpu_fn, first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--no-cpu", action="store_true", help="skip our CPU column")
    parser.add_argument("--workloads", default="mlp,lenet,wide")
    args = parser.parse_args(argv)

    import visualdl.framework as vf
    from visualdl.framework.device import cuda_unavailable_reason

    why = cuda_unavailable_reason()
    if why is not None:
        print(f"no CUDA benchmark: {why}")
        return 0
    from numba import cuda

    try:
        import torch
        torch_ok = torch.cuda.is_available()
    except ImportError:
        torch, torch_ok = None, False

    def sync():
        cuda.synchronize()
        if torch_ok:
            torch.cuda.synchronize()

    vf.set_num_threads(os.cpu_count() or 1)
    if torch is not None:
        torch.set_num_threads(os.cpu_count() or 1)
    gpu = getattr(cuda.get_current_device(), "name", "Numba's CUDA simulator")
    gpu = gpu.decode() if isinstance(gpu, bytes) else gpu
    print(f"visualdl.framework on CUDA vs PyTorch  ({gpu}; torch "
          f"{torch.__version__ if torch else '-'}; median of {args.repeats} x {args.steps} "
          f"steps; CPU column: {os.cpu_count()} threads)")
    print()
    print("| workload | ours cuda ms/step | torch cuda ms/step | ours/torch steps/s "
          "| ours cpu ms/step | cuda/cpu speed-up | ours first cuda step s |")
    print("|---|---|---|---|---|---|---|")
    for kind in args.workloads.split(","):
        ours_fn, torch_fn, cpu_fn, first = workload(kind, torch_ok, not args.no_cpu)
        fns = [f for f in (ours_fn, torch_fn, cpu_fn) if f is not None]
        medians = iter(cpu_bench.time_interleaved(fns, args.repeats, args.steps, warmup=3,
                                                   sync=sync))
        ours = next(medians)
        theirs = next(medians) if torch_fn is not None else None
        cpu = next(medians) if cpu_fn is not None else None
        t = f"{theirs * 1e3:.3f}" if theirs else "-"
        ratio = f"{theirs / ours:.2f}x" if theirs else "-"
        c = f"{cpu * 1e3:.3f}" if cpu else "-"
        up = f"{cpu / ours:.1f}x" if cpu else "-"
        print(f"| {LABELS[kind]} | {ours * 1e3:.3f} | {t} | {ratio} | {c} | {up} | {first:.1f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
