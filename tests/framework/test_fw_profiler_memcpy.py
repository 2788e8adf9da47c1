"""Device transfers under vf.profiler, on Numba's CUDA simulator (in a fresh process, since the
simulator is chosen when Numba is imported): ``Tensor.to``, its gradient and ``Layer.to`` are
recorded as Kineto records a copy -- a Runtime span ``cudaMemcpy HtoD``/``DtoH`` on the host
thread and a Memcpy event with bytes and direction on the device track -- not as a kernel, and
the dashboard's overview counts that time as GPU memcpy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.helpers.cli import REPO

ROOT = str(REPO)

SCRIPT = """
    import sys
    import numpy as np
    import visualdl.framework as vf
    from visualdl.framework import nn

    net = nn.Linear(3, 2)
    x = vf.tensor(np.arange(12, dtype=np.float32).reshape(4, 3), requires_grad=True)
    targets = [vf.profiler.ProfilerTarget.CPU, vf.profiler.ProfilerTarget.GPU]
    with vf.profiler.Profiler(targets=targets) as prof:
        net.to("cuda")                      # 2 parameters: 6 and 2 float32 -> HtoD
        xd = x.to("cuda")                   # 48 bytes HtoD (op to_device)
        y = net(xd)                         # (4, 2) on the GPU
        back = y.to("cpu")                  # 32 bytes DtoH (op to_device)
        back.sum().backward()               # to_device_grad: 32 bytes HtoD, then 48 DtoH
        prof.step()
    prof.export(sys.argv[1])
    np.testing.assert_allclose(x.grad.numpy(),
                               np.tile(net.weight.numpy().sum(axis=0), (4, 1)), rtol=1e-6)
"""


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> dict:
    pytest.importorskip("numba_cuda")
    out = tmp_path_factory.mktemp("memcpy") / "trace.json"
    env = dict(os.environ, PYTHONPATH=ROOT, NUMBA_ENABLE_CUDASIM="1", NUMBA_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def _x(trace: dict, cat: str) -> list[dict]:
    return sorted((e for e in trace["traceEvents"] if e.get("ph") == "X" and e["cat"] == cat),
                  key=lambda e: e["ts"])


def test_copies_are_memcpy_events_with_bytes_and_direction(trace):
    copies = _x(trace, "Memcpy")
    runtime = _x(trace, "Runtime")
    expected = [("HtoD", 24), ("HtoD", 8), ("HtoD", 48), ("DtoH", 32), ("HtoD", 32),
                ("DtoH", 48)]
    assert [(e["args"]["Direction"], e["args"]["Bytes"]) for e in copies] == expected
    assert [(e["args"]["Kind"], e["args"]["Bytes"]) for e in runtime] == expected
    names = {"HtoD": "Memcpy HtoD (Pageable -> Device)", "DtoH": "Memcpy DtoH (Device -> Pageable)"}
    for dev, host in zip(copies, runtime):
        assert dev["pid"] == 0 and dev["tid"] == 0  # the device track
        assert host["pid"] != 0  # the host thread
        kind = dev["args"]["Direction"]
        assert dev["name"] == names[kind] and host["name"] == f"cudaMemcpy {kind}"
        assert dev["args"]["Kind"] == "memcpy" and dev["args"]["Timing"] == "host"
        # on the simulator the device span is the host span (nothing runs apart)
        assert dev["ts"] == host["ts"] and dev["dur"] == host["dur"]


def test_a_transfer_op_is_an_operator_around_its_copy_not_a_kernel(trace):
    kernels = _x(trace, "Kernel")
    assert kernels  # the linear layer's forward and backward ran on the GPU
    assert not [k for k in kernels if k["name"].startswith("to_device")]
    ops = [e for e in _x(trace, "Operator") + _x(trace, "Backward")
           if e["name"] in ("to_device", "to_device_grad")]
    assert sorted(e["name"] for e in ops) == ["to_device", "to_device", "to_device_grad",
                                              "to_device_grad"]
    runtime = [e for e in _x(trace, "Runtime")]
    for op in ops:  # each op's copy is nested inside it on the host thread
        inside = [r for r in runtime if op["ts"] <= r["ts"]
                  and r["ts"] + r["dur"] <= op["ts"] + op["dur"] + 1e-3]
        assert len(inside) == 1


def test_the_overview_counts_copies_as_gpu_memcpy(trace):
    from visualdl.kinds.profile.model import TraceModel
    from visualdl.kinds.profile.parse import parse_trace
    from visualdl.kinds.profile.views import overview

    view = overview(TraceModel(parse_trace(json.dumps(trace).encode())))
    (step,) = view["steps"]
    parts = step["parts"]
    copy_time = sum(e["dur"] for e in _x(trace, "Memcpy"))
    kernel_time = sum(e["dur"] for e in _x(trace, "Kernel"))
    assert copy_time > 0
    # the step's memcpy part is the copies' time (they overlap nothing else on the device)
    assert parts["memcpy"] == pytest.approx(copy_time, rel=1e-6, abs=1e-3)
    assert parts["kernel"] == pytest.approx(kernel_time, rel=1e-6, abs=1e-3)
    assert sum(parts.values()) == pytest.approx(step["dur"], rel=1e-6)
