"""Functions the distributed tests run in each rank (module-level: ``spawn`` imports them
by name in fresh processes) and the single-process reference they are compared with."""

from __future__ import annotations

import os
import signal

import numpy as np

N, FEATURES, CLASSES = 96, 12, 4


def toy_data(n: int = N) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(n, FEATURES)).astype(np.float32)
    y = (x[:, :CLASSES].argmax(axis=1)).astype(np.int64)
    return x, y


def make_model(hidden: int = 16):
    import visualdl.framework as vf
    from visualdl.framework import nn

    vf.seed(0)
    net = nn.Sequential(nn.Linear(FEATURES, hidden), nn.ReLU(), nn.Linear(hidden, CLASSES))
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.1, momentum=0.9), vf.nn.CrossEntropyLoss(),
                  vf.metric.Accuracy())
    return model


def _capture_first_grads(model) -> tuple[dict, object]:
    import visualdl.framework as vf

    grads: dict[str, np.ndarray] = {}

    class FirstGrads(vf.callbacks.Callback):
        def on_train_batch_end(self, step, logs=None):
            if not grads:
                for name, p in model.network.named_parameters():
                    grads[name] = p.grad.numpy().copy()

    return grads, FirstGrads()


def train(batch_size: int, epochs: int, distributed: bool, n: int = N, hidden: int = 16,
          logdir: str | None = None) -> dict:
    """Fit the toy model; the first step's gradients and the final weights by name."""
    import visualdl.framework as vf

    model = make_model(hidden)
    grads, capture = _capture_first_grads(model)
    callbacks = [capture]
    if logdir is not None:
        callbacks.append(vf.callbacks.VisualDL(logdir, histogram_freq=2, log_graph=False))
    x, y = toy_data(n)
    model.fit((x, y), batch_size=batch_size, epochs=epochs, shuffle=True, verbose=0,
              callbacks=callbacks, distributed=distributed)
    weights = {name: p.numpy().copy() for name, p in model.network.named_parameters()}
    return {"grads": grads, "weights": weights}


def train_per_rank(hiddens: list[int], sizes: list[int]) -> dict:
    """Ranks built differently on purpose: rank r's hidden size and dataset size."""
    rank = int(os.environ["RANK"])
    return train(8, 1, True, n=sizes[rank], hidden=hiddens[rank])


def die_at_step(victim: int, step: int) -> None:
    """Train; rank ``victim`` SIGKILLs itself at ``step`` (a worker that crashes)."""
    import visualdl.framework as vf

    model = make_model()

    class Die(vf.callbacks.Callback):
        def on_train_batch_end(self, s, logs=None):
            if s == step and int(os.environ["RANK"]) == victim:
                os.kill(os.getpid(), signal.SIGKILL)

    model.fit(toy_data(), batch_size=4, epochs=3, verbose=0, callbacks=[Die()],
              distributed=True)


def digits(test_fraction: float = 0.25) -> tuple[np.ndarray, ...]:
    """scikit-learn's bundled 8x8 digits as (x_train, y_train, x_test, y_test), flattened."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x, y = (d.data / 16.0).astype(np.float32), d.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(y))
    cut = int(len(y) * (1 - test_fraction))
    return x[order[:cut]], y[order[:cut]], x[order[cut:]], y[order[cut:]]


def ray_digits(config: dict) -> None:
    """One Ray Train worker's training (fit_on_ray's train_fn): an MLP on the digits.

    Writes, for the test to watch, ``<dir>/progress/<pid>`` = "rank step world_size node"
    after every step and, on rank 0 at the end, ``<dir>/result.json`` with the test
    accuracy. Steps sleep ``step_delay`` s in the first ``slow_epochs`` epochs and, with
    ``slow_alone``, whenever the group is one worker: a group shrunk by a kill must not
    finish before a slow machine's Ray grows it back."""
    import json

    import ray

    import visualdl.framework as vf
    from visualdl.framework import nn
    from visualdl.framework.distributed import get_rank, get_world_size

    folder = config["dir"]
    os.makedirs(os.path.join(folder, "progress"), exist_ok=True)
    mine = os.path.join(folder, "progress", str(os.getpid()))
    node = ray.get_runtime_context().get_node_id()

    class Progress(vf.callbacks.Callback):
        step = 0

        def on_train_begin(self, logs=None):
            self.step = (self.model.resumed or {}).get("step", 0)

        def on_train_batch_end(self, step, logs=None):
            self.step += 1
            with open(mine, "w") as f:
                f.write(f"{get_rank()} {self.step} {get_world_size()} {node}")
            slow = self.step <= 22 * config.get("slow_epochs", 99) or (
                config.get("slow_alone") and get_world_size() == 1)
            if config.get("step_delay") and slow:
                import time

                time.sleep(config["step_delay"])  # time for the test to act mid-epoch

    x, y, xt, yt = digits()
    vf.seed(0)
    net = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    model = vf.Model(net)
    model.prepare(vf.optim.Adam(net.parameters(), config.get("lr", 1e-2)), vf.nn.CrossEntropyLoss(),
                  vf.metric.Accuracy())
    callbacks = [Progress()]
    if config.get("logdir"):
        callbacks.append(vf.callbacks.VisualDL(config["logdir"], log_graph=False))
    from visualdl.framework.distributed import fleet

    result = model.fit((x, y), (xt, yt), batch_size=32, epochs=config["epochs"], verbose=0,
                       callbacks=callbacks, distributed=fleet.DistributedStrategy(
                           sharding=config.get("sharding", False)))
    if get_rank() == 0:
        with open(os.path.join(folder, "result.json"), "w") as f:
            json.dump({"acc": result["acc"], "resumed": model.resumed,
                       "checkpoints": model.checkpoints}, f)


def late_rank(late: int, delay_s: float) -> None:
    """Rank ``late`` arrives ``delay_s`` late at the first collective (a stuck worker)."""
    import time

    if int(os.environ["RANK"]) == late:
        time.sleep(delay_s)
    make_model()
    from visualdl.framework.distributed import DataParallel

    DataParallel(make_model().network)


def train_batchnorm(save_dir: str | None = None, logdir: str | None = None) -> dict:
    """A model with BatchNorm fitted data-parallel: its buffers (running statistics, each
    rank's own shard updates them) and its evaluation, on this rank."""
    import visualdl.framework as vf
    from visualdl.framework import nn

    vf.seed(0)
    net = nn.Sequential(nn.Linear(FEATURES, 16), nn.BatchNorm1D(16), nn.ReLU(),
                        nn.Linear(16, CLASSES))
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.1), nn.CrossEntropyLoss(),
                  metrics=[vf.metric.Accuracy()])
    x, y = toy_data()
    callbacks = [] if logdir is None else [vf.callbacks.VisualDL(logdir, histogram_freq=0,
                                                                  log_graph=False)]
    model.fit((x, y), batch_size=8, epochs=2, shuffle=True, verbose=0, distributed=True,
              save_dir=save_dir, callbacks=callbacks)
    evaluation = model.evaluate((x, y), batch_size=32, verbose=0)
    return {"buffers": {n: b.numpy().copy() for n, b in net.named_buffers()},
            "eval": {k: float(np.mean(v)) for k, v in evaluation.items()}}


def profiled_fit(logdir: str, sharded: bool = False) -> int:
    """The digits MLP fitted data-parallel (``sharded``: with sharded updates) with the
    VisualDL callback profiling steps 3-5; returns its parameter count (the floats each
    all-reduce carries)."""
    import visualdl.framework as vf
    from visualdl.framework import nn
    from visualdl.framework.distributed import fleet

    from tests.framework.profiler.digits import digits

    vf.seed(0)
    x, y = digits(640)
    net = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.1), nn.CrossEntropyLoss())
    cb = vf.callbacks.VisualDL(logdir, histogram_freq=0, log_graph=False, log_images=False,
                               profile_steps=(3, 5))
    model.fit((x, y), batch_size=32, epochs=1, verbose=0, callbacks=[cb],
              distributed=fleet.DistributedStrategy(sharding=sharded))
    return sum(p.numel() for p in net.parameters())


def exit_early(victim: int, status: int) -> str:
    """Rank ``victim`` exits with ``status`` (no result, no error) while the others wait in
    a barrier: the rank to blame is the one that left, not those ended after it."""
    from visualdl.framework import distributed as dist

    comm = dist.init_parallel_env(timeout_s=10)
    if comm.rank == victim:
        os._exit(status)
    comm.barrier()
    return "ok"


def note_pid_then_exit(folder: str, victim: int) -> str:
    """Each rank notes its PID in ``folder``; then rank ``victim`` exits without MPI_Finalize
    (its shared memory is left behind) and the others lose it."""
    from visualdl.framework import distributed as dist

    comm = dist.init_parallel_env(timeout_s=10)
    open(os.path.join(folder, str(os.getpid())), "w").close()
    comm.barrier()
    if comm.rank == victim:
        os._exit(3)
    comm.barrier()
    return "ok"


def unpicklable_result(victim: int) -> object:
    """Rank ``victim`` returns what cannot be pickled back to the parent (a lock)."""
    import threading

    from visualdl.framework import distributed as dist

    dist.init_parallel_env(timeout_s=10)
    return threading.Lock() if dist.get_rank() == victim else "ok"


def assert_like_alone(result: dict, alone: dict) -> None:
    """A rank's first-step gradients and final weights equal one process's on the global
    batch (float tolerance: the all-reduce sums in another order)."""
    import numpy as np

    for name, g in alone["grads"].items():
        np.testing.assert_allclose(result["grads"][name], g, rtol=1e-5, atol=1e-6,
                                   err_msg=f"first step's gradient of {name}")
    for name, w in alone["weights"].items():
        np.testing.assert_allclose(result["weights"][name], w, rtol=1e-4, atol=1e-5,
                                   err_msg=f"final weight {name}")


def sampler_per_rank(sizes: list[int]) -> int:
    """A hand-written loop's sampler (Paddle's documented one) over a dataset of
    ``sizes[rank]`` samples; the number of batches it gives."""
    import visualdl.framework as vf
    import visualdl.framework.distributed as dist

    dist.init_parallel_env()
    x, y = toy_data(sizes[dist.get_rank()])
    sampler = dist.DistributedBatchSampler(vf.dataloader.TensorDataset(x, y), 8)
    return len(sampler)


def train_with(optimizer: str, sharded: bool, save_dir: str | None = None,
               load: str | None = None, epochs: int = 3) -> dict:
    """Fit the toy model with ``optimizer`` ("adam": Adam with global-norm clipping,
    "momentum": SGD with momentum), data-parallel with or without sharded updates (or alone
    in a world of one); then the final weights, the optimizer's whole state, and what
    ``state_dict`` says after one more step by hand. ``load``: a checkpoint to start from
    (Model.load)."""
    import visualdl.framework as vf
    from visualdl.framework import nn
    from visualdl.framework.distributed import fleet, get_world_size

    vf.seed(0)
    net = nn.Sequential(nn.Linear(FEATURES, 16), nn.ReLU(), nn.Linear(16, CLASSES))
    if optimizer == "adam":
        opt = vf.optim.Adam(net.parameters(), 0.01, grad_clip=vf.optim.ClipGradByGlobalNorm(0.5))
    else:
        opt = vf.optim.SGD(net.parameters(), 0.1, momentum=0.9)
    model = vf.Model(net)
    model.prepare(opt, vf.nn.CrossEntropyLoss())
    if load is not None:
        model.load(load)
    x, y = toy_data()
    world = get_world_size()  # the launcher's, before the group is joined
    distributed = fleet.DistributedStrategy(sharding=sharded) if world > 1 else False
    model.fit((x, y), batch_size=16 // world, epochs=epochs, shuffle=True, verbose=0,
              distributed=distributed, save_dir=save_dir)
    state = model.optimizer.state_dict()  # whole: fit gathered it at its end
    weights = {n: p.numpy().copy() for n, p in net.named_parameters()}
    refused = ""
    if world > 1:  # one more step by hand: the state is sharded again
        model.train_batch([vf.to_tensor(x[:8])], [vf.to_tensor(y[:8])])
        try:
            model.optimizer.state_dict()
        except Exception as exc:  # noqa: BLE001 - the words are what the test checks
            refused = f"{type(exc).__name__}: {exc}"
    return {"weights": weights,
            "state": {k: np.asarray(v).copy() for k, v in state["state"].items()},
            "step_count": state["step_count"], "refused": refused,
            "views": sum(p.numpy().base is not None for p in net.parameters())}
