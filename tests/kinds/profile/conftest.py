"""Logdirs for the profiler tests: our trace through the writer, the same trace as PyTorch
trace files (plain, gzip, non-strict JSON), broken files, and a real torch.profiler trace."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from tests.kinds.profile import traces
from visualdl import LogWriter

OLD = 3600.0

# PyTorch's vocabulary with a GPU: a step whose host time overlaps kernels and a memcpy.
GPU_TRACE = {"deviceProperties": [{"id": 0, "name": "Test GPU", "totalGlobalMem": 1 << 30}],
             "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 30},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12, "dur": 5},
    {"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#SGD.step", "pid": 1, "tid": 1, "ts": 50, "dur": 20},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 1, "tid": 1, "ts": 52, "dur": 10},
    {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7, "ts": 15, "dur": 30},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 8, "ts": 40, "dur": 20},
    {"ph": "X", "cat": "kernel", "name": "add", "pid": 0, "tid": 7, "ts": 55, "dur": 5},
]}  # seconds: broken trace files old enough to be shown with their error


def _age(path) -> None:
    st = os.stat(path)
    os.utime(path, (st.st_atime - OLD, st.st_mtime - OLD))


@pytest.fixture(scope="session")
def our_trace() -> dict:
    return traces.ours()


@pytest.fixture(scope="session")
def logdir(tmp_path_factory, our_trace):
    root = tmp_path_factory.mktemp("profiles")
    with LogWriter(logdir=str(root / "ours")) as writer:
        writer.add_scalar("loss", 1.0, 5)
        writer.add_profile("train", our_trace, 5, end_step=7)
    with LogWriter(logdir=str(root / "ours_bad")) as writer:  # a cut trace inside a record
        writer.add_profile("cut", b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1', 1)
    files = root / "files"
    files.mkdir()
    raw = traces.dump(our_trace)
    (files / "host_1.1700000000001.pt.trace.json.gz").write_bytes(gzip.compress(raw))
    text = raw.decode()
    # what PyTorch may write that strict JSON refuses: NaN and trailing commas
    nonstrict = text.replace('"threads": 1}', '"threads": 1, "score": NaN,}').replace(
        '"traceEvents": [', '"traceEvents": [{"ph": "X", "cat": "Operator", "name": "nan_op", '
        '"pid": 9, "tid": 9, "ts": 1.0, "dur": 1.0, "args": {"x": Infinity},},')
    (files / "nonstrict.pt.trace.json").write_text(nonstrict)
    gpu = root / "gpu"
    gpu.mkdir()
    (gpu / "gpu.1.pt.trace.json").write_text(json.dumps(GPU_TRACE))
    broken = root / "broken"
    broken.mkdir()
    for name, data in [("truncated.1.pt.trace.json", raw[: len(raw) // 2]),
                       ("garbage.1.pt.trace.json.gz", b"\x1f\x8b" + os.urandom(300)),
                       ("empty.1.pt.trace.json", b""),
                       ("notjson.1.pt.trace.json", b"hello, this is not a trace }")]:
        path = broken / name
        path.write_bytes(data)
        _age(path)
    (broken / "good.1.pt.trace.json").write_bytes(raw)
    return root


@pytest.fixture(scope="session")
def server(logdir):
    with serving(logdir) as handle:
        yield handle


@pytest.fixture(scope="session")
def api(server):
    client = Client(server.url)
    yield client
    client.close()


@pytest.fixture(scope="session")
def torch_logdir(tmp_path_factory, torch):
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    root = tmp_path_factory.mktemp("torch")
    run = root / "torchrun"
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.utils.data.TensorDataset(torch.randn(96, 64), torch.randint(0, 10, (96,)))
    loader = torch.utils.data.DataLoader(data, batch_size=16)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True,
                 schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(str(run), worker_name="worker0")) as p:
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            p.step()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 profile_memory=True) as p2:
        model(torch.randn(8, 64)).sum().backward()
    p2.export_chrome_trace(str(run / "export.pt.trace.json"))
    return root
