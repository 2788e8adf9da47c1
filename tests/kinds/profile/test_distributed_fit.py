"""The distributed view of a profile our framework recorded (``vf.profiler`` during a real
``Model.fit``): one worker, no communication, no distributedInfo; the steps are all
computation and other, and the parts add up to each step's wall time."""

from __future__ import annotations

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving

pytest.importorskip("numba")


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from tests.framework.profiler.digits import fit_model

    logdir = tmp_path_factory.mktemp("fit")
    fit_model(str(logdir / "mlp"), profile_steps=(3, 6))
    with serving(str(logdir)) as handle:
        client = Client(handle.url)
        yield client
        client.close()


def test_our_fit_profile_is_one_rank_without_communication(api):
    body = api.json("/api/profile/distributed", run="mlp")
    overview = api.json("/api/profile/overview", run="mlp", tag="worker0")
    assert body["has_comm"] is False and body["world_size"] == 1
    assert body["steps"] == [s["step"] for s in overview["steps"]] and body["steps"]
    assert body["warnings"] == ["worker worker0: the trace has no distributedInfo; "
                                "its rank is taken from the workers' order (0)"]
    [rank] = body["ranks"]
    assert (rank["rank"], rank["worker"], rank["collectives"]) == (0, "worker0", [])
    assert overview["summary"]["distributed"] is False
    for step, want in zip(rank["steps"], overview["steps"]):
        assert step["dur"] == want["dur"]
        assert step["parts"]["communication"] == step["parts"]["overlap"] == 0
        assert 0 < step["parts"]["computation"] <= step["dur"]
        assert sum(step["parts"].values()) == pytest.approx(step["dur"])
