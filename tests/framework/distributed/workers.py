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
