"""The tables the table tests log: a small one with every sort of cell over two steps, and
one of 100,000 rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from visualdl import Audio, LogWriter

NAMES = ["delta", "alpha", "echo", "charlie", "bravo"]
SCORES = [0.5, 2.25, -1.0, float("nan"), 10.0]
COLORS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (255, 0, 0)]  # rows 0, 4 alike
BIG_ROWS = 100_000
RATE = 8000


def swatch(color: tuple[int, int, int]) -> np.ndarray:
    """A 6 x 8 image of one colour."""
    img = np.zeros((6, 8, 3), np.uint8)
    img[:, :] = color
    return img


def tone(frames: int) -> Audio:
    return Audio(np.sin(np.arange(frames) / 10.0).astype(np.float32) * 0.5, RATE)


def small_columns(step: int) -> dict:
    return {
        "id": list(range(len(NAMES))),
        "name": [f"{n}{step}" if step else n for n in NAMES],
        "score": SCORES,
        "ok": [True, False, True, None, False],
        "img": [swatch(c) for c in COLORS],
        "clip": [tone(800), None, None, None, tone(1600)],
    }


def write_tables(root: Path) -> Path:
    with LogWriter(logdir=str(root / "exp")) as w:
        for step in (0, 5):
            w.add_table("small", small_columns(step), step)
        ids = np.arange(BIG_ROWS)
        w.add_table("big", {"id": ids, "value": (ids * 7919 % 1000) / 10.0,
                            "label": [f"row {i}" for i in range(BIG_ROWS)]}, 1)
    return root
