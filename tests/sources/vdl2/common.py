"""The committed VisualDL 2.5.3 fixtures (see make_fixtures.py) and what went into them."""

from __future__ import annotations

import io
import json
import shutil
import wave
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LOGS = FIXTURES / "logs"
VALUES = json.loads((FIXTURES / "values.json").read_text(encoding="utf-8"))
TRAIN = VALUES["train"]
T0 = TRAIN["wall_time_ms"]["t0"] / 1000.0


def copy_logs(dst: Path) -> Path:
    """A writable copy of the fixture logdir."""
    shutil.copytree(LOGS, dst)
    return dst


def f32(values: list) -> list:
    """Values as VisualDL stored them (a float32 field), back as Python floats."""
    return np.asarray(values, np.float32).astype(np.float64).tolist()


def png_pixels(data: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(data)))


def wav_samples(data: bytes) -> tuple[int, np.ndarray]:
    """(sample rate, samples as floats in [-1, 1]) of 16-bit mono WAV bytes."""
    with wave.open(io.BytesIO(data)) as w:
        rate, frames = w.getframerate(), w.readframes(w.getnframes())
    return rate, np.frombuffer(frames, "<i2") / 32767.0
