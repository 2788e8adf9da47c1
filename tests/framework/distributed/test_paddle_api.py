"""PaddlePaddle's data-parallel calls on 2 ranks (gloo and MPI): the plain loop
(``DataParallel`` + a plain optimizer) averages gradients exactly once per step on every
path, ``no_sync`` accumulates, Paddle's signatures work, and ranks set up differently (a
frozen layer, other epochs / drop_last / shuffle) fail at once naming the rank.

The functions the ranks run are module-level here: ``spawn`` imports them by name."""

from __future__ import annotations

import os

import pytest

from tests.framework.distributed import workers
from visualdl.framework.distributed import DistributedError, spawn

SHORT = {"VISUALDL_DIST_TIMEOUT": "10"}
STEPS, GLOBAL_BATCH = 3, 16


def _count_syncs() -> list[int]:
    """Count ``DataParallel.sync_gradients`` calls in this process (one per step is right:
    a second all-reduce of the same gradients is wasted, a second division wrong)."""
    from visualdl.framework.distributed.parallel import DataParallel

    calls = [0]
    original = DataParallel.sync_gradients

    def counting(self):
        calls[0] += 1
        original(self)

    DataParallel.sync_gradients = counting
    return calls


def _batches(rank: int, world: int):
    """Rank ``rank``'s share of each of the STEPS global batches of the toy data."""
    import visualdl.framework as vf

    x, y = workers.toy_data()
    per = GLOBAL_BATCH // world
    for k in range(STEPS):
        lo = k * GLOBAL_BATCH + rank * per
        yield vf.to_tensor(x[lo:lo + per]), vf.to_tensor(y[lo:lo + per])


def plain_loop(mode: str) -> dict:
    """STEPS steps of Paddle's documented loop over a DataParallel model; ``mode``: "plain"
    (a plain optimizer), "fleet" (fleet.distributed_optimizer), "explicit" (sync_gradients
    called by hand before step), "no_sync" (each rank's share in two halves, the first
    backward inside no_sync()). Returns the first step's gradients, the final weights and
    the number of syncs."""
    import visualdl.framework as vf
    from visualdl.framework import distributed as dist
    from visualdl.framework.distributed import fleet

    calls = _count_syncs()
    comm = dist.init_parallel_env()
    model = workers.make_model()
    net = dist.DataParallel(model.network)
    opt = vf.optim.SGD(net.parameters(), 0.1, momentum=0.9)
    if mode == "fleet":
        opt = fleet.distributed_optimizer(opt)
    loss_fn, grads = vf.nn.CrossEntropyLoss(), {}
    for x, y in _batches(comm.rank, comm.world_size):
        if mode == "no_sync":
            half = len(x) // 2
            with net.no_sync():
                (loss_fn(net(x[:half]), y[:half]) * 0.5).backward()
            (loss_fn(net(x[half:]), y[half:]) * 0.5).backward()
        else:
            loss_fn(net(x), y).backward()
        if mode == "explicit":
            net.sync_gradients()
        opt.step()
        grads = grads or {n: p.grad.numpy().copy() for n, p in net.named_parameters()}
        opt.clear_grad()
    weights = {n: p.numpy().copy() for n, p in net.named_parameters()}
    return {"grads": grads, "weights": weights, "syncs": calls[0]}


def _alone() -> dict:
    """The reference: one process, no DataParallel, on the whole global batches."""
    import visualdl.framework as vf

    model = workers.make_model()
    net = model.network
    opt = vf.optim.SGD(net.parameters(), 0.1, momentum=0.9)
    grads = {}
    for x, y in _batches(0, 1):
        vf.nn.CrossEntropyLoss()(net(x), y).backward()
        opt.step()
        grads = grads or {n: p.grad.numpy().copy() for n, p in net.named_parameters()}
        opt.clear_grad()
    return {"grads": grads, "weights": {n: p.numpy().copy() for n, p in net.named_parameters()}}


@pytest.mark.parametrize("mode", ["plain", "fleet", "explicit", "no_sync"])
def test_the_plain_loop_averages_once_per_step(backend, mode):
    ranks = spawn(plain_loop, args=(mode,), nprocs=2, timeout_s=300, backend=backend)
    alone = _alone()
    for result in ranks:
        workers.assert_like_alone(result, alone)
        assert result["syncs"] == STEPS


def fit_counting(logdir: str) -> dict:
    """``workers.train`` (fit(distributed=True), VisualDL callback) counting the syncs."""
    calls = _count_syncs()
    result = workers.train(8, 1, True, logdir=logdir)
    return {**result, "syncs": calls[0]}


def test_fit_averages_once_per_step_and_logs_the_network_name(tmp_path, backend):
    from visualdl import LogReader

    ranks = spawn(fit_counting, args=(str(tmp_path / "dp"),), nprocs=2, timeout_s=300,
                  backend=backend)
    assert [r["syncs"] for r in ranks] == [workers.N // 16] * 2
    config = LogReader(str(tmp_path)).config("dp").nested
    assert config["model"]["name"] == "Sequential"  # not DataParallel, the wrapper


def paddle_calls() -> dict:
    """Paddle's signatures, as its docs write them."""
    import visualdl.framework as vf
    from visualdl.framework import distributed as dist
    from visualdl.framework.distributed import fleet

    fleet.init(is_collective=True)
    strategy = fleet.DistributedStrategy()
    net = fleet.distributed_model(workers.make_model().network)
    opt = fleet.distributed_optimizer(vf.optim.SGD(net.parameters(), 0.1), strategy=strategy)
    strategy.amp = True
    try:
        fleet.distributed_optimizer(vf.optim.SGD(net.parameters(), 0.1), strategy)
        refused = ""
    except NotImplementedError as e:
        refused = str(e)
    sampler = dist.DistributedBatchSampler(vf.dataloader.TensorDataset(*workers.toy_data(10)), 4)
    small = dist.DataParallel(workers.make_model().network, comm_buffer_size=1e-4)
    return {"index": fleet.worker_index(), "num": fleet.worker_num(), "refused": refused,
            "inner": type(opt.inner).__name__, "batches": [b.tolist() for b in sampler],
            "buckets": small.num_buckets, "no_sync": callable(small.no_sync)}


def test_paddle_signatures_work(backend):
    ranks = spawn(paddle_calls, nprocs=2, timeout_s=300, backend=backend)
    for rank, result in enumerate(ranks):
        assert (result["index"], result["num"], result["inner"]) == (rank, 2, "SGD")
        assert result["refused"] == ("DistributedStrategy: amp not supported (visualdl trains "
                                     "data-parallel only)")
        assert result["batches"] == ([[0, 1, 2, 3], [8]] if rank == 0 else [[4, 5, 6, 7], [9]])
        assert result["buckets"] == 4 and result["no_sync"]  # one per parameter at 100 bytes


def frozen_on_rank_1() -> None:
    """Rank 1 freezes the first layer: same state_dict, other trained parameters."""
    model = workers.make_model()
    if int(os.environ["RANK"]) == 1:
        for p in model.network[0].parameters():
            p.requires_grad = False
    model.fit(workers.toy_data(), batch_size=8, epochs=1, verbose=0, distributed=True)


def test_a_layer_frozen_on_one_rank_fails_naming_it(backend):
    with pytest.raises(DistributedError) as err:
        spawn(frozen_on_rank_1, nprocs=2, env=SHORT, timeout_s=120, backend=backend)
    assert err.value.rank == 1
    first = str(err.value).splitlines()[0]  # spawn appends the rank's traceback
    assert first == ("rank 1: the model differs from rank 0's: its trainable parameters "
                     "differ: it freezes ['0.weight', '0.bias'] (requires_grad=False) which "
                     "rank 0 trains")


def fit_with(setting: str) -> None:
    """fit(distributed=True) where rank 1 changes ``setting`` (epochs, drop_last, shuffle)."""
    options = {"epochs": 2, "drop_last": False, "shuffle": True}
    if int(os.environ["RANK"]) == 1:
        options[setting] = {"epochs": 1, "drop_last": True, "shuffle": False}[setting]
    model = workers.make_model()
    model.fit(workers.toy_data(100), batch_size=8, verbose=0, distributed=True, **options)


@pytest.mark.parametrize("setting, words", [
    ("epochs", "epochs=1 where rank 0 has epochs=2"),
    ("drop_last", "steps per epoch=6 where rank 0 has steps per epoch=7; drop_last=True "
                  "where rank 0 has drop_last=False"),
    ("shuffle", "shuffle=False where rank 0 has shuffle=True")])
def test_ranks_with_other_fit_settings_fail_naming_the_setting(backend, setting, words):
    with pytest.raises(DistributedError) as err:
        spawn(fit_with, args=(setting,), nprocs=2, env=SHORT, timeout_s=120, backend=backend)
    assert err.value.rank == 1
    first = str(err.value).splitlines()[0]
    assert first == f"rank 1: the training setup differs from rank 0's: {words}"
