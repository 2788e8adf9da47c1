"""How the kineto fixtures here were made (run by hand; the tests only read the files).

``worker0.1700000000.pt.trace.json``: written by torch 2.13.0+cpu's profiler on a CPU-only
machine (``pip install torch-2.13.0+cpu numpy``; ``python make.py``): a small MLP trained
for 4 steps under ``torch.profiler.profile(schedule=schedule(wait=0, warmup=1, active=3),
on_trace_ready=tensorboard_trace_handler(dir, worker_name="worker0"))``, the file renamed
to a fixed timestamp. torch 2.13's kineto writes ``ts`` as microseconds after the header's
``baseTimeNanoseconds`` (about 5e12, nanoseconds as three decimals), not since the epoch.

``trace.json``: the same trace as newer kineto builds write it with absolute times: every
``ts`` replaced, in its text, by ``baseTimeNanoseconds / 1000 + ts`` (exact decimal
arithmetic, three decimals kept), and ``baseTimeNanoseconds`` dropped. Epoch microseconds,
about 1.79e15; the ``dur`` values are untouched.

``rank-0.json.gz``: ``trace.json`` with what ROCm's and newer CUDA kineto add on a GPU:
each ``ProfilerStep#N`` again as ``{"ph": "X", "cat": "gpu_user_annotation", "name":
"ProfilerStep#N", "pid": 0, "tid": 7, ...}`` (pid: the device, tid: the stream), starting
2 us after the host step and lasting its duration less 4 us (no GPU here: the events are
added as kineto writes them), gzip'd under Holistic Trace Analysis' name.

``config.json``, ``results.json.gz``: JSON that is not a trace (a run's settings, a
metrics dump that mentions trace events in a value): never listed as a profile.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import sys
import tempfile
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
_TS = re.compile(r'"ts": (-?\d+(?:\.\d+)?)')


def record() -> str:
    import torch
    from torch.profiler import profile, schedule, tensorboard_trace_handler

    out = tempfile.mkdtemp()
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 8)
    with profile(schedule=schedule(wait=0, warmup=1, active=3, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(out, worker_name="worker0")) as prof:
        for _ in range(4):
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
            prof.step()
    (name,) = os.listdir(out)
    dst = os.path.join(HERE, "worker0.1700000000.pt.trace.json")
    shutil.move(os.path.join(out, name), dst)
    return dst


def absolute(text: str) -> str:
    base_ns = int(re.search(r'"baseTimeNanoseconds": (\d+)', text).group(1))
    base_us = Decimal(base_ns) / 1000
    text = re.sub(r'\s*"baseTimeNanoseconds": \d+,', "", text)
    return _TS.sub(lambda m: f'"ts": {base_us + Decimal(m.group(1)):.3f}', text)


def with_gpu_steps(text: str) -> str:
    steps = re.findall(r'"name": "(ProfilerStep#\d+)",\s*"pid": \d+,\s*"tid": \d+,\s*'
                       r'"ts": ([\d.]+),\s*"dur": ([\d.]+)', text)
    added = "".join(
        f'\n  {{"ph": "X", "cat": "gpu_user_annotation", "name": "{name}", "pid": 0, '
        f'"tid": 7, "ts": {Decimal(ts) + 2:.3f}, "dur": {Decimal(dur) - 4:.3f}, '
        f'"args": {{"External id": 0}}}},' for name, ts, dur in steps)
    return text.replace('"traceEvents": [', '"traceEvents": [' + added, 1)


def main() -> None:
    path = record() if "--keep" not in sys.argv else \
        os.path.join(HERE, "worker0.1700000000.pt.trace.json")
    text = open(path).read()
    shifted = absolute(text)
    open(os.path.join(HERE, "trace.json"), "w").write(shifted)
    gpu = with_gpu_steps(shifted)
    json.loads(gpu)  # still JSON
    with open(os.path.join(HERE, "rank-0.json.gz"), "wb") as f:
        f.write(gzip.compress(gpu.encode(), mtime=0))
    json.dump({"lr": 0.1, "batch_size": 4, "note": "no traceEvents here"},
              open(os.path.join(HERE, "config.json"), "w"))
    with open(os.path.join(HERE, "results.json.gz"), "wb") as f:
        f.write(gzip.compress(json.dumps({"accuracy": [0.5, 0.7], "events": [
            {"ph": "X", "name": "not a trace", "ts": 1}]}).encode(), mtime=0))


if __name__ == "__main__":
    main()
