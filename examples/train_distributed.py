"""Train the digits MLP data-parallel: on local processes, or elastic on Ray Train.

    python examples/train_distributed.py --nprocs 2 --logdir demo_logs/dp
    python examples/train_distributed.py --ray --workers 1 2 --logdir demo_logs/elastic
    visualdl --logdir demo_logs

Each worker runs ``train`` below: the single-process code of ``examples/train_demo.py``
with one more argument, ``fit(..., distributed=True)``. Every rank logs its curves into
the same run (the dashboard's rank selector). ``--ray`` starts a local Ray cluster on
127.0.0.1 (``visualdl[distributed]``); kill a worker (``kill -9 PID``) and watch the job
go on from its last checkpoint. docs/distributed.md explains it all.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # train_digits, in the workers too (spawn re-imports this file)


def train(config: dict) -> dict:
    """One worker: the digits MLP, ``config["epochs"]`` epochs, batch 32 per worker."""
    from train_digits import load_digits_split, make_mlp

    import visualdl.framework as vf
    from visualdl.framework import distributed as dist

    x_train, y_train, x_test, y_test = load_digits_split(0)
    vf.seed(0)
    net = make_mlp()
    model = vf.Model(net)
    model.prepare(vf.optim.Adam(net.parameters(), 3e-3), vf.nn.CrossEntropyLoss(),
                  vf.metric.Accuracy())
    callbacks = [vf.callbacks.VisualDL(config["logdir"], log_images=False)] if config["logdir"] else []
    start = time.perf_counter()
    # sharding: each rank also updates only its half of the parameters (fleet's strategy)
    strategy = dist.fleet.DistributedStrategy(sharding=config.get("sharding", False))
    result = model.fit((x_train, y_train), (x_test, y_test), batch_size=32,
                       epochs=config["epochs"], verbose=0, callbacks=callbacks,
                       distributed=strategy)
    if dist.get_rank() == 0:
        print(f"rank 0 of {dist.get_world_size()}: test accuracy {result['acc']:.4f} after "
              f"{config['epochs']} epochs ({time.perf_counter() - start:.1f} s)", flush=True)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nprocs", type=int, default=2, help="local processes (no Ray)")
    parser.add_argument("--ray", action="store_true", help="run on Ray Train, elastic")
    parser.add_argument("--workers", type=int, nargs=2, default=[1, 2], metavar=("MIN", "MAX"),
                        help="with --ray: the fewest and most workers")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--logdir", default=None)
    parser.add_argument("--sharding", action="store_true",
                        help="each worker updates only its share of the parameters")
    args = parser.parse_args(argv)
    run_dir = None
    if args.logdir:
        # absolute: Ray's workers run in a folder of Ray's, not in this one
        run_dir = os.path.join(os.path.abspath(args.logdir),
                               "ray" if args.ray else f"spawn{args.nprocs}")
        shutil.rmtree(run_dir, ignore_errors=True)  # a re-run replaces this demo's own run
    config = {"epochs": args.epochs, "logdir": run_dir, "sharding": args.sharding}
    if not args.ray:
        from visualdl.framework.distributed import spawn

        spawn(train, args=(config,), nprocs=args.nprocs)
        return
    from visualdl.framework.distributed.ray_train import fit_on_ray, start_local_cluster

    session = start_local_cluster(num_cpus=args.workers[1], pythonpath=[HERE])
    import ray

    storage = os.path.join(tempfile.gettempdir(), "visualdl_ray")
    # a job of an earlier job's storage and name resumes from its last checkpoint (Ray
    # Train's rule): a re-run of this demo starts over, as its run folder does
    shutil.rmtree(os.path.join(storage, "digits"), ignore_errors=True)
    try:
        result = fit_on_ray(train, config, num_workers=tuple(args.workers), max_failures=3,
                            storage_path=storage, name="digits", checkpoint_every=100)
        m = result.metrics or {}  # the last report: the last epoch's train metrics
        print(f"Ray Train finished: {m.get('step')} steps, world size {m.get('world_size')}, "
              f"{m.get('restart')} restarts, last epoch's train accuracy {m.get('acc', 0):.4f} "
              f"(the workers' own output is in Ray's session logs: "
              f"{os.path.join(session.address_info['session_dir'], 'logs')})")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
