"""Data-parallel training equals one process on the concatenated batch (2 ranks by spawn,
over gloo and over MPI), and the sampler's layout that makes it so."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.framework.distributed import workers
from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl.framework.distributed import DistributedBatchSampler, spawn


def test_sampler_pieces_are_the_single_process_batches():
    """Rank r's k-th batch is the r-th half of the k-th batch of one process with twice the
    batch size over the same order; padded so every rank gets every step."""
    ranks = [list(DistributedBatchSampler(11, 3, 2, r, shuffle=True, seed=5)) for r in (0, 1)]
    whole = np.random.default_rng(5).permutation(11)
    whole = np.concatenate([whole, whole[:1]])  # padded to a multiple of 2
    assert len(ranks[0]) == len(ranks[1]) == 2
    for k in range(2):
        assert np.array_equal(np.concatenate([ranks[0][k], ranks[1][k]]), whole[k * 6:(k + 1) * 6])
    resumed = DistributedBatchSampler(11, 3, 1, 0, shuffle=True, seed=5)
    resumed.set_epoch(0, offset=6)  # an elastic restart on 1 rank after 6 samples
    assert np.array_equal(np.concatenate(list(resumed)), np.random.default_rng(5).permutation(11)[6:])


def test_two_ranks_equal_one_process_on_the_global_batch(backend):
    alone = workers.train(batch_size=16, epochs=3, distributed=False)
    ranks = spawn(workers.train, args=(8, 3, True), nprocs=2, timeout_s=300, backend=backend)
    for result in ranks:
        assert result["grads"].keys() == alone["grads"].keys()
        workers.assert_like_alone(result, alone)
    assert not np.allclose(alone["weights"]["0.weight"], workers.make_model().network.parameters()[0].numpy())


def test_each_rank_logs_its_scalars_into_the_run(tmp_path, backend):
    """fit(distributed=True) with the VisualDL callback on 2 ranks: one run, two rank-tagged
    files; each rank's loss curve its own, rank 0's the only histograms."""
    from visualdl import LogReader

    logdir = str(tmp_path / "dp")
    spawn(workers.train, args=(8, 1, True, workers.N, 16, logdir), nprocs=2, timeout_s=300,
          backend=backend)
    reader = LogReader(str(tmp_path))
    assert reader.runs() == ["dp"]
    assert reader.ranks("dp") == [0, 1]
    steps = workers.N // 16  # global batches of 2 x 8
    losses = [reader.scalars("dp", "train/loss", rank=r) for r in (0, 1)]
    for loss in losses:
        assert list(loss.steps) == list(range(1, steps + 1))
    assert not np.allclose(losses[0].values, losses[1].values)  # each rank's own batches
    assert len(reader.scalars("dp", "train/samples_per_sec", rank=1).values) == steps - 1
    tags = reader.tags("dp")
    assert "weights/0.weight" in tags["histogram"] and "graph" not in tags
    assert len(reader.histograms("dp", "weights/0.weight")) == -(-steps // 2)  # rank 0's alone


def test_distributed_fit_alone_is_a_world_of_one(monkeypatch):
    """No launcher, no torch: fit(distributed=True) trains as one process would."""
    from visualdl.framework.distributed import SingleProcess, get_world_size, init_parallel_env
    from visualdl.framework.distributed import shutdown

    for name in ("WORLD_SIZE", "RANK", "PADDLE_TRAINERS_NUM", "PADDLE_TRAINER_ID", "PMI_SIZE",
                 "PMI_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"):
        monkeypatch.delenv(name, raising=False)
    shutdown()
    try:
        assert isinstance(init_parallel_env(), SingleProcess) and get_world_size() == 1
        alone = workers.train(batch_size=16, epochs=2, distributed=False)
        wrapped = workers.train(batch_size=16, epochs=2, distributed=True)
    finally:
        shutdown()
    for name, w in alone["weights"].items():
        np.testing.assert_array_equal(wrapped["weights"][name], w)


def test_batchnorm_replicas_stay_equal_and_rank_0_checkpoints(tmp_path, backend):
    """Each rank's forward updates its BatchNorm statistics from its own shard; every step
    ends with rank 0's on all ranks (PyTorch DDP's broadcast_buffers), so evaluations agree
    and rank 0 alone writes the checkpoints, each listed in the run with its step."""
    import visualdl.framework as vf

    save_dir, logdir = tmp_path / "ck", tmp_path / "logs" / "bn"
    ranks = spawn(workers.train_batchnorm, args=(str(save_dir), str(logdir)), nprocs=2,
                  timeout_s=300, backend=backend)
    names = sorted(ranks[0]["buffers"])
    assert any("running_mean" in n for n in names) and any("running_var" in n for n in names)
    for name in names:
        np.testing.assert_array_equal(ranks[1]["buffers"][name], ranks[0]["buffers"][name],
                                      err_msg=name)
    assert not np.allclose(ranks[0]["buffers"][[n for n in names if "mean" in n][0]], 0)
    assert ranks[0]["eval"] == ranks[1]["eval"]
    saved = vf.load(str(save_dir / "final.vfparams"))
    for name in names:
        np.testing.assert_array_equal(np.asarray(saved[name]), ranks[0]["buffers"][name])
    steps = workers.N // 16  # global batches of 2 x 8, per epoch
    with serving(str(tmp_path / "logs")) as handle:
        body = Client(handle.url).json("/api/checkpoints", run="bn")
    got = [(c["step"], os.path.basename(c["path"]), c["rank"]) for c in body["checkpoints"]]
    assert got == [(steps, "0.vfparams", 0), (2 * steps, "1.vfparams", 0),
                   (2 * steps, "final.vfparams", 0)]
