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


def profiled_ranks(tmp_path, sharded: bool) -> tuple[int, dict, dict]:
    """2 MPI ranks of ``workers.profiled_fit`` served: the model's parameter count, the
    distributed view, and each worker's steps as the overview lists them."""
    from tests.framework.distributed import workers
    from visualdl.framework.distributed import spawn
    from visualdl.framework.distributed.mpi_launch import launcher

    if launcher() is None:
        pytest.skip("mpi4py and MPICH are not installed (pip install 'visualdl[distributed]')")
    logdir = tmp_path / "logs"
    [params, _] = spawn(workers.profiled_fit, args=(str(logdir / "dp"), sharded), nprocs=2,
                        timeout_s=300, backend="mpi")
    with serving(str(logdir)) as handle:
        client = Client(handle.url)
        body = client.json("/api/profile/distributed", run="dp")
        steps = {r["worker"]: client.json("/api/profile/overview", run="dp",
                                          tag=r["worker"])["steps"] for r in body["ranks"]}
    return params, body, steps


def test_our_data_parallel_fit_shows_its_all_reduces(tmp_path):
    """2 ranks of fit(distributed=True) profiled by the VisualDL callback: each trace names
    its rank (distributedInfo), each step's all-reduce is a Communication span, and the view
    counts exactly those: one per step and rank, carrying the model's parameters."""
    params, body, steps = profiled_ranks(tmp_path, sharded=False)
    assert body["world_size"] == 2 and body["has_comm"] is True
    assert body["warnings"] == []  # the ranks come from the traces' distributedInfo
    assert [r["rank"] for r in body["ranks"]] == [0, 1]
    for rank in body["ranks"]:
        [row] = rank["collectives"]
        calls = len(steps[rank["worker"]])
        assert (row["op"], row["calls"]) == ("allreduce", calls)
        assert row["bytes"] == calls * params * 4  # float32 gradients, one bucket a step
        assert row["time"] > 0 and row["bandwidth"] == pytest.approx(
            row["bytes"] / (row["time"] * 1e-6))
        for step in rank["steps"]:
            parts = step["parts"]
            assert parts["communication"] + parts["overlap"] > 0
            assert parts["computation"] > 0
            assert sum(parts.values()) == pytest.approx(step["dur"])
        comm = sum(s["parts"]["communication"] + s["parts"]["overlap"] for s in rank["steps"])
        assert comm <= row["time"] + 1e-6  # the spans inside the shown steps, at most all


def test_sharded_updates_show_their_all_gathers(tmp_path):
    """With sharded updates each step also all-gathers the parameters: the view's table
    holds both collectives, a call of each a step, the all-gather carrying each rank's half."""
    params, body, steps = profiled_ranks(tmp_path, sharded=True)
    assert body["world_size"] == 2 and body["has_comm"] is True
    for rank in body["ranks"]:
        calls = len(steps[rank["worker"]])
        rows = {row["op"]: row for row in rank["collectives"]}
        assert sorted(rows) == ["allgather", "allreduce"]
        assert (rows["allreduce"]["calls"], rows["allgather"]["calls"]) == (calls, calls)
        assert rows["allreduce"]["bytes"] == calls * params * 4
        assert rows["allgather"]["bytes"] == calls * -(-params // 2) * 4
