"""Bad input and faults of a distributed job: a clear DistributedError naming the rank and
the problem, and no rank left waiting (every test here returns; timeouts are short)."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from tests.framework.distributed import workers
from visualdl.framework.distributed import DistributedError, spawn
from visualdl.framework.distributed.spawning import free_port
from visualdl.framework.distributed.resume import load_training_state, save_training_state

SHORT = {"VISUALDL_DIST_TIMEOUT": "10"}


def test_ranks_with_different_models_fail_naming_the_rank(backend):
    with pytest.raises(DistributedError) as err:
        spawn(workers.train_per_rank, args=([16, 12], [96, 96]), nprocs=2, env=SHORT,
              timeout_s=120, backend=backend)
    assert err.value.rank == 1
    message = str(err.value)
    assert message.startswith("rank 1: the model differs from rank 0's")
    assert "'0.weight' is (12, 12)" in message and "(16, 12)" in message


def test_ranks_with_different_data_sizes_fail_naming_the_rank(backend):
    with pytest.raises(DistributedError) as err:
        spawn(workers.train_per_rank, args=([16, 16], [96, 90]), nprocs=2, env=SHORT,
              timeout_s=120, backend=backend)
    assert err.value.rank == 1
    message = str(err.value)
    assert message.startswith("rank 1: the training data (samples, batch_size) differs")
    assert "(90, 8) where rank 0 has (96, 8)" in message


def test_a_hand_loops_sampler_over_other_data_fails_naming_the_rank(backend):
    """Paddle's documented loop (no fit): the sampler of the group compares the data."""
    assert spawn(workers.sampler_per_rank, args=([64, 64],), nprocs=2, env=SHORT,
                 timeout_s=120, backend=backend) == [4, 4]
    with pytest.raises(DistributedError) as err:
        spawn(workers.sampler_per_rank, args=([64, 56],), nprocs=2, env=SHORT,
              timeout_s=120, backend=backend)
    assert err.value.rank == 1
    assert str(err.value).startswith(
        "rank 1: DistributedBatchSampler's data (samples, batch_size, drop_last) differs "
        "from rank 0's: (56, 8, False) where rank 0 has (64, 8, False)")


@pytest.mark.parametrize("workers, words", [
    (0, "num_workers must be at least 1 (a group needs a worker), got 0"),
    ((0, 2), "num_workers must be at least 1 (a group needs a worker), got (0, 2)"),
    ((0, 0), "num_workers must be at least 1"),
    ((3, 2), "num_workers: the minimum 3 is above the maximum 2"),
    ((1, 2, 3), "num_workers must be an int or a (min, max) pair of ints, got (1, 2, 3)"),
    (1.5, "num_workers must be an int or a (min, max) pair of ints, got 1.5"),
])
def test_fit_on_ray_refuses_a_group_without_workers_before_starting(workers, words):
    """Refused at once, with or without Ray installed (Ray would train a group of 0 in the
    driver itself, or fail later with an internal message)."""
    from visualdl.framework.distributed.ray_train import fit_on_ray

    with pytest.raises(ValueError) as err:
        fit_on_ray(workers_fn, num_workers=workers, storage_path="unused", name="unused")
    assert words in str(err.value)


def workers_fn(config: dict) -> None:  # never run: the arguments are refused first
    raise AssertionError("ran")


def test_the_jobs_timeout_names_every_rank_still_running(backend):
    """Rank 1 is stuck and rank 0 waits for it in a collective: both run at the job's
    timeout, and the error says so rather than blaming rank 0 alone."""
    with pytest.raises(DistributedError) as err:
        spawn(workers.late_rank, args=(1, 60), nprocs=2, backend=backend,
              env={"VISUALDL_DIST_TIMEOUT": "60"}, timeout_s=8)
    assert err.value.rank is None
    assert str(err.value) == "ranks 0 and 1 still running after the job's timeout_s=8 s"


def test_a_worker_killed_mid_training_ends_the_job_naming_it(backend):
    start = time.monotonic()
    with pytest.raises(DistributedError) as err:
        spawn(workers.die_at_step, args=(1, 3), nprocs=2, env=SHORT, timeout_s=120,
              backend=backend)
    assert err.value.rank == 1
    assert str(err.value) == "rank 1: worker was killed by SIGKILL (rank 0 then lost its peers)"
    assert time.monotonic() - start < 120  # the job ended: rank 0 was not left waiting


def _connect_alone(rank: int, port: int):
    from visualdl.framework.distributed.gloo import connect

    return connect(rank, 2, "127.0.0.1", port, timeout_s=2)


@pytest.mark.torch
def test_rank_0_alone_names_the_rank_that_never_joined():
    with pytest.raises(DistributedError) as err:
        _connect_alone(0, free_port())
    assert str(err.value).startswith("rank 0: rank 1 of 2 did not join the rendezvous")
    assert "within 2 s" in str(err.value)


@pytest.mark.torch
def test_a_rank_that_cannot_reach_rank_0_says_so():
    port = free_port()  # nobody serves it
    with pytest.raises(DistributedError) as err:
        _connect_alone(1, port)
    assert str(err.value).startswith(f"rank 1: could not reach rank 0's rendezvous at "
                                     f"127.0.0.1:{port} within 2 s")


def test_a_checkpoint_from_another_model_is_refused(tmp_path):
    other = workers.make_model(hidden=8)
    save_training_state(other, str(tmp_path), {"step": 5, "epoch": 0, "samples": 40,
                                               "restart": 0})
    model = workers.make_model(hidden=16)
    before = model.network.parameters()[0].numpy().copy()
    with pytest.raises(DistributedError) as err:
        load_training_state(model, str(tmp_path))
    message = str(err.value)
    assert message.startswith(f"rank 0: checkpoint {tmp_path} was saved from another model")
    assert "0.weight (8, 12) where the model has (16, 12)" in message
    np.testing.assert_array_equal(model.network.parameters()[0].numpy(), before)


def test_a_folder_that_is_no_training_checkpoint_is_refused(tmp_path):
    (tmp_path / "visualdl_state.json").write_text("{\"step\": 1}")
    with pytest.raises(DistributedError) as err:
        load_training_state(workers.make_model(), str(tmp_path))
    assert "is not a visualdl training checkpoint" in str(err.value)
    assert os.path.isdir(tmp_path)


UNGUARDED = '''
from visualdl.framework.distributed import spawn


def work():
    return 1


print("result", spawn(work, nprocs=2, timeout_s=60, backend="{backend}"), flush=True)
'''


def test_a_script_that_calls_spawn_unguarded_is_told_why(tmp_path, backend):
    """Each worker imports the main script again: its top-level spawn() would start workers
    of its own (under MPI, silently: the script ran once per rank). The job fails at once,
    saying where the call belongs."""
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_text(UNGUARDED.format(backend=backend))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        root, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, timeout=120,
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "result" not in done.stdout  # no worker ran the job, nested or not
    [error] = [line for line in done.stderr.splitlines() if "DistributedError: rank " in line]
    assert 'if __name__ == "__main__":' in error  # what the job's error itself says
    assert "spawn() was called again inside a worker it started" in done.stderr


@pytest.mark.parametrize("status", [0, 3])
def test_a_rank_that_exits_without_a_result_is_named_not_the_peer_left_waiting(backend,
                                                                               status):
    with pytest.raises(DistributedError) as err:
        spawn(workers.exit_early, args=(1, status), nprocs=2, env=SHORT, timeout_s=120,
              backend=backend)
    assert err.value.rank == 1
    message = str(err.value)
    assert message.startswith("rank 1: worker exited"), message
    assert "without a result" in message or "before reporting a result" in message, message
    if status:
        assert f"status {status}" in message, message


def test_a_result_that_cannot_be_pickled_is_named_with_the_reason(backend):
    with pytest.raises(DistributedError) as err:
        spawn(workers.unpicklable_result, args=(1,), nprocs=2, env=SHORT, timeout_s=120,
              backend=backend)
    assert err.value.rank == 1
    assert str(err.value).startswith("rank 1: its result could not be pickled to send back: "
                                     "TypeError: cannot pickle '_thread.lock' object")
