"""Profiles that need a fresh process: a cold Numba cache (compilation shows as its own
category) and the CUDA simulator (kernel events on the device track)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.helpers.cli import REPO

ROOT = str(REPO)


def _run(code: str, tmp_path, **env) -> dict:
    out = tmp_path / "trace.json"
    full_env = dict(os.environ, PYTHONPATH=ROOT, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1",
                    **env)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(out)], cwd=ROOT,
                          env=full_env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def _x(trace, cat=None):
    return [e for e in trace["traceEvents"] if e.get("ph") == "X"
            and (cat is None or e["cat"] == cat)]


COLD_STEP = """
    import sys
    import numpy as np
    import visualdl.framework as vf
    import visualdl.framework.nn.functional as F
    from visualdl.framework import nn

    net = nn.Sequential(nn.Linear(12, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = vf.optim.Adam(net.parameters(), 1e-3)
    x = vf.tensor(np.random.default_rng(0).random((5, 12), np.float32))
    y = vf.tensor(np.array([0, 1, 2, 1, 0]))
    with vf.profiler.Profiler() as prof:
        for _ in range(2):
            loss = F.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
    prof.export(sys.argv[1])
"""


def test_a_cold_first_step_shows_compile_time_apart_from_ops(tmp_path):
    from visualdl.framework.profiler.summary import step_parts

    trace = _run(COLD_STEP, tmp_path, NUMBA_CACHE_DIR=str(tmp_path / "numba_cache"))
    compiles = _x(trace, "Compile")
    assert compiles, "a cold cache must compile kernels"
    steps = {s["name"]: s for s in step_parts([dict(e) for e in trace["traceEvents"]])}
    cold, warm = steps["ProfilerStep#0"], steps["ProfilerStep#1"]
    assert cold["parts"]["Compile"] > 0.5 * cold["dur"]  # most of a cold step is compiling
    assert warm["parts"]["Compile"] == 0
    # each compile sits inside the op (or optimizer step) whose first call needed it
    outer = _x(trace, "Operator") + _x(trace, "Backward") + _x(trace, "Optimizer")
    for c in compiles:
        assert any(o["ts"] <= c["ts"] and c["ts"] + c["dur"] <= o["ts"] + o["dur"] + 1e-3
                   for o in outer), c
    named = {c["name"] for c in compiles if "Signature" in c.get("args", {})}
    assert named  # true compilations carry the function and its signature
    # op time on the cold step, compile excluded, stays near the warm step's
    from visualdl.framework.profiler.summary import annotate

    events = [dict(e) for e in trace["traceEvents"]]
    annotate(events)
    warm_start = _x(trace, "ProfileStep")[1]["ts"]
    cold_ops = sum(e["_self"] for e in events
                   if e.get("cat") == "Operator" and e["ts"] < warm_start)
    cold_compile = cold["parts"]["Compile"]
    assert cold_ops < 0.2 * cold_compile


CUDA_STEP = """
    import sys
    import numpy as np
    import visualdl.framework as vf
    import visualdl.framework.nn.functional as F
    from visualdl.framework import nn

    net = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 3)).to("cuda")
    opt = vf.optim.SGD(net.parameters(), 0.1)
    data = vf.data.TensorDataset(np.random.default_rng(0).random((2, 6), np.float32),
                                 np.array([0, 2]))
    loader = vf.data.DataLoader(data, batch_size=2, device="cuda")
    targets = [vf.profiler.ProfilerTarget.CPU, vf.profiler.ProfilerTarget.GPU]
    with vf.profiler.Profiler(targets=targets, record_shapes=True, profile_memory=True) as prof:
        (x, y), = list(loader)
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        prof.step()
    prof.export(sys.argv[1])
"""


def test_cuda_kernels_on_the_simulator(tmp_path):
    pytest.importorskip("numba_cuda")
    trace = _run(CUDA_STEP, tmp_path, NUMBA_ENABLE_CUDASIM="1")
    kernels = _x(trace, "Kernel")
    # a backward op shares its forward op's sequence number: key by both
    ops = {(e["name"], e["args"]["Sequence number"]): e for e in _x(trace)
           if e["cat"] in ("Operator", "Backward") and "Sequence number" in e.get("args", {})}
    (copy,) = _x(trace, "Memcpy")
    (runtime,) = _x(trace, "Runtime")
    assert copy["pid"] == 0 and runtime["pid"] != 0
    assert runtime["name"] == "cudaMemcpy HtoD" and runtime["args"]["Bytes"] == 2 * 6 * 4 + 2 * 8
    (loading,) = _x(trace, "Dataloader")
    assert loading["ts"] <= runtime["ts"] <= loading["ts"] + loading["dur"]
    (opt,) = [k for k in kernels if k["args"]["Kind"] == "optimizer"]
    assert opt["name"] == "Optimizer.step#SGD.step" and opt["args"]["Sequence number"] is None
    kernels.remove(opt)
    assert kernels and len(kernels) == len(ops)
    for k in kernels:
        assert k["pid"] == 0 and k["tid"] == 0  # the device track, apart from host threads
        op = ops[(k["name"], k["args"]["Sequence number"])]
        assert k["args"]["Kind"] == ("backward" if op["cat"] == "Backward" else "forward")
        assert k["name"] == op["name"]
        assert op["args"]["Device"] == "cuda"
        assert k["args"]["Timing"] == "host"  # the simulator times nothing on a device
    pids = {e["pid"] for e in _x(trace, "Operator")}
    assert 0 not in pids
    names = {(e["pid"], e["args"]["name"]) for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert (0, "GPU 0") in names
    assert trace["visualdl_env"]["device"] == "cuda" and trace["visualdl_env"]["cuda_simulator"]
    mem = [e for e in trace["traceEvents"] if e.get("name") == "[memory]"]
    assert mem and all(e["args"]["Device Type"] == 1 and e["args"]["Device Id"] == 0
                       for e in mem)
