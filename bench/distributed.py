"""Benchmark: data-parallel training with ``visualdl.framework.distributed`` on this machine.

1. Throughput: 2 workers (``spawn``: MPI's shared-memory all-reduce, and gloo's over
   127.0.0.1) against 1, with the same per-worker batch and one thread per worker, on the
   digits MLP and LeNet-5 (digits scaled to 32x32). Each worker times ``--steps`` train
   steps of ``Model.fit(distributed=...)`` after a warm-up; samples/s = world size x batch /
   median step time. Each with every rank updating all parameters (plain data parallelism)
   and with sharded updates (``fleet.DistributedStrategy(sharding=True)``: each rank updates
   half, then an all-gather). "all-reduce", "all-gather": their shares of a step
   (``DataParallel.sync_gradients``; the parameters' all-gather when sharded); for the default
   bucket (one all-reduce per step here) and for small buckets (several, started as soon as
   each is packed). "2 alone": two single-process trainings at the same time, no all-reduce,
   against one: what the machine allows now (the ceiling of the speed-up). Target: 2 workers
   >= 1.7x one (2 cores).
2. ``--elastic``: Ray Train, 2 workers (min 1, max 2), digits MLP for 8 epochs, one worker
   SIGKILLed mid-epoch 2 and its Ray node removed (two local nodes of one CPU: its machine
   gone) until the group of one has trained 10 steps, then a node added again; against an
   undisturbed run in the same bench run: the world sizes seen (2, 1, 2), final accuracy
   (target >= 97% for both), steps redone (at most those since the last checkpoint), the
   time from the kill to the next step and from the node's return to the first step of 2
   workers again.

    python bench/distributed.py                  # throughput, 3 repeats
    python bench/distributed.py --elastic        # + the elastic runs (minutes: Ray starts)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
TARGET = 1.7


def digits(size: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    if size != 8:
        x = np.kron(x, np.ones((1, 1, size // 8, size // 8), np.float32))
    return x, d.target.astype(np.int64)


def make_net(name: str):
    from visualdl.framework import nn

    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(  # LeNet-5 on 32x32
        nn.Conv2D(1, 6, 5), nn.ReLU(), nn.MaxPool2D(2),
        nn.Conv2D(6, 16, 5), nn.ReLU(), nn.MaxPool2D(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def time_steps(model_name: str, batch: int, steps: int, bucket_mb: float,
               sharded: bool = False) -> dict:
    """One worker: median step time and all-reduce time over ``steps`` timed steps;
    ``sharded``: each rank updates half the parameters (fleet's sharding strategy)."""
    import visualdl.framework as vf
    from visualdl.framework import distributed as dist

    vf.seed(0)
    x, y = digits(8 if model_name == "mlp" else 32)
    reps = -(-(steps + 10) * batch * dist.get_world_size() // len(y))
    x, y = np.concatenate([x] * reps), np.concatenate([y] * reps)
    net = make_net(model_name)
    dist.init_parallel_env()
    model = vf.Model(dist.DataParallel(net, bucket_size_mb=bucket_mb))
    model.prepare(vf.optim.Adam(net.parameters(), 1e-3), vf.nn.CrossEntropyLoss())
    strategy = dist.fleet.DistributedStrategy(sharding=sharded)
    times: list[float] = []
    syncs: list[float] = []
    gathers: list[float] = []

    def communicating() -> tuple[float, float]:  # seconds in all-reduces, in all-gathers
        sharding = model.optimizer.inner.sharding
        return model.network.sync_seconds, sharding.exchange_seconds if sharding else 0.0

    class Clock(vf.callbacks.Callback):
        def on_train_batch_begin(self, step, logs=None):
            self.t0, self.s0 = time.perf_counter(), communicating()

        def on_train_batch_end(self, step, logs=None):
            if step >= 10:  # warm-up steps are not timed
                times.append(time.perf_counter() - self.t0)
                now = communicating()
                syncs.append(now[0] - self.s0[0])
                gathers.append(now[1] - self.s0[1])
            if step + 1 >= steps + 10:
                self.model.stop_training = True

    model.fit((x, y), batch_size=batch, epochs=1, verbose=0, callbacks=[Clock()],
              distributed=strategy)
    return {"step": statistics.median(times), "sync": statistics.median(syncs),
            "gather": statistics.median(gathers),
            "buckets": model.network.num_buckets}


def throughput(args: argparse.Namespace) -> None:
    from visualdl.framework.distributed import spawn

    print(f"data-parallel throughput, per-worker batch {args.batch}, 1 thread per worker, "
          f"{args.steps} timed steps, median of {args.repeats} repeats (machine shared with "
          f"other jobs: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"{'model':<8}{'library':>8}{'bucket':>8}{'buckets':>8}{'updates':>9}{'1 worker':>12}"
          f"{'2 workers':>12}{'speed-up':>10}{'all-reduce':>12}{'all-gather':>12}{'2 alone':>10}  "
          f"target >= {TARGET}x")
    for name, backend, bucket, sharded in itertools.product(
            args.models, args.backends, args.bucket_mb, args.sharding):
        if backend not in available_backends():
            print(f"{name:<8}{backend:>8}  not installed (pip install 'visualdl[distributed]')")
            continue
        job = (time_steps, (name, args.batch, args.steps, bucket, sharded == "on"))
        one, two, alone = [], [], []
        for r in range(args.repeats):
            for n in ((1, 2) if r % 2 == 0 else (2, 1)):
                (one if n == 1 else two).append(spawn(*job, nprocs=n, backend=backend))
            # the machine's ceiling: two single-process trainings at once, no all-reduce
            alone.append(spawn(*job, nprocs=2, env={"WORLD_SIZE": "1"}, backend="gloo"))
        t1 = statistics.median(r[0]["step"] for r in one)
        t2 = statistics.median(max(w["step"] for w in r) for r in two)
        sync = statistics.median(statistics.mean(w["sync"] for w in r) for r in two)
        gather = statistics.median(statistics.mean(w["gather"] for w in r) for r in two)
        rate1, rate2 = args.batch / t1, 2 * args.batch / t2
        ratio = rate2 / rate1
        ceiling = statistics.median(sum(args.batch / w["step"] for w in r) for r in alone)
        updates = "sharded" if sharded == "on" else "all"
        print(f"{name:<8}{backend:>8}{bucket:>6g}MB{two[0][0]['buckets']:>8}{updates:>9}"
              f"{rate1:>10.0f}/s"
              f"{rate2:>10.0f}/s{ratio:>9.2f}x{100 * sync / t2:>11.1f}%"
              f"{(f'{100 * gather / t2:.1f}%' if sharded == 'on' else '-'):>12}"
              f"{ceiling / rate1:>9.2f}x  {'PASS' if ratio >= TARGET else 'MISS'}")


def available_backends() -> list[str]:
    """The collective libraries installed here: MPI (mpi4py + MPICH), gloo (torch)."""
    import importlib.util

    from visualdl.framework.distributed.mpi_launch import launcher

    return ([b for b, ok in (("mpi", launcher() is not None),
                             ("gloo", importlib.util.find_spec("torch") is not None)) if ok])


# ------------------------------------------------------------------ elastic (Ray Train)
def elastic_worker(config: dict) -> None:
    """One Ray Train worker: the digits MLP, 8 epochs; progress and the result on disk."""
    import visualdl.framework as vf
    from visualdl.framework import distributed as dist
    from visualdl.framework import nn

    import ray

    folder = config["dir"]
    os.makedirs(os.path.join(folder, "progress"), exist_ok=True)
    mine = os.path.join(folder, "progress", str(os.getpid()))
    node = ray.get_runtime_context().get_node_id()

    class Progress(vf.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.step = (self.model.resumed or {}).get("step", 0)

        def on_train_batch_end(self, step, logs=None):
            self.step += 1
            with open(mine, "a") as f:
                f.write(f"{time.time()} {dist.get_rank()} {self.step} {dist.get_world_size()} "
                        f"{node}\n")
            if self.step <= 44:
                time.sleep(0.2)  # the first two epochs slowed: room to kill mid-epoch

    x, y = digits(8)
    order = np.random.default_rng(0).permutation(len(y))
    cut = int(0.75 * len(y))
    train, test = order[:cut], order[cut:]
    vf.seed(0)
    net = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    model = vf.Model(net)
    model.prepare(vf.optim.Adam(net.parameters(), 1e-2), vf.nn.CrossEntropyLoss(),
                  vf.metric.Accuracy())
    result = model.fit((x[train], y[train]), (x[test], y[test]), batch_size=32, epochs=8,
                       verbose=0, callbacks=[Progress()], distributed=True)
    if dist.get_rank() == 0:
        with open(os.path.join(folder, "result.json"), "w") as f:
            json.dump({"acc": result["acc"], "resumed": model.resumed}, f)


def _steps(folder: str) -> list[tuple[float, int, int, int]]:
    """(time, rank, step, world size) of every step every worker reported."""
    out = []
    path = os.path.join(folder, "progress")
    for name in os.listdir(path) if os.path.isdir(path) else []:
        with open(os.path.join(path, name)) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 5:
                    out.append((float(parts[0]), int(parts[1]), int(parts[2]), int(parts[3])))
    return sorted(out)


def _on_node(folder: str, node_id: str) -> tuple[int, int] | None:
    """(pid, last step) of the worker running on node ``node_id`` now."""
    path = os.path.join(folder, "progress")
    for name in os.listdir(path):
        with open(os.path.join(path, name)) as f:
            lines = [line.split() for line in f if len(line.split()) == 5]
        if lines and lines[-1][4] == node_id:
            return int(name), int(lines[-1][2])
    return None


def elastic_run(cluster, folder: str, kill: bool) -> dict:
    from visualdl.framework.distributed.ray_train import fit_on_ray

    killed: dict = {}

    def killer() -> None:
        checkpoint = os.path.join(folder, "ray", "run", "checkpoint_00000022")
        while not os.path.isdir(checkpoint):
            time.sleep(0.05)
        time.sleep(3.0)  # Ray registers the checkpoint when it next polls the workers
        second = next(iter(cluster.worker_nodes))
        pid, step = _on_node(folder, second.node_id)
        os.kill(pid, signal.SIGKILL)  # the worker, then its machine: gone
        cluster.remove_node(second, allow_graceful=False)
        killed.update(time=time.time(), step=step)
        while not any(w == 1 and s >= step + 10 for _, _, s, w in _steps(folder)):
            time.sleep(0.2)  # the group of one trains 10 steps; then a machine joins
        killed["rejoin"] = True

    out: dict = {}

    def fit() -> None:
        out["result"] = fit_on_ray(elastic_worker, {"dir": folder}, num_workers=(1, 2),
                                   max_failures=2, storage_path=os.path.join(folder, "ray"),
                                   name="run", checkpoint_every=1000, resize_interval_s=5,
                                   timeout_s=30)

    if kill:
        threading.Thread(target=killer, daemon=True).start()
    start = time.time()
    trainer = threading.Thread(target=fit, daemon=True)
    trainer.start()
    while trainer.is_alive():  # Ray starts a node's processes from the main thread only
        if killed.pop("rejoin", False):
            cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
            killed["released"] = time.time()
        trainer.join(0.2)
    result = out["result"]
    with open(os.path.join(folder, "result.json")) as f:
        final = json.load(f)
    steps = _steps(folder)
    out = {"acc": final["acc"], "wall": time.time() - start, "error": result.error,
           "worlds": [w for i, (_, _, _, w) in enumerate(steps) if i == 0 or steps[i - 1][3] != w]}
    if kill:
        after = [t for t, _, _, _ in steps if t > killed["time"]]
        resumed = final["resumed"] or {}
        regrown = [t for t, _, _, w in steps if t > killed["released"] and w == 2]
        out.update(killed_at=killed["step"], resumed_at=shrunk_at(steps, killed["time"]),
                   redone=killed["step"] - shrunk_at(steps, killed["time"]),
                   kill_to_step=(after[0] - killed["time"]) if after else float("nan"),
                   free_to_step=(regrown[0] - killed["released"]) if regrown else float("nan"),
                   regrown_at=(resumed.get("step") if resumed.get("world_size") == 2 else None))
    return out


def shrunk_at(steps: list[tuple[float, int, int, int]], kill_time: float) -> int:
    """The step the group of one resumed from: its first step after the kill, less one."""
    return min(s for t, _, s, w in steps if t > kill_time and w == 1) - 1


def elastic(args: argparse.Namespace) -> None:
    from visualdl.framework.distributed.ray_train import start_local_nodes

    cluster = start_local_nodes(2, 1, pythonpath=[ROOT, os.path.dirname(os.path.abspath(__file__))])
    import ray

    tmp = tempfile.mkdtemp(prefix="vdl_bench_elastic_")
    try:
        plain = elastic_run(cluster, os.path.join(tmp, "plain"), kill=False)
        hit = elastic_run(cluster, os.path.join(tmp, "killed"), kill=True)
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    print("\nelastic training on Ray Train (min 1, max 2 workers), digits MLP, 8 epochs x 22 "
          "steps, checkpoint each epoch; one run each (each costs minutes of Ray start-up)")
    print(f"{'run':<12}{'accuracy':>10}{'wall s':>8}  world sizes  killed at  resumed at  "
          f"redone  kill -> next step  grew back at  node back -> step at 2")
    for name, r in (("undisturbed", plain), ("rank 1 kill", hit)):
        tail = (f"{r['killed_at']:>9}{r['resumed_at']:>12}{r['redone']:>8}"
                f"{r['kill_to_step']:>17.1f} s{str(r['regrown_at']):>14}"
                f"{r['free_to_step']:>20.1f} s" if "killed_at" in r else "")
        print(f"{name:<12}{r['acc']:>10.4f}{r['wall']:>8.0f}  {str(r['worlds']):<12}{tail}")
    ok = (plain["acc"] >= 0.97 and hit["acc"] >= 0.97 and hit["redone"] <= 22
          and hit["worlds"][:3] == [2, 1, 2])
    print(f"accuracy >= 97% in both, at most one epoch redone, 2 -> 1 -> 2 workers: "
          f"{'PASS' if ok else 'MISS'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=60, help="timed steps per run")
    parser.add_argument("--batch", type=int, default=64, help="per-worker batch")
    parser.add_argument("--models", nargs="+", default=["mlp", "lenet5"])
    parser.add_argument("--bucket-mb", nargs="+", type=float, default=[4.0, 0.02])
    parser.add_argument("--sharding", nargs="+", choices=["off", "on"], default=["off", "on"],
                        help="each rank updates all parameters (off) or its half (on: "
                             "fleet.DistributedStrategy(sharding=True))")
    parser.add_argument("--backends", nargs="+", default=["mpi", "gloo"],
                        help="collective libraries to compare (spawn's backend=)")
    parser.add_argument("--elastic", action="store_true", help="also the Ray Train runs")
    parser.add_argument("--no-throughput", action="store_true")
    args = parser.parse_args(argv)
    if not args.no_throughput:
        throughput(args)
    if args.elastic:
        elastic(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
