"""A small known logdir for the report tests: two runs with a 10,000-point loss holding a
spike and a dip, a short accuracy, images at two steps, a histogram, text, configs."""

from __future__ import annotations

import numpy as np
import pytest

from visualdl import LogWriter

N = 10_000
SPIKE_STEP, SPIKE = 5_000, 100.0
DIP_STEP, DIP = 7_000, -50.0


def write_logdir(root) -> None:
    for run, offset in (("a", 0.0), ("b", 1.0)):
        with LogWriter(logdir=str(root / run)) as w:
            for step in range(N):
                value = 1.0 + offset
                if run == "a" and step == SPIKE_STEP:
                    value = SPIKE
                if run == "a" and step == DIP_STEP:
                    value = DIP
                w.add_scalar("train/loss", value, step)
            for step in range(5):
                w.add_scalar("eval/acc", 0.5 + step / 10 + offset / 100, step * 10)
            w.add_image("samples", np.zeros((4, 4, 3), np.uint8), 0)
            w.add_image("samples", np.full((8, 6, 3), 200, np.uint8), 9)
            w.add_histogram("weights", np.arange(100, dtype=np.float64) + offset, 3, buckets=10)
            w.add_text("notes", f"**run {run}** <script>alert(1)</script>", 2)
            w.add_config({"optimizer": {"lr": 0.1 if run == "a" else 0.01}, "seed": 7})


@pytest.fixture(scope="session")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    write_logdir(root)
    return root
