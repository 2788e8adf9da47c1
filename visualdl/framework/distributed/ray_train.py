"""Elastic data-parallel training on Ray Train (``visualdl[distributed]``).

    from visualdl.framework.distributed.ray_train import fit_on_ray

    def train(config):                    # runs in every worker
        model = build_model()
        model.fit(train_set, eval_set, epochs=5, batch_size=32, distributed=True,
                  callbacks=[vf.callbacks.VisualDL("runs/dp")])

    fit_on_ray(train, num_workers=(1, 2), storage_path="/tmp/ray_results", name="digits")

Ray Train (V2) runs ``train`` in ``num_workers`` actors and sets up the torch.distributed
gloo group in each, which ``init_parallel_env`` reuses. With ``num_workers=(min, max)`` the
group is elastic: when a worker dies Ray Train tears the group down and starts a new one
with as many workers as the cluster can hold now (at least ``min``; up to ``max_failures``
times), and while it runs it grows again, at the next resize check
(``resize_interval_s``), when resources come back. Every new group resumes from the last
checkpoint reported through ``ray.train.report``: ``ElasticCheckpoint`` (added by
``fit(distributed=True)`` inside ``fit_on_ray``) reports one every ``checkpoint_every``
steps and at each epoch's end, and loads it on start -- model, optimizer, epoch and the
sample offset in the epoch, so at most the steps since that checkpoint are redone, whatever
the new world size.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from ..callbacks.base import Callback
from ..callbacks.checkpoint import gather_optimizer_state
from .env import get_rank, get_world_size
from .spawning import THREAD_VARIABLES as _THREAD_VARIABLES
from .resume import load_training_state, save_training_state

_options: dict | None = None  # set in each worker by _entry: fit_on_ray's settings


def options() -> dict | None:
    """fit_on_ray's settings inside one of its workers; None elsewhere."""
    return _options


def _entry(config: dict) -> None:
    """What each Ray Train worker runs: our settings, one thread, the driver's working
    directory, then the user's function.

    Ray starts its workers in a folder of its own (the session's artifacts): a relative
    ``VisualDL(logdir)`` or ``save_dir`` would land there, not where the driver was run.
    On a machine without the driver's folder (another node) the worker stays in Ray's."""
    global _options
    _options = dict(config["visualdl"])
    if os.path.isdir(_options.get("cwd") or ""):
        os.chdir(_options["cwd"])
    from .. import threads

    threads.set_num_threads(_options["threads_per_worker"])
    config["fn"](config["config"])


def _local_environment(threads_per_worker: int, pythonpath: list[str] | None) -> None:
    """What every local Ray process inherits: loopback only, threads, the import path."""
    # Ray's switch for single-machine clusters (its default on macOS and Windows): the node
    # then takes the loopback address. Read by ray's processes at import, from the
    # environment they inherit.
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    for variable in _THREAD_VARIABLES:
        os.environ[variable] = str(threads_per_worker)
    if pythonpath:
        os.environ["PYTHONPATH"] = os.pathsep.join(
            list(pythonpath) + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])


def start_local_cluster(num_cpus: int = 2, threads_per_worker: int = 1,
                        pythonpath: list[str] | None = None) -> Any:
    """Start a Ray cluster on this machine, on the loopback address only (127.0.0.1: Ray
    otherwise announces the machine's network address), without the dashboard.

    Workers inherit this process's environment (no runtime_env to set up): one thread each,
    and ``pythonpath`` prepended to ``PYTHONPATH`` so they import what the driver does.
    Call ``ray.shutdown()`` when done."""
    _local_environment(threads_per_worker, pythonpath)
    import ray
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False  # the switch above, for this process's module
    return ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                    _node_ip_address="127.0.0.1")


def start_local_nodes(nodes: int = 2, cpus_per_node: int = 1, threads_per_worker: int = 1,
                      pythonpath: list[str] | None = None) -> Any:
    """Start ``nodes`` Ray nodes on this machine (127.0.0.1 each, no dashboard) and connect;
    returns Ray's ``cluster_utils.Cluster``, whose ``add_node``/``remove_node`` play machines
    joining and leaving: what an elastic job meets on a real cluster. Nodes are declared
    dead after ~3 s of silence (Ray's default is tens of seconds). Call ``ray.shutdown()``
    and then the cluster's ``shutdown()`` when done."""
    _local_environment(threads_per_worker, pythonpath)
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, shutdown_at_exit=False, head_node_args={
        "num_cpus": cpus_per_node, "node_ip_address": "127.0.0.1", "include_dashboard": False,
        "_system_config": {"health_check_period_ms": 1000, "health_check_failure_threshold": 3}})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=cpus_per_node, node_ip_address="127.0.0.1")
    ray.init(address=cluster.address, log_to_driver=False)
    _wait_for_cpus(nodes * cpus_per_node, timeout_s=60.0)
    return cluster


def _wait_for_cpus(cpus: float, timeout_s: float) -> None:
    """Until the cluster reports ``cpus`` CPUs: a node whose raylet has started may not have
    reported its resources yet, and an elastic group started then begins smaller than the
    machines allow (and restarts to grow at its next resize check)."""
    import ray

    deadline = time.monotonic() + timeout_s
    while ray.cluster_resources().get("CPU", 0) < cpus:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the local Ray cluster reports "
                               f"{ray.cluster_resources().get('CPU', 0):g} CPUs of {cpus:g} "
                               f"after {timeout_s:g} s")
        time.sleep(0.1)


def fit_on_ray(train_fn: Callable[[dict], Any], config: dict | None = None, *,
               num_workers: int | tuple[int, int] = 2, max_failures: int = 3,
               storage_path: str, name: str, checkpoint_every: int = 20,
               resize_interval_s: float = 10.0, timeout_s: float = 120.0,
               threads_per_worker: int = 1) -> Any:
    """Run ``train_fn(config)`` on Ray Train workers; returns Ray's ``Result``.

    ``num_workers``: an int, or ``(min, max)`` for an elastic group (at least 1 worker).
    ``max_failures``: how many worker failures to recover from (-1: no limit).
    ``timeout_s``: the collectives' timeout (a hung peer ends the group, which Ray then
    restarts). A job of the same ``storage_path`` and ``name`` as an earlier one resumes
    from that one's last checkpoint (Ray Train's rule, which lets a driver that died pick its
    job up again): give a new ``name``, or remove that folder, to train from the start.
    Needs a Ray cluster (``ray.init`` first for a local one)."""
    least = _least_workers(num_workers)
    try:
        from ray.train import FailureConfig, RunConfig, ScalingConfig
        from ray.train.torch import TorchConfig, TorchTrainer
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError("fit_on_ray needs Ray Train and PyTorch: pip install "
                                  "'visualdl[distributed]'", name=exc.name) from exc
    if checkpoint_every < 1:
        raise ValueError(f"checkpoint_every must be >= 1, got {checkpoint_every}")
    settings = {"checkpoint_every": int(checkpoint_every), "timeout_s": float(timeout_s),
                "threads_per_worker": int(threads_per_worker),
                "storage": os.path.join(os.path.abspath(storage_path), name),
                "cwd": os.getcwd()}  # where the workers resolve relative paths (_entry)
    trainer = TorchTrainer(
        _entry,
        train_loop_config={"fn": train_fn, "config": dict(config or {}), "visualdl": settings},
        scaling_config=ScalingConfig(num_workers=num_workers,
                                     elastic_resize_monitor_interval_s=resize_interval_s),
        run_config=RunConfig(name=name, storage_path=os.path.abspath(storage_path),
                             failure_config=FailureConfig(max_failures=max_failures)),
        torch_config=TorchConfig(backend="gloo", timeout_s=int(max(1, timeout_s))),
    )
    _warn_if_too_small(least)
    return trainer.fit()


def _least_workers(num_workers: int | tuple[int, int]) -> int:
    """The fewest workers ``num_workers`` asks for; ValueError unless at least 1 (Ray would
    train a group of 0 in the driver itself, or fail with an internal message)."""
    pair = num_workers if isinstance(num_workers, (tuple, list)) else (num_workers,) * 2
    if len(pair) != 2 or not all(isinstance(n, int) and not isinstance(n, bool) for n in pair):
        raise ValueError(f"num_workers must be an int or a (min, max) pair of ints, got "
                         f"{num_workers!r}")
    if min(pair) < 1:
        raise ValueError(f"num_workers must be at least 1 (a group needs a worker), got "
                         f"{num_workers!r}")
    if pair[0] > pair[1]:
        raise ValueError(f"num_workers: the minimum {pair[0]} is above the maximum {pair[1]}")
    return pair[0]


def _warn_if_too_small(least: int) -> None:
    """Say so when the cluster has fewer CPUs than the fewest workers need (one each): Ray
    then waits, silently, until enough join -- for ever on a fixed local cluster."""
    import ray

    if not ray.is_initialized():
        return
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if cpus < least:
        print(f"fit_on_ray: the Ray cluster has {cpus} CPU{'s' if cpus != 1 else ''} and "
              f"the group needs at least {least} workers of 1 CPU each: training waits "
              f"until enough CPUs join the cluster", file=sys.stderr, flush=True)


class ElasticCheckpoint(Callback):
    """Resume from Ray's last checkpoint on start; report one every ``checkpoint_every``
    steps and at each epoch's end (rank 0 saves it; every rank reports, as Ray asks)."""

    def __init__(self) -> None:
        opts = options() or {}
        self.every = int(opts.get("checkpoint_every", 20))
        self.storage = opts.get("storage", "")
        self.step = 0  # train steps done, counted across epochs and restarts
        self.epoch = 0
        self.samples = 0  # samples of the current epoch done (all ranks together)
        self.restart = 0

    def on_train_begin(self, logs: dict | None = None) -> None:
        import ray.train

        self.restart = self._groups_before()
        checkpoint = ray.train.get_checkpoint()
        if checkpoint is None:
            self._started_over()
            return
        with checkpoint.as_directory() as directory:
            state = load_training_state(self.model, directory)
        self.step, self.epoch, self.samples = state["step"], state["epoch"], state["samples"]
        self.restart = max(self.restart, state["restart"] + 1)
        sampler = getattr(self.model.train_loader, "batch_sampler", None)
        if sampler is not None:
            sampler.set_epoch(self.epoch, self.samples)
        self.model.start_epoch = self.epoch
        self.model.resumed = {"step": self.step, "restart": self.restart,
                              "world_size": get_world_size()}

    def _started_over(self) -> None:
        """A restarted group with no checkpoint to resume from (its predecessor died before
        Ray registered one) starts at step 0: still a restart, so ``VisualDL`` marks it
        (``add_resize`` at step 0) and a reader keeps the steps it redoes apart."""
        if self.restart > 0:
            self.model.resumed = {"step": 0, "restart": self.restart,
                                  "world_size": get_world_size()}

    def _groups_before(self) -> int:
        """How many groups of workers this run started before this one (0: the first).

        Counted by rank 0 in the run's storage folder and shared with the others, so that
        it counts up even when a group resumes from the same checkpoint as the one before
        (a group that grew before the shrunk one reported a checkpoint)."""
        from .env import communicator

        count = 0
        if get_rank() == 0 and self.storage:
            path = os.path.join(self.storage, "visualdl_groups")
            try:
                with open(path) as f:
                    count = int(f.read().strip() or 0)
            except (OSError, ValueError):
                count = 0
            os.makedirs(self.storage, exist_ok=True)
            with open(path + ".tmp", "w") as f:
                f.write(str(count + 1))
            os.replace(path + ".tmp", path)
        return int(communicator().all_gather_object(count)[0])

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        if epoch != self.epoch:
            self.epoch, self.samples = epoch, 0

    def on_train_batch_end(self, step: int, logs: dict | None = None) -> None:
        self.step += 1
        self.samples += int((logs or {}).get("batch_size", 0)) * get_world_size()
        if self.step % self.every == 0:
            self._report(logs or {})

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self.epoch, self.samples = epoch + 1, 0
        self._report(logs or {})

    def _name(self) -> str:
        """The checkpoint's folder: its step, and the group's restart count after the first
        group. A restarted group redoes the steps since the checkpoint it resumed from (all of
        them when Ray had registered none): without the count it would write over the folder
        a dead group saved at the same step, and the run would list that path twice."""
        tail = f"_restart{self.restart}" if self.restart else ""
        return f"checkpoint_{self.step:08d}{tail}"

    def _report(self, logs: dict) -> None:
        import ray.train

        metrics = {k: float(v) for k, v in logs.items() if isinstance(v, (int, float))}
        metrics.update(step=self.step, epoch=self.epoch, world_size=get_world_size(),
                       restart=self.restart, time=time.time())
        name = self._name()
        gather_optimizer_state(self.model)
        if get_rank() != 0:
            ray.train.report(metrics, checkpoint=None, checkpoint_dir_name=name)
            return
        directory = tempfile.mkdtemp(prefix="visualdl-ckpt-")
        try:
            save_training_state(self.model, directory, {
                "step": self.step, "epoch": self.epoch, "samples": self.samples,
                "restart": self.restart})
            ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(directory),
                             checkpoint_dir_name=name)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        self.model.checkpoints.append({"path": os.path.join(self.storage, name),
                                       "step": self.step})
