"""The digits data and a small model, trained through ``Model.fit`` by the profiler tests."""

from __future__ import annotations

import numpy as np
import pytest


def digits(n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8x8 digits as float32 (N, 64) in [0, 1] and int64 labels."""
    load_digits = pytest.importorskip("sklearn.datasets").load_digits  # the test extra's

    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    return (x, y) if n is None else (x[:n], y[:n])


def fit_model(logdir: str, *, profile_steps=(3, 7), epochs: int = 1, batch_size: int = 64,
              n: int | None = 640, eval_data: bool = True, **options):
    """Fit an MLP on the digits with the VisualDL callback profiling ``profile_steps``."""
    import visualdl.framework as vf
    from visualdl.framework import nn

    vf.seed(0)
    x, y = digits(n)
    net = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.1, momentum=0.9), nn.CrossEntropyLoss(),
                  metrics=[vf.metric.Accuracy()])
    cb = vf.callbacks.VisualDL(logdir, histogram_freq=0, log_graph=False, log_images=False,
                               profile_steps=profile_steps, profiler_options=options)
    ev = (x[:128], y[:128]) if eval_data else None
    model.fit(vf.data.TensorDataset(x, y), ev, batch_size=batch_size, epochs=epochs,
              verbose=0, callbacks=[cb])
    return model, cb
