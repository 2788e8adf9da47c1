"""Elastic training on Ray Train: a worker killed by SIGKILL mid-epoch and its machine gone,
the job goes on with one worker from the last checkpoint reported through Ray, grows back to
two when a machine joins again, and reaches the accuracy of an undisturbed run.

One local Ray cluster of two nodes on 127.0.0.1 for the module (starting one costs seconds). Needs Ray
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
def ray_nodes(torch):
    """Two Ray nodes of one CPU each on 127.0.0.1: two 'machines' that can leave and join."""
    if importlib.util.find_spec("ray") is None:  # not imported here: see start_local_nodes
        pytest.skip(RAY_MISSING)
    from visualdl.framework.distributed.ray_train import start_local_nodes

    cluster = start_local_nodes(2, 1, pythonpath=[ROOT])
    import ray

    try:
        assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def _progress(folder: str) -> dict[int, tuple[int, int, int, str]]:
    """pid -> (rank, step, world size, node id) as the workers last wrote it."""
    out = {}
    path = os.path.join(folder, "progress")
    for name in os.listdir(path) if os.path.isdir(path) else []:
        try:
            rank, step, world, node = open(os.path.join(path, name)).read().split()
            out[int(name)] = (int(rank), int(step), int(world), node)
        except (ValueError, OSError):  # not written yet
            continue
    return out


def test_a_worker_killed_mid_epoch_the_group_shrinks_grows_back_and_reaches_97_percent(
        ray_nodes, tmp_path):
    """Mid-epoch 2 the worker on the second node is SIGKILLed and its node (its machine)
    leaves the cluster: Ray Train goes on with 1 worker from the last checkpoint; when a
    node joins again the group grows back to 2 at the next resize check."""
    from visualdl.framework.distributed.ray_train import fit_on_ray

    cluster = ray_nodes
    second = next(iter(cluster.worker_nodes))
    folder = str(tmp_path)
    first_checkpoint = os.path.join(folder, "ray", "digits", "checkpoint_00000022")
    seen: dict = {}

    def kill_a_worker_in_epoch_2_and_its_node() -> None:
        # after the first epoch's checkpoint is stored and Ray has had time to register it
        # (its controller polls every few seconds), mid-way through epoch 2
        deadline = time.monotonic() + 600
        while not os.path.isdir(first_checkpoint) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(5.0)
        while "step" not in seen and time.monotonic() < deadline:
            # the second node's worker, as it last wrote (a file being rewritten reads empty)
            for pid, (rank, step, world, node) in _progress(folder).items():
                if node == second.node_id and world == 2:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:  # a worker of an earlier group
                        continue
                    seen.update(rank=rank, step=step)
                    cluster.remove_node(second, allow_graceful=False)
                    break
            else:
                time.sleep(0.05)
        while time.monotonic() < deadline:  # the group of 1 trains a few steps, then a
            if any(world == 1 and step >= 22 + 5 for _, step, world, _ in _progress(folder).values()):
                seen["alone"] = True
                break
            time.sleep(0.2)
        seen["rejoined"] = True  # ... node joins (added by the main thread: Ray's rule)

    killer = threading.Thread(target=kill_a_worker_in_epoch_2_and_its_node, daemon=True)
    killer.start()
    logdir = os.path.join(folder, "logs", "elastic")
    result = _fit_while(killer, cluster, seen, lambda: fit_on_ray(
        workers.ray_digits, {"dir": folder, "epochs": 8, "step_delay": 0.4, "slow_epochs": 2,
                             "slow_alone": True, "logdir": logdir},
        num_workers=(1, 2), max_failures=2, storage_path=os.path.join(folder, "ray"),
        name="digits", checkpoint_every=1000, resize_interval_s=5, timeout_s=30))
    assert result.error is None
    assert 22 < seen["step"] < 44, seen  # in the second epoch (22 steps each)
    assert seen.get("alone"), "no group of 1 worker trained after the node left"
    with open(os.path.join(folder, "result.json")) as f:
        final = json.load(f)
    assert final["acc"] >= 0.97
    # the group of 1 resumed from the first epoch's checkpoint, the group of 2 from the last
    # one Ray had registered: at most the steps since a checkpoint were redone each time
    assert final["resumed"]["restart"] == 2 and final["resumed"]["world_size"] == 2
    assert final["checkpoints"][-1]["step"] == result.metrics["step"]
    assert result.metrics["restart"] == 2 and result.metrics["epoch"] == 8
    _check_logs(os.path.join(folder, "logs"), final["resumed"]["step"], result.metrics["step"])


def _fit_while(killer: threading.Thread, cluster, seen: dict, fit):
    """Run ``fit`` on a thread; meanwhile, on this (main) thread, add a node back once the
    killer says so (Ray starts a node's processes from the main thread only)."""
    out: dict = {}

    def run() -> None:
        try:
            out["result"] = fit()
        except BaseException as exc:  # noqa: BLE001 - raised again on the main thread
            out["error"] = exc

    trainer = threading.Thread(target=run, daemon=True)
    trainer.start()
    while trainer.is_alive():
        if seen.pop("rejoined", False):
            cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        trainer.join(0.2)
    killer.join(5)
    if "error" in out:
        raise out["error"]
    return out["result"]


def _check_logs(logdir: str, regrown_at: int, last_step: int) -> None:
    """The run's logs: both ranks' curves, each resize marked at the step it resumed from
    (to 1 worker at the first epoch's checkpoint, back to 2 at a later one), each checkpoint
    reported listed with its step."""
    from visualdl import LogReader

    reader = LogReader(logdir)
    assert reader.ranks("elastic") == [0, 1]
    resizes = [(e.world_size, e.step, e.restart) for e in reader.events("elastic", "workers", "workers")
               if e.restart > 0]
    assert resizes == [(1, 22, 1), (2, regrown_at, 2)]
    checkpoints = [e.step for e in reader.events("elastic", "checkpoint", "checkpoint")]
    # every checkpoint reported is listed (the group of 1 may have reported one after the
    # last that Ray registered before the resize: the group of 2 resumed before it)
    assert checkpoints[0] == 22 and regrown_at in checkpoints and checkpoints[-1] == last_step
    assert checkpoints[checkpoints.index(regrown_at) + 1:][-1] > regrown_at
    loss = reader.scalars("elastic", "train/loss", rank=1)
    assert loss.steps[-1] == last_step  # rank 1's steps go on after it rejoined
    # the killed workers' files went quiet unclosed, but their ranks started again and closed
    assert reader.run_health("elastic").state == "finished"


def test_relative_paths_in_the_workers_resolve_where_the_driver_runs(ray_nodes, tmp_path,
                                                                     monkeypatch):
    """Ray starts its workers in a folder of its own: a relative logdir (or any path in
    train_fn) must still land in the driver's working directory."""
    from visualdl import LogReader
    from visualdl.framework.distributed.ray_train import fit_on_ray

    monkeypatch.chdir(tmp_path)
    fit_on_ray(workers.ray_digits, {"dir": "out", "logdir": "logs/rel", "epochs": 1},
               num_workers=1, max_failures=0, storage_path="ray", name="relative",
               checkpoint_every=1000, timeout_s=30)
    assert json.loads((tmp_path / "out" / "result.json").read_text())["acc"] > 0.5
    assert LogReader(str(tmp_path / "logs")).scalars("rel", "train/loss").steps[-1] > 0
    assert (tmp_path / "ray" / "relative").is_dir()


def test_sharded_updates_on_ray_report_whole_checkpoints(ray_nodes, tmp_path):
    """Sharded updates under Ray Train (gloo): every rank gathers the optimizer state before
    rank 0 saves the checkpoint it reports, so the checkpoint holds every moment."""
    import visualdl.framework as vf
    from visualdl.framework.distributed.ray_train import fit_on_ray

    fit_on_ray(workers.ray_digits, {"dir": str(tmp_path / "out"), "epochs": 2, "sharding": True},
               num_workers=2, max_failures=0, storage_path=str(tmp_path / "ray"),
               name="sharded", checkpoint_every=10, timeout_s=60)
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["acc"] > 0.9
    last = max(c["path"] for c in result["checkpoints"])
    state = vf.load(os.path.join(last, "model.vfopt"))
    assert sorted(state["state"]) == [f"{i}.{m}" for i in range(4) for m in ("moment1", "moment2")]
    assert all(v.any() for v in state["state"].values())  # each rank's half gathered
    assert state["step_count"] == int(os.path.basename(last).split("_")[1])


def test_a_group_restarted_with_no_checkpoint_yet_is_marked_as_a_restart(tmp_path,
                                                                         monkeypatch):
    """The group before died before Ray registered any checkpoint: the new one starts at
    step 0, and still records restart 1 (the curve's redone steps are marked), and its
    checkpoints do not take the dead group's folder names."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip(RAY_MISSING)
    import ray.train

    import visualdl.framework as vf
    from visualdl import LogReader
    from visualdl.framework.distributed.ray_train import ElasticCheckpoint

    reported = []
    monkeypatch.setattr(ray.train, "get_checkpoint", lambda: None)
    monkeypatch.setattr(ray.train, "report", lambda metrics, checkpoint=None,
                        checkpoint_dir_name=None: reported.append(checkpoint_dir_name))
    monkeypatch.setattr(ElasticCheckpoint, "_groups_before", lambda self: 1)  # one before
    model = workers.make_model()
    model.fit(workers.toy_data(), batch_size=8, epochs=1, verbose=0, callbacks=[
        ElasticCheckpoint(), vf.callbacks.VisualDL(str(tmp_path / "run"), log_graph=False)])
    assert model.resumed == {"step": 0, "restart": 1, "world_size": 1}
    reader = LogReader(str(tmp_path))
    resizes = [(e.world_size, e.step, e.restart) for e in reader.events("run", "workers",
                                                                        "workers")]
    assert resizes == [(1, 0, 1)]
    assert reported == ["checkpoint_00000012_restart1"]


def test_a_group_the_cluster_cannot_hold_is_said_before_waiting(ray_nodes, capsys):
    """Ray waits, silently, until the cluster has CPUs for the fewest workers: on a fixed
    local cluster for ever. fit_on_ray says so on stderr before it waits."""
    from visualdl.framework.distributed import ray_train

    ray_train._warn_if_too_small(3)  # the cluster: two nodes of 1 CPU
    assert capsys.readouterr().err == (
        "fit_on_ray: the Ray cluster has 2 CPUs and the group needs at least 3 workers of 1 "
        "CPU each: training waits until enough CPUs join the cluster\n")
    ray_train._warn_if_too_small(2)
    assert capsys.readouterr().err == ""
