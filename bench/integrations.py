"""What each trainer integration adds to its trainer's step time, on a tiny model.

For Lightning (``VisualDLLogger``), Transformers (``VisualDLCallback``) and Keras 3 on torch
(``VisualDLCallback``): the same training without any logger, with ours, and with the
TensorBoard peer where it runs here (Lightning's ``TensorBoardLogger``, transformers'
``TensorBoardCallback``; Keras' ``TensorBoard`` callback needs TensorFlow). Metrics are
logged at every step (the worst case: the trainers' defaults log every 50 steps / 500
steps / each epoch). A step's time is a run's wall time from the first step after the
warm-up to the last, over the steps between; modes are interleaved round by round, so
drift on a shared machine hits all alike, and a mode's overhead is the median over rounds
of (its time / a baseline's time in the same round). Two baselines: no logger at all, and
a logger that does nothing (the trainer's own logging path, which any logger switches on:
Lightning turns each metric into a float and calls the logger's save() every step). What
an integration adds is measured against the second; end to end, on a shared machine, that
difference is within the noise, so the integration's own calls are also replayed alone
(those the trainer makes each step, with the values it passes) and timed against the step.
Target: +2 % at most.

    python bench/integrations.py [--rounds 7] [--steps 200] [--only lightning,keras]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
import warnings

os.environ.setdefault("KERAS_BACKEND", "torch")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WARMUP = 20  # steps left out of each run's time
TARGET = 2.0


# -- Lightning ----------------------------------------------------------------------------
def lightning_modes() -> dict:
    from lightning.pytorch.loggers import Logger, TensorBoardLogger

    from visualdl.integrations.lightning import VisualDLLogger

    class NullLogger(Logger):  # Lightning's own logging path, with a logger that keeps nothing
        name, version = "null", 0

        def log_metrics(self, metrics, step=None):
            pass

        def log_hyperparams(self, params, *args, **kwargs):
            pass

    return {"no logger": lambda d: False,
            "a logger that does nothing": lambda d: NullLogger(),
            "VisualDLLogger": lambda d: VisualDLLogger(d, system_metrics=False),
            "VisualDLLogger + system metrics": lambda d: VisualDLLogger(d),
            "TensorBoardLogger (peer)": lambda d: TensorBoardLogger(d)}


def lightning_run(make_logger, steps: int) -> float:
    import lightning.pytorch as pl
    import torch

    times: list[float] = []

    class Clock(pl.Callback):
        def on_train_batch_start(self, *args):
            times.append(time.perf_counter())

    class Tiny(pl.LightningModule):
        def __init__(self, lr=0.01, width=64):
            super().__init__()
            self.save_hyperparameters()
            self.net = torch.nn.Sequential(torch.nn.Linear(32, width), torch.nn.ReLU(),
                                           torch.nn.Linear(width, 1))

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = torch.nn.functional.mse_loss(self.net(x), y)
            self.log("train/loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

    torch.manual_seed(0)
    x = torch.randn(16 * (steps + WARMUP + 1), 32)
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, x[:, :1]),
                                       batch_size=16)
    with tempfile.TemporaryDirectory() as tmp:
        trainer = pl.Trainer(max_epochs=1, logger=make_logger(tmp), log_every_n_steps=1,
                             callbacks=[Clock()], enable_progress_bar=False,
                             enable_checkpointing=False, enable_model_summary=False,
                             accelerator="cpu", devices=1)
        trainer.fit(Tiny(), data)
    return (times[-1] - times[WARMUP]) / (len(times) - 1 - WARMUP)


# -- Transformers -------------------------------------------------------------------------
def transformers_modes() -> dict:
    import transformers

    from visualdl.integrations.transformers import VisualDLCallback

    class NullCallback(transformers.TrainerCallback):  # a logger that keeps nothing
        def on_log(self, args, state, control, logs=None, **kwargs):
            pass

    return {"no logger": lambda d: None,
            "a logger that does nothing": lambda d: NullCallback(),
            "VisualDLCallback": lambda d: VisualDLCallback(d, system_metrics=False),
            "VisualDLCallback + system metrics": lambda d: VisualDLCallback(d),
            "TensorBoardCallback (peer)": "tensorboard"}


def transformers_run(make_callback, steps: int) -> float:
    import torch
    import transformers

    times: list[float] = []

    class Clock(transformers.TrainerCallback):
        def on_step_begin(self, *args, **kwargs):
            times.append(time.perf_counter())

    class Rows(torch.utils.data.Dataset):
        def __init__(self, n):
            g = torch.Generator().manual_seed(0)
            self.ids = torch.randint(1, 50, (n, 8), generator=g)

        def __len__(self):
            return len(self.ids)

        def __getitem__(self, i):
            return {"input_ids": self.ids[i], "labels": self.ids[i, 0] % 2}

    torch.manual_seed(0)
    config = transformers.BertConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32, vocab_size=50,
                                     max_position_embeddings=16, num_labels=2)
    model = transformers.BertForSequenceClassification(config)
    with tempfile.TemporaryDirectory() as tmp:
        callback = make_callback(os.path.join(tmp, "vdl")) if callable(make_callback) else None
        args = transformers.TrainingArguments(
            output_dir=tmp, per_device_train_batch_size=4, max_steps=steps + WARMUP + 1,
            logging_steps=1, save_strategy="no", use_cpu=True, disable_tqdm=True,
            report_to=[make_callback] if isinstance(make_callback, str) else "none")
        callbacks = [Clock()] + ([callback] if callback is not None else [])
        trainer = transformers.Trainer(model=model, args=args,
                                       train_dataset=Rows(4 * (steps + WARMUP + 1)),
                                       callbacks=callbacks)
        trainer.remove_callback(transformers.PrinterCallback)  # disable_tqdm prints each log
        trainer.train()
    return (times[-1] - times[WARMUP]) / (len(times) - 1 - WARMUP)


# -- Keras --------------------------------------------------------------------------------
def keras_modes() -> dict:
    import keras

    from visualdl.integrations.keras import VisualDLCallback

    class NullCallback(keras.callbacks.Callback):  # batch ends taken, nothing kept
        def on_train_batch_end(self, batch, logs=None):
            pass

    return {"no logger": lambda d: None,
            "a logger that does nothing": lambda d: NullCallback(),
            "VisualDLCallback (update_freq=epoch)":
                lambda d: VisualDLCallback(d, histogram_freq=1, system_metrics=False),
            "VisualDLCallback (update_freq=batch)":
                lambda d: VisualDLCallback(d, update_freq="batch", histogram_freq=1,
                                           system_metrics=False)}


def keras_run(make_callback, steps: int) -> float:
    import keras
    import numpy as np

    times: list[float] = []

    class Clock(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            times.append(time.perf_counter())

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse", metrics=["mae"])
    x = np.random.default_rng(0).normal(size=(16 * (steps + WARMUP + 1), 32)).astype("float32")
    with tempfile.TemporaryDirectory() as tmp:
        callback = make_callback(tmp)
        model.fit(x, x[:, :1], batch_size=16, epochs=1, verbose=0,
                  callbacks=[Clock()] + ([callback] if callback is not None else []))
    return (times[-1] - times[WARMUP]) / (len(times) - 1 - WARMUP)


# -- the integrations' own calls, replayed: what each adds to a step, without the noise --
def _per_call(call, calls: int = 20_000) -> float:
    call(0)
    start = time.perf_counter()
    for step in range(1, calls + 1):
        call(step)
    return (time.perf_counter() - start) / calls


def lightning_hooks(tmp: str) -> float:
    """What Lightning calls each step it logs: log_metrics, then save."""
    import torch

    from visualdl.integrations.lightning import VisualDLLogger

    logger = VisualDLLogger(tmp, system_metrics=False)
    loss = torch.tensor(0.5)

    def step(i):
        logger.log_metrics({"train/loss": float(loss), "epoch": 0.0}, i)
        logger.save()

    try:
        return _per_call(step)
    finally:
        logger.finalize("success")


def transformers_hooks(tmp: str) -> float:
    """on_log with what the Trainer logs each logging step."""
    from transformers import TrainerControl, TrainerState, TrainingArguments

    from visualdl.integrations.transformers import VisualDLCallback

    args = TrainingArguments(output_dir=tmp, report_to="none", use_cpu=True)
    state, control = TrainerState(), TrainerControl()
    callback = VisualDLCallback(tmp, system_metrics=False)

    def step(i):
        state.global_step = i
        callback.on_log(args, state, control, logs={"loss": 0.69, "grad_norm": 0.4,
                                                    "learning_rate": 5e-5, "epoch": 0.5})

    try:
        return _per_call(step)
    finally:
        callback.on_train_end(args, state, control)


def keras_hooks(tmp: str) -> float:
    """on_train_batch_end (update_freq="batch") with the logs Keras hands callbacks."""
    import keras

    from visualdl.integrations.keras import VisualDLCallback

    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse", metrics=["mae"])
    callback = VisualDLCallback(tmp, update_freq="batch", system_metrics=False)
    callback.set_model(model)

    def step(i):
        callback.on_train_batch_end(i, {"loss": 0.69, "mae": 0.5})

    try:
        return _per_call(step)
    finally:
        callback.on_train_end()


HOOKS = {"lightning": lightning_hooks, "transformers": transformers_hooks,
         "keras": keras_hooks}


TRAINERS = {"lightning": (lightning_modes, lightning_run),
            "transformers": (transformers_modes, transformers_run),
            "keras": (keras_modes, keras_run)}


def _overhead(times: list[float], base: list[float]) -> float:
    return (statistics.median(t / b for t, b in zip(times, base)) - 1) * 100


def bench(name: str, rounds: int, steps: int) -> None:
    modes_of, run = TRAINERS[name]
    modes = modes_of()
    run(modes["no logger"], 10)  # imports and first-call costs out of the rounds
    per_mode: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(rounds):
        for mode, make in modes.items():
            per_mode[mode].append(run(make, steps))
    bare, null = per_mode["no logger"], per_mode["a logger that does nothing"]
    print(f"\n{name}: {steps} steps a run after {WARMUP} warm-up steps, {rounds} rounds "
          f"(metrics logged every step)")
    print(f"{'mode':38s} {'ms/step':>8s} {'vs none':>8s} {'vs null':>8s}")
    for mode, times in per_mode.items():
        print(f"{mode:38s} {statistics.median(times) * 1e3:8.3f} "
              f"{_overhead(times, bare):+7.2f}% {_overhead(times, null):+7.2f}%")
    with tempfile.TemporaryDirectory() as tmp:
        hook = HOOKS[name](tmp)
    share = hook / statistics.median(null) * 100
    print(f"the integration's calls alone, replayed: {hook * 1e6:.1f} us a step = "
          f"{share:.2f} % of a step  {'PASS' if share <= TARGET else 'MISS'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--only", default=",".join(TRAINERS))
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    for noisy in ("lightning", "lightning.pytorch", "lightning.fabric", "transformers"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    import torch

    torch.set_num_threads(1)  # one core per trainer: the machine is shared
    print(f"torch {torch.__version__}; one thread")
    for name in args.only.split(","):
        bench(name, args.rounds, args.steps)


if __name__ == "__main__":
    main()
