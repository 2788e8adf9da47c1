"""A small sweep (3 learning rates x 3 seeds, hparams per run, one run on another step
grid) and a long run, served on a free loopback port: the ``sweep`` logdir and a ``client``
of its server, fixtures for the modules that import them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogWriter

LRS = (0.1, 0.01, 0.001)
SEEDS = (0, 1, 2)
SWEEP_STEPS = 200
LONG_STEPS = 200_000
LONG_SPIKE = 123_457  # one step whose value stands out: reachable only by zooming


def sweep_value(lr: float, seed: int, step: int) -> float:
    return 1.0 / (1.0 + step * lr) + 0.01 * seed


def sweep_runs() -> list[str]:
    return [f"lr{lr}_seed{seed}" for lr in LRS for seed in SEEDS]


def long_value(step: np.ndarray) -> np.ndarray:
    out = np.sin(step / 1000.0)
    return np.where(step == LONG_SPIKE, 50.0, out)


def write_sweep(root: Path) -> Path:
    for lr in LRS:
        for seed in SEEDS:
            run = f"lr{lr}_seed{seed}"
            with LogWriter(logdir=str(root / run)) as w:
                w.add_hparams({"lr": lr, "seed": seed, "opt": "adam" if seed else "sgd"},
                              ["loss"], walltime=500.0)
                # seed 2 logs every 3rd step: another grid, interpolated when grouped
                stride = 3 if seed == 2 else 1
                for step in range(0, SWEEP_STEPS, stride):
                    w.add_scalar("loss", sweep_value(lr, seed, step), step=step,
                                 walltime=1000.0 + step + seed)
                w.add_scalar("acc", 0.5 + lr + seed, step=0, walltime=1000.0 + seed)
    with LogWriter(logdir=str(root / "long")) as w:
        steps = np.arange(LONG_STEPS)
        values = long_value(steps)
        for step, value in zip(steps.tolist(), values.tolist()):
            w.add_scalar("signal", value, step=step, walltime=2000.0 + step * 1e-3)
    return root


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> Path:
    return write_sweep(tmp_path_factory.mktemp("sweep"))


@pytest.fixture(scope="module")
def client(sweep):
    with serving(sweep, reload_interval=0.5) as handle:
        yield Client(handle.url)
