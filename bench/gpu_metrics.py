"""The real NVML path of the system metrics, for a machine with an NVIDIA GPU (the tests
use a test double of pynvml): reads every GPU once through the sampler's GPU probe, then
lets a real LogWriter sample for a few seconds and reads the GPU series back from its files.

Prints what it read; exits 0 with a clear message where there is no GPU, no driver or no
``nvidia-ml-py`` (pip install 'visualdl[gpu]'); exits 1 if a GPU is there but its series
do not come back.

    python bench/gpu_metrics.py
    python bench/gpu_metrics.py --seconds 5 --interval 0.5
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# What each GPU must report (power, temperature and clocks may be unsupported on a board).
REQUIRED = ("utilization_percent", "memory_used_bytes", "memory_total_bytes")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--interval", type=float, default=0.5)
    args = parser.parse_args(argv)
    from visualdl.kinds.system import gpu

    try:
        import pynvml  # noqa: F401
    except ImportError:
        print("no GPU check: nvidia-ml-py (pynvml) is not installed; "
              "pip install 'visualdl[gpu]' on a GPU machine")
        return 0
    probe = gpu.open_gpus()
    if probe is None:
        print("no GPU check: NVML found no NVIDIA GPU (or no driver) on this machine")
        return 0
    once = probe.read()
    probe.close()
    print(f"NVML: {probe.count} GPU(s), one reading through the probe:")
    for metric, value in sorted(once.items()):
        print(f"  {metric:<28}{value:>20,.1f}")
    return _through_a_writer(probe.count, args.seconds, args.interval)


def _through_a_writer(count: int, seconds: float, interval: float) -> int:
    from visualdl import LogReader, LogWriter

    tmp = tempfile.mkdtemp(prefix="vdl_gpu_metrics_")
    try:
        with LogWriter(logdir=os.path.join(tmp, "run"), system_metrics=interval) as writer:
            writer.add_scalar("loss", 1.0, 0)
            time.sleep(seconds)
        reader = LogReader(tmp)
        tags = [t for t in reader.tags("run").get("system", []) if "/gpu" in t]
        print(f"LogWriter(system_metrics={interval:g}) for {seconds:g} s: GPU series read back")
        print(f"  {'tag':<52}{'points':>7}{'last':>20}")
        for tag in tags:
            data = reader.scalars("run", tag)
            print(f"  {tag:<52}{len(data.steps):>7}{data.values[-1]:>20,.1f}")
        missing = [f"gpu{i}/{m}" for i in range(count) for m in REQUIRED
                   if not any(t.endswith(f"/gpu{i}/{m}") for t in tags)]
        if missing:
            print(f"FAIL: no series for {', '.join(missing)}")
            return 1
        print(f"OK: {len(tags)} GPU series from {count} GPU(s)")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
