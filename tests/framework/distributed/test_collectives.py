"""PaddlePaddle's tensor collectives on 2 ranks (gloo and MPI), as Paddle's docs call them:
``all_reduce`` with each ``ReduceOp``, ``reduce``, ``broadcast``, ``scatter``,
``all_gather``, ``all_gather_object``, ``barrier``, ``new_group``/``get_group``,
``ParallelEnv``, ``is_initialized``; a rank passing another shape fails naming it;
``spawn(nprocs=-1)`` starts one rank per core.

The functions the ranks run are module-level here: ``spawn`` imports them by name."""

from __future__ import annotations

import os

import numpy as np
import pytest

from visualdl.framework.distributed import DistributedError, spawn

SHORT = {"VISUALDL_DIST_TIMEOUT": "10"}


def paddle_collectives() -> dict:
    import visualdl.framework as vf
    from visualdl.framework import distributed as dist

    before = dist.is_initialized()
    dist.init_parallel_env()
    env = dist.ParallelEnv()
    r = dist.get_rank()
    out: dict = {"before": before, "after": dist.is_initialized(), "rank": env.rank,
                 "world": env.world_size, "nranks": env.nranks, "local": env.local_rank}
    for op in ("SUM", "AVG", "MAX", "MIN", "PROD"):
        t = vf.to_tensor(np.array([r + 1.0, -3.0 * (r + 1), 0.5], np.float32))
        assert dist.all_reduce(t, op=getattr(dist.ReduceOp, op)) is None
        out[op] = t.numpy().tolist()
        out[op + "_dtype"] = str(t.dtype)
    ints = vf.to_tensor(np.array([[r, 10 * r]], np.int64))
    task = dist.all_reduce(ints, sync_op=False)
    out["task"] = task.wait()
    out["ints"] = (ints.numpy().tolist(), str(ints.dtype))
    b = vf.to_tensor(np.full(3, 7.0 * r, np.float32))
    dist.broadcast(b, src=1)
    out["broadcast"] = b.numpy().tolist()
    gathered: list = []
    dist.all_gather(gathered, vf.to_tensor(np.array([r, r * r + 1], np.int64)))
    out["all_gather"] = [g.numpy().tolist() for g in gathered]
    objects: list = []
    dist.all_gather_object(objects, {"rank": r, "name": f"w{r}"})
    out["objects"] = objects
    dist.barrier()
    out.update(refusals(avg_int=lambda: dist.all_reduce(ints, op=dist.ReduceOp.AVG),
                        group=lambda: dist.all_reduce(b, group=object()),
                        src=lambda: dist.broadcast(b, src=5)))
    return out


def refusals(**calls) -> dict:
    """Each call's error as "Type: message" (None if it raised none), run in order on
    every rank alike."""
    out: dict = {}
    for name, call in calls.items():
        try:
            call()
            out[name] = None
        except (ValueError, NotImplementedError) as e:
            out[name] = f"{type(e).__name__}: {e}"
    return out


def test_paddle_collectives_on_two_ranks(backend):
    ranks = spawn(paddle_collectives, nprocs=2, env=SHORT, timeout_s=300, backend=backend)
    for r, got in enumerate(ranks):
        assert (got["before"], got["after"]) == (False, True)
        assert (got["rank"], got["world"], got["nranks"], got["local"]) == (r, 2, 2, r)
        assert got["SUM"] == [3.0, -9.0, 1.0]
        assert got["AVG"] == [1.5, -4.5, 0.5]
        assert got["MAX"] == [2.0, -3.0, 0.5]
        assert got["MIN"] == [1.0, -6.0, 0.5]
        assert got["PROD"] == [2.0, 18.0, 0.25]
        assert {got[op + "_dtype"] for op in ("SUM", "AVG", "MAX", "MIN", "PROD")} == {"float32"}
        assert got["task"] is True
        assert got["ints"] == ([[1, 10]], "int64")
        assert got["broadcast"] == [7.0, 7.0, 7.0]  # rank 1's
        assert got["all_gather"] == [[0, 1], [1, 2]]
        assert got["objects"] == [{"rank": 0, "name": "w0"}, {"rank": 1, "name": "w1"}]
        assert got["avg_int"] == ("ValueError: all_reduce: ReduceOp.AVG needs a floating "
                                  "tensor, got int64")
        assert got["group"] == ("NotImplementedError: collectives over a sub-group are not "
                                "supported: pass group=None or new_group(), every rank")
        assert got["src"] == "ValueError: broadcast: src=5 is not a rank of this group of 2"


def paddle_groups_reduce_scatter() -> dict:
    import visualdl.framework as vf
    from visualdl.framework import distributed as dist

    dist.init_parallel_env()
    r = dist.get_rank()
    group = dist.new_group([0, 1])  # every rank: what Paddle scripts often pass
    out: dict = {"group": (group.rank, group.nranks, group.ranks, group.id),
                 "same": repr(dist.get_group(0)) == repr(group)}
    t = vf.to_tensor(np.array([r + 1.0, 10.0 * (r + 1)], np.float32))
    assert dist.reduce(t, dst=1, group=group) is None
    out["reduce"] = t.numpy().tolist()  # rank 1: the sum; rank 0: its own, untouched
    m = vf.to_tensor(np.array([r + 2], np.int64))
    dist.reduce(m, dst=0, op=dist.ReduceOp.PROD)
    out["reduce_prod"] = (m.numpy().tolist(), str(m.dtype))
    parts = [vf.to_tensor(np.full(2, 100.0 * k + r, np.float32)) for k in range(2)]
    got = vf.to_tensor(np.zeros(2, np.float32))
    dist.scatter(got, parts if r == 1 else None, src=1, group=group)
    out["scatter"] = got.numpy().tolist()  # rank 1's parts[r]
    dist.all_reduce(got, group=group)
    out["all_reduce_group"] = got.numpy().tolist()
    out.update(refusals(sub=lambda: dist.new_group([1]),
                        unknown=lambda: dist.new_group([0, 3]),
                        short_list=lambda: dist.scatter(got, [parts[0]] if r == 0 else None,
                                                        src=0),
                        dst=lambda: dist.reduce(t, dst=2)))
    dist.barrier(group)
    return out


def test_paddle_groups_reduce_and_scatter_on_two_ranks(backend):
    ranks = spawn(paddle_groups_reduce_scatter, nprocs=2, env=SHORT, timeout_s=300,
                  backend=backend)
    for r, got in enumerate(ranks):
        assert got["group"] == (r, 2, [0, 1], 0) and got["same"]
        assert got["reduce"] == ([3.0, 30.0] if r == 1 else [1.0, 10.0])
        assert got["reduce_prod"] == ([6] if r == 0 else [3], "int64")  # 2 x 3 on rank 0
        assert got["scatter"] == [100.0 * r + 1, 100.0 * r + 1]
        assert got["all_reduce_group"] == [102.0, 102.0]  # 1 + 101
        assert got["sub"] == ("NotImplementedError: new_group: a sub-group (ranks [1] of 2) "
                              "is not supported: collectives run over every rank "
                              "(new_group() or group=None)")
        assert got["unknown"] == ("ValueError: new_group: ranks [0, 3] are not all ranks of "
                                  "this group of 2 (0..1)")
        assert got["short_list"] == ("ValueError: scatter: rank 0's tensor_list must hold 2 "
                                     "tensors, one per rank, got 1")
        assert got["dst"] == "ValueError: reduce: dst=2 is not a rank of this group of 2"


def test_a_world_of_one_has_its_group_reduce_and_scatter():
    import visualdl.framework as vf
    from visualdl.framework import distributed as dist

    group = dist.new_group()
    assert (group.rank, group.nranks, group.ranks) == (0, 1, [0])
    t = vf.to_tensor(np.array([2.0, 3.0], np.float32))
    dist.reduce(t, dst=0, op=dist.ReduceOp.PROD, group=group)
    assert t.numpy().tolist() == [2.0, 3.0]
    dist.scatter(t, [vf.to_tensor(np.array([7.0, 8.0], np.float32))], src=0)
    assert t.numpy().tolist() == [7.0, 8.0]


def other_shape_on_rank_1() -> None:
    import visualdl.framework as vf
    from visualdl.framework import distributed as dist

    n = 3 if dist.get_rank() == 1 else 2
    dist.all_reduce(vf.to_tensor(np.ones(n, np.float32)))


def test_a_rank_reducing_another_shape_fails_naming_it(backend):
    with pytest.raises(DistributedError) as err:
        spawn(other_shape_on_rank_1, nprocs=2, env=SHORT, timeout_s=120, backend=backend)
    assert err.value.rank == 1
    assert str(err.value).splitlines()[0] == (
        "rank 1: all_reduce's tensor (shape, dtype) differs from rank 0's: ((3,), 'float32') "
        "where rank 0 has ((2,), 'float32')")


def rank_and_size() -> tuple[int, int]:
    from visualdl.framework import distributed as dist

    dist.init_parallel_env()
    return dist.get_rank(), dist.get_world_size()


def test_spawn_minus_one_starts_a_rank_per_core(backend):
    cores = os.cpu_count() or 1
    if cores > 8:
        pytest.skip(f"{cores} cores: too many ranks for a test")
    ranks = spawn(rank_and_size, nprocs=-1, env=SHORT, timeout_s=300, backend=backend)
    assert ranks == [(r, cores) for r in range(cores)]


def test_spawn_refuses_a_count_below_minus_one():
    with pytest.raises(ValueError,
                       match=r"nprocs must be >= 1 \(or -1: one per CPU core\), got -2"):
        spawn(rank_and_size, nprocs=-2)
