"""A profile recorded by ``vf.profiler`` during a real ``Model.fit`` on the digits, read by
the dashboard's API: the recorder's and the dashboard's vocabularies meet (backward ops are
operator rows, the overview parts sum to each step, the environment is shown)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogReader

pytest.importorskip("numba")


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    from tests.framework.profiler.digits import fit_model

    logdir = tmp_path_factory.mktemp("fit")
    fit_model(str(logdir / "mlp"), profile_steps=(3, 6), record_shapes=True)
    reader = LogReader(str(logdir))
    (ref,) = reader.blobs("mlp", "profile", "worker0")
    import gzip
    trace = json.loads(gzip.decompress(reader.load(ref).trace_gz))
    with serving(str(logdir)) as handle:
        client = Client(handle.url)
        yield client, trace
        client.close()


def _complete(trace, cat):
    return [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == cat]


def test_forward_and_backward_ops_are_operator_rows(fitted):
    api, trace = fitted
    rows = {r["name"]: r for r in api.json("/api/profile/operators", run="mlp",
                                          tag="worker0")["rows"]}
    for cat in ("Operator", "Backward"):
        ops = [e for e in _complete(trace, cat) if "Sequence number" in e.get("args", {})]
        assert ops, cat
        for name in {e["name"] for e in ops}:
            mine = [e for e in ops if e["name"] == name]
            assert rows[name]["calls"] == len(mine), name
            assert rows[name]["total"] == pytest.approx(sum(e["dur"] for e in mine), rel=1e-6)
    assert any(name.endswith("_grad") for name in rows)


def test_overview_of_a_fit_profile(fitted):
    api, trace = fitted
    body = api.json("/api/profile/overview", run="mlp", tag="worker0")
    steps = _complete(trace, "ProfileStep")
    assert [s["step"] for s in body["steps"]] == [3, 4, 5]
    for row, step in zip(body["steps"], steps):
        assert row["dur"] == pytest.approx(step["dur"])
        assert sum(row["parts"].values()) == pytest.approx(step["dur"], rel=0.01)
        for part in ("data", "forward", "backward", "optimizer"):
            assert row["parts"][part] > 0, part
    fields = body["environment"]["fields"]
    env = trace["visualdl_env"]  # what vf.profiler recorded: device, threads, versions
    for key in ("framework", "framework_version", "device", "num_threads", "numpy", "numba"):
        assert fields[key] == env[key], key


def test_export_chrome_tracing_files_are_found_in_a_logdir(tmp_path):
    import visualdl.framework as vf
    from visualdl.framework import nn

    net = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = vf.optim.SGD(net.parameters(), 0.1)
    x = vf.to_tensor([[0.5] * 8] * 4)
    handler = vf.profiler.export_chrome_tracing(str(tmp_path / "run"), worker_name="host")
    with vf.profiler.Profiler(scheduler=(1, 3), on_trace_ready=handler) as prof:
        for _ in range(4):
            loss = net(x).sum()
            loss.backward()
            opt.step()
            opt.clear_grad()
            prof.step()
    (path,) = (tmp_path / "run").glob("host.*.vf.trace.json")
    trace = json.loads(path.read_text())
    with serving(str(tmp_path)) as handle:
        api = Client(handle.url)
        assert api.json("/api/tags", kind="profile")["runs"] == {"run": ["host"]}
        rows = {r["name"]: r for r in api.json("/api/profile/operators", run="run",
                                              tag="host")["rows"]}
        api.close()
    matmuls = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e["name"] == "linear"]
    assert matmuls and rows["linear"]["calls"] == len(matmuls) == 4
    assert rows["linear_grad"]["calls"] == 4
