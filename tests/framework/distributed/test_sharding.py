"""Sharded updates (``fleet.DistributedStrategy(sharding=True)``): each rank updates its half
of the parameters; the training, the optimizer's state and its checkpoints are those of
plain data parallelism, and of one process on the global batch."""

from __future__ import annotations

import numpy as np
import pytest

import visualdl.framework as vf
from tests.framework.distributed import workers
from visualdl.framework.distributed import fleet, spawn


def assert_same_training(result: dict, reference: dict, rtol: float = 0.0, atol: float = 0.0):
    for name, w in reference["weights"].items():
        np.testing.assert_allclose(result["weights"][name], w, rtol=rtol, atol=atol,
                                   err_msg=f"final weight {name}")
    assert sorted(result["state"]) == sorted(reference["state"])
    for key, value in reference["state"].items():
        np.testing.assert_allclose(result["state"][key], value, rtol=rtol, atol=atol,
                                   err_msg=f"optimizer state {key}")
    assert result["step_count"] == reference["step_count"]


@pytest.mark.parametrize("optimizer", ["adam", "momentum"])
def test_sharded_training_is_plain_data_parallel_training(backend, optimizer):
    alone = workers.train_with(optimizer, sharded=False)
    plain = spawn(workers.train_with, args=(optimizer, False), nprocs=2, timeout_s=300,
                  backend=backend)
    sharded = spawn(workers.train_with, args=(optimizer, True), nprocs=2, timeout_s=300,
                    backend=backend)
    for rank in (0, 1):
        # the same elementwise update of the same averaged gradients: equal to the bit
        assert_same_training(sharded[rank], plain[rank])
        # and one process on the global batch, up to the all-reduce's order of summing
        assert_same_training(sharded[rank], alone, rtol=1e-4, atol=1e-5)
    assert alone["state"]["0.moment1" if optimizer == "adam" else "0.momentum"].any()
    # the parameters are views of the flat buffers the ranks exchange
    assert [r["views"] for r in sharded] == [4, 4] and [r["views"] for r in plain] == [0, 0]


def test_a_sharded_state_is_saved_only_whole(backend):
    """fit gathers the state when it ends (a rank-0 save after it holds every moment); a
    step after that shards it again, and state_dict() refuses until it is gathered."""
    ranks = spawn(workers.train_with, args=("adam", True), nprocs=2, timeout_s=300,
                  backend=backend)
    for result in ranks:
        assert len(result["state"]) == 8  # 4 parameters x 2 moments, gathered by fit
        assert result["refused"] == (
            "DistributedError: the optimizer's state is sharded over 2 ranks "
            "(DistributedStrategy.sharding): call consolidate_state_dict() on every rank "
            "before state_dict() (the checkpoint callbacks and fit_on_ray do)")
    plain = spawn(workers.train_with, args=("adam", False), nprocs=2, timeout_s=300,
                  backend=backend)
    assert plain[0]["refused"] == ""


def test_sharded_checkpoints_hold_the_whole_state_and_resume(tmp_path, backend):
    """fit(save_dir=...) gathers the state on every rank before rank 0 saves; a sharded run
    resumed from it trains on as plain data parallelism resumed from it does."""
    sharded_dir, plain_dir = str(tmp_path / "sharded"), str(tmp_path / "plain")
    spawn(workers.train_with, args=("adam", True, sharded_dir), nprocs=2, timeout_s=300,
          backend=backend)
    spawn(workers.train_with, args=("adam", False, plain_dir), nprocs=2, timeout_s=300,
          backend=backend)
    saved = vf.load(f"{sharded_dir}/final.vfopt")
    reference = vf.load(f"{plain_dir}/final.vfopt")
    assert saved["step_count"] == reference["step_count"] == 3 * workers.N // 16
    assert sorted(saved["state"]) == sorted(reference["state"])
    for key, value in reference["state"].items():
        np.testing.assert_array_equal(saved["state"][key], value, err_msg=key)
    # resumed: each rank takes its share of the loaded moments
    resumed = spawn(workers.train_with, args=("adam", True, None, f"{sharded_dir}/final", 1),
                    nprocs=2, timeout_s=300, backend=backend)
    again = spawn(workers.train_with, args=("adam", False, None, f"{plain_dir}/final", 1),
                  nprocs=2, timeout_s=300, backend=backend)
    assert resumed[0]["step_count"] == 4 * workers.N // 16
    assert_same_training(resumed[0], again[0])


def refused_strategies() -> list[str]:
    import visualdl.framework.distributed as dist

    dist.init_parallel_env()
    words = []
    for configs in ({"stage": 2}, {"sharding_degree": 4}):
        strategy = fleet.DistributedStrategy(sharding=True)
        strategy.sharding_configs = configs
        try:
            fleet.distributed_optimizer(workers.make_model().optimizer, strategy)
        except NotImplementedError as exc:
            words.append(str(exc))
    model = workers.make_model()
    try:
        model.fit(workers.toy_data(), batch_size=8, verbose=0, distributed="sharded")
    except TypeError as exc:
        words.append(str(exc))
    return words


def test_unsupported_sharding_is_refused_in_words(backend):
    ranks = spawn(refused_strategies, nprocs=2, timeout_s=300, backend=backend)
    assert ranks[0] == ranks[1] == [
        "DistributedStrategy: sharding stage 2 is not supported (stage 1: the optimizer's "
        "updates)",
        "DistributedStrategy: sharding_degree 4 with 2 ranks: sharding spans the whole group "
        "here (no hybrid parallelism)",
        "fit(distributed=...) takes True or a fleet.DistributedStrategy, got str"]


def test_a_world_of_one_updates_the_parameters_themselves():
    """Sharding alone (fit without a group of several) is the plain update."""
    model = workers.make_model()
    opt = fleet.distributed_optimizer(model.optimizer, fleet.DistributedStrategy(sharding=True))
    model.prepare(opt, vf.nn.CrossEntropyLoss())
    x, y = workers.toy_data()
    model.fit((x, y), batch_size=16, verbose=0, shuffle=False)
    reference = workers.make_model()
    reference.fit((x, y), batch_size=16, verbose=0, shuffle=False)
    for p, q in zip(model.network.parameters(), reference.network.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
        assert p.numpy().base is None  # not re-pointed into a flat buffer
    assert opt.state_dict()["state"]  # nothing to gather in a world of one
