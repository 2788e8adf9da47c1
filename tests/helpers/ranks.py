"""A logdir with a data-parallel run, written in-process by ranked ``LogWriter``s, and a
run of one process beside it: the fixture of the rank-aware reader, API and browser tests.

Run ``dp``: ``WORLD`` ranks, ``STEPS`` steps; rank r logs ``loss = rank_value(r, step)``
(each rank's curve lies apart from the others); two elastic restarts (``RESIZES``, the
first recorded by two ranks) and two checkpoints (``CHECKPOINTS``). Run ``one``: a single
process logging ``loss = step``."""

from __future__ import annotations

from pathlib import Path

from visualdl import LogWriter

WORLD = 3
STEPS = 20
T0 = 1_700_000_000.0
#: (restart, step resumed at, world size after it)
RESIZES = [(1, 8, 2), (2, 14, 2)]  # shrunk to 2, then a worker replaced
#: (step, path)
CHECKPOINTS = [(5, "ckpt/dp/step_5"), (15, "ckpt/dp/step_15")]


def rank_value(rank: int, step: int) -> float:
    return 100.0 * rank + step


def write_ranked(root: Path) -> Path:
    for rank in range(WORLD):
        with LogWriter(logdir=str(root / "dp"), rank=rank, world_size=WORLD,
                       system_metrics=False) as w:
            for step in range(STEPS):
                w.add_scalar("loss", rank_value(rank, step), step, walltime=T0 + step + rank / 10)
            for restart, step, size in RESIZES:
                if rank == 0 or (rank == 1 and restart == 1):  # the same restart twice
                    w.add_resize(size, step, restart, walltime=T0 + step)
            if rank == 0:
                for step, path in CHECKPOINTS:
                    w.add_checkpoint(path, step, walltime=T0 + step + 0.5)
    with LogWriter(logdir=str(root / "one"), system_metrics=False) as w:
        for step in range(STEPS):
            w.add_scalar("loss", float(step), step, walltime=T0 + step)
    return root
