"""Elastic training on Ray Train: a worker killed by SIGKILL mid-epoch, the job goes on from
the last checkpoint reported through Ray and reaches the accuracy of an undisturbed run.

One local Ray cluster on 127.0.0.1 for the module (starting one costs seconds). Needs Ray
Train and torch (``visualdl[distributed]``; .ci/run's torch stage installs both)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import threading
import time

import pytest

from tests.framework.distributed import workers

pytestmark = pytest.mark.torch
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RAY_MISSING = "Ray Train is not installed (pip install 'visualdl[distributed]')"


@pytest.fixture(scope="module")
def ray_cluster(torch):
    if importlib.util.find_spec("ray") is None:  # not imported here: see start_local_cluster
        pytest.skip(RAY_MISSING)
    from visualdl.framework.distributed.ray_train import start_local_cluster

    start_local_cluster(2, pythonpath=[ROOT])
    import ray

    assert ray.util.get_node_ip_address() == "127.0.0.1"
    yield ray
    ray.shutdown()


def _progress(folder: str) -> dict[int, tuple[int, int, int]]:
    """pid -> (rank, step, world size) as the workers last wrote it."""
    out = {}
    path = os.path.join(folder, "progress")
    for name in os.listdir(path) if os.path.isdir(path) else []:
        try:
            rank, step, world = map(int, open(os.path.join(path, name)).read().split())
        except (ValueError, OSError):
            continue
        out[int(name)] = (rank, step, world)
    return out


def test_a_worker_killed_mid_epoch_and_the_job_still_reaches_97_percent(ray_cluster, tmp_path):
    from visualdl.framework.distributed.ray_train import fit_on_ray

    folder = str(tmp_path)
    first_checkpoint = os.path.join(folder, "ray", "digits", "checkpoint_00000022")
    killed: dict = {}

    def kill_rank_1_in_epoch_2() -> None:
        # after the first epoch's checkpoint is stored and Ray has had time to register it
        # (its controller polls every few seconds), mid-way through epoch 2
        deadline = time.monotonic() + 600
        while not os.path.isdir(first_checkpoint) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(5.0)
        for pid, (rank, step, _) in _progress(folder).items():
            if rank == 1:
                os.kill(pid, signal.SIGKILL)
                killed.update(pid=pid, step=step)
                return

    killer = threading.Thread(target=kill_rank_1_in_epoch_2, daemon=True)
    killer.start()
    logdir = os.path.join(folder, "logs", "elastic")
    result = fit_on_ray(workers.ray_digits, {"dir": folder, "epochs": 8, "step_delay": 0.4,
                                             "slow_epochs": 2, "logdir": logdir},
                        num_workers=(1, 2), max_failures=2, storage_path=os.path.join(folder, "ray"),
                        name="digits", checkpoint_every=1000, resize_interval_s=5)
    killer.join(5)
    assert result.error is None
    assert 22 < killed["step"] < 44, killed  # in the second epoch (22 steps each)
    with open(os.path.join(folder, "result.json")) as f:
        final = json.load(f)
    assert final["acc"] >= 0.97
    # the new group resumed from the first epoch's checkpoint: at most the steps since it
    # were redone, not the whole run
    assert final["resumed"]["step"] == 22 and final["resumed"]["restart"] == 1
    assert final["checkpoints"][-1]["step"] == 8 * 22
    assert result.metrics["restart"] == 1 and result.metrics["step"] == 8 * 22
    _check_logs(os.path.join(folder, "logs"))


def _check_logs(logdir: str) -> None:
    """The run's logs: both ranks' curves, the restart marked at the step it resumed from,
    each checkpoint reported listed with its step."""
    from visualdl import LogReader

    reader = LogReader(logdir)
    assert reader.ranks("elastic") == [0, 1]
    resizes = [(e.world_size, e.step, e.restart) for e in reader.events("elastic", "workers", "workers")
               if e.restart > 0]
    assert resizes == [(2, 22, 1)]
    checkpoints = [e.step for e in reader.events("elastic", "checkpoint", "checkpoint")]
    assert checkpoints[0] == 22 and checkpoints[-1] == 8 * 22
    assert sorted(set(checkpoints)) == list(range(22, 8 * 22 + 1, 22))
    loss = reader.scalars("elastic", "train/loss", rank=1)
    assert loss.steps[-1] == 8 * 22  # rank 1's steps go on after the restart
