"""A real PyTorch trace, made here by torch.profiler (CPU, record_shapes, profile_memory),
found in the logdir and read: skipped cleanly without torch."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from tests.kinds.profile import traces


@pytest.fixture(scope="module")
def torch_api(torch_logdir):
    with serving(torch_logdir) as handle:
        client = Client(handle.url)
        yield client, torch_logdir
        client.close()


def _trace(root, prefix: str, exact: bool = False) -> dict:
    (path,) = [p for p in (root / "torchrun").iterdir() if p.name.startswith(prefix)]
    return json.loads(path.read_text(), parse_float=Decimal if exact else float)


def test_handler_and_export_files_are_profiles_of_the_run(torch_api):
    api, _ = torch_api
    assert api.json("/api/tags", kind="profile")["runs"] == {"torchrun": ["export", "worker0"]}
    index = api.json("/api/profile", run="torchrun", tag="worker0")
    assert index["source"] == ["pytorch"] and index["steps"] == [2] and index["end_step"] == [4]


def test_operator_table_matches_the_torch_trace(torch_api):
    api, root = torch_api
    for tag in ("worker0", "export"):
        # exact: torch's times (about 5e12 us) are too far from zero for float sums
        expected = traces.exact_op_table(_trace(root, tag, exact=True))
        rows = {r["name"]: r for r in api.json("/api/profile/operators", run="torchrun",
                                               tag=tag)["rows"]}
        assert set(rows) == set(expected)
        for name, want in expected.items():
            assert rows[name]["calls"] == want["calls"]
            assert rows[name]["total"] == pytest.approx(float(want["total"]), rel=1e-6, abs=1e-2)
            assert rows[name]["self"] == pytest.approx(float(want["self"]), rel=1e-6, abs=1e-2)
    shapes = api.json("/api/profile/operators", run="torchrun", tag="worker0",
                      group="shapes")["rows"]
    addmm = [r for r in shapes if r["name"] == "aten::addmm"]
    assert {r["shapes"] for r in addmm} == {"[[32], [16, 64], [64, 32], [], []]",
                                            "[[10], [16, 32], [32, 10], [], []]"}


def test_overview_of_torch_steps_sums_to_the_step(torch_api):
    api, root = torch_api
    trace = _trace(root, "worker0")
    steps = {int(e["name"].split("#")[1]): e["dur"] for e in traces.complete(trace)
             if e["name"].startswith("ProfilerStep#")}
    body = api.json("/api/profile/overview", run="torchrun", tag="worker0")
    assert [s["step"] for s in body["steps"]] == sorted(steps)
    for row in body["steps"]:
        assert sum(row["parts"].values()) == pytest.approx(steps[row["step"]], rel=0.01)
        for phase in ("data", "forward", "backward", "optimizer"):
            assert row["parts"][phase] > 0, phase
    assert body["environment"]["fields"]["record_shapes"] == 1


def test_memory_of_the_torch_trace(torch_api):
    api, root = torch_api
    trace = _trace(root, "worker0")
    marks = [e for e in trace["traceEvents"] if e.get("name") == "[memory]"]
    mem = api.json("/api/profile/memory", run="torchrun", tag="worker0")
    cpu = next(d for d in mem["devices"] if d["device"] == "CPU")
    assert cpu["peak"] == max(m["args"]["Total Allocated"] for m in marks
                              if m["args"]["Device Type"] == 0)
    assert mem["top_ops"] and mem["top_ops"][0]["bytes"] > 0
