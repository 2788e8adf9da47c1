"""Write the VisualDL 2.x fixtures under ``tests/sources/vdl2/fixtures/`` with VisualDL 2.5.3 itself.

Run it in a venv of its own that has ``visualdl==2.5.3`` (and matplotlib for add_figure)::

    /work/main/.bench/venvs/visualdl-2.5.3/bin/python tests/sources/vdl2/make_fixtures.py

The logs are committed (a few tens of KB), so the tests need no VisualDL; ``values.json``
beside them holds what went in (and what VisualDL computed from it, for PR/ROC curves and
histograms), so the tests compare values read back with real values, not with our reader.

Layout: ``logs/train`` holds two files written by two writer sessions (training resumed at
step 10: VisualDL itself shows only the newer file); ``logs/eval`` one more session. Every
kind VisualDL 2.5.3 writes is there except ``add_graph``, which needs PaddlePaddle.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import numpy as np

# VisualDL 2.5.3's PR/ROC code calls np.float, which numpy removed in 1.24.
np.float = float  # type: ignore[attr-defined]

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import visualdl  # noqa: E402
from visualdl import LogWriter  # noqa: E402
from visualdl.component.base_component import compute_curve, compute_roc_curve  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")
T0 = 1_700_000_000_000  # wall times in milliseconds, as VisualDL writes them


def _wall(step: int) -> int:
    return T0 + 1000 * step


def main() -> int:
    assert visualdl.__version__ == "2.5.3", f"needs VisualDL 2.5.3, not {visualdl.__version__}"
    shutil.rmtree(OUT, ignore_errors=True)
    logs = os.path.join(OUT, "logs")
    rng = np.random.default_rng(12)
    values: dict = {"writer": f"visualdl {visualdl.__version__}", "train": {}, "eval": {}}
    train = values["train"]

    # -- session 1: steps 0..9, every kind -------------------------------------------------
    loss = [float(np.float32(1.0 / (1 + s))) for s in range(20)]
    acc = [float(np.float32(s / 20)) for s in range(20)]
    images = {s: rng.integers(0, 256, (6, 8, 3), dtype=np.uint8) for s in (0, 5, 12)}
    gray = rng.integers(0, 256, (5, 4), dtype=np.uint8)
    audio = np.round(np.sin(np.arange(160) / 8.0) * 0.5, 4)
    hist_values = {s: rng.normal(s, 1.0, 200) for s in (0, 5, 12)}
    labels = rng.integers(0, 2, 40)
    predictions = np.round(np.clip(labels * 0.4 + rng.random(40) * 0.6, 0, 1), 3)
    mat = np.round(rng.normal(0, 1, (6, 3)), 4)
    meta = [f"p{i}" for i in range(6)]
    text = {0: "hello **world**", 5: "第二步 step five"}
    with LogWriter(logdir=os.path.join(logs, "train"), file_name="vdlrecords.1700000000.log",
                   display_name="train-session") as w:
        for s in range(10):
            w.add_scalar("loss", loss[s], s, walltime=_wall(s))
            w.add_scalar("metrics/acc", acc[s], s, walltime=_wall(s))
            w.add_scalars("lr", {"warm": 0.1 * s, "cos": 0.05 * s}, s, walltime=_wall(s))
        for s in (0, 5):
            w.add_image("sample", images[s], s, walltime=_wall(s))
            w.add_histogram("weights", hist_values[s], s, walltime=_wall(s), buckets=10)
            w.add_text("note", text[s], s, walltime=_wall(s))
        w.add_image("gray", gray, 3, walltime=_wall(3), dataformats="HW")
        fig = plt.figure(figsize=(1, 1), dpi=20)
        plt.plot([0, 1], [1, 0])
        w.add_figure("figure", fig, 4, walltime=_wall(4))
        w.add_audio("wave", audio, 2, sample_rate=8000, walltime=_wall(2))
        w.add_pr_curve("pr", labels, predictions, 3, walltime=_wall(3), num_thresholds=11)
        w.add_roc_curve("roc", labels, predictions, 3, walltime=_wall(3), num_thresholds=11)
        w.add_embeddings("emb", mat=mat, metadata=meta, walltime=_wall(1))
        w.add_hparams({"lr": 0.01, "layers": 3, "opt": "adam"}, ["loss", "metrics/acc"],
                      walltime=_wall(0))
    # -- session 2: resumed at step 10 ------------------------------------------------------
    with LogWriter(logdir=os.path.join(logs, "train"), file_name="vdlrecords.1700000100.log") as w:
        for s in range(10, 20):
            w.add_scalar("loss", loss[s], s, walltime=_wall(s))
            w.add_scalar("metrics/acc", acc[s], s, walltime=_wall(s))
        w.add_image("sample", images[12], 12, walltime=_wall(12))
        w.add_histogram("weights", hist_values[12], 12, walltime=_wall(12), buckets=10)
    with LogWriter(logdir=os.path.join(logs, "eval"), file_name="vdlrecords.1700000050.log") as w:
        for s in range(0, 20, 5):
            w.add_scalar("loss", 2 * loss[s], s, walltime=_wall(s))

    pr = compute_curve(labels, predictions, 11)
    roc = compute_roc_curve(labels, predictions, 11)
    train.update({
        "wall_time_ms": {"t0": T0, "per_step": 1000},
        "scalars": {"loss": loss, "metrics/acc": acc,
                    "lr/warm": [0.1 * s for s in range(10)],
                    "lr/cos": [0.05 * s for s in range(10)]},
        "images": {str(s): a.tolist() for s, a in images.items()},
        "gray": {"step": 3, "pixels": gray.tolist()},
        "figure": {"step": 4, "size": [20, 20]},
        "audio": {"step": 2, "sample_rate": 8000, "samples": audio.tolist()},
        "histograms": {str(s): np.histogram(v, bins=10)[0].tolist() for s, v in
                       hist_values.items()},
        "histogram_edges": {str(s): np.histogram(v, bins=10)[1].tolist() for s, v in
                            hist_values.items()},
        "text": {str(s): t for s, t in text.items()},
        "pr_curve": {"step": 3, **pr},
        "roc_curve": {"step": 3, **{k: v for k, v in roc.items()}},
        "embedding": {"matrix": mat.tolist(), "metadata": meta},
        "hparams": {"hparams": {"lr": 0.01, "layers": 3, "opt": "adam"},
                    "metrics": ["loss", "metrics/acc"]},
    })
    values["eval"]["scalars"] = {"loss": [2 * loss[s] for s in range(0, 20, 5)],
                                 "steps": list(range(0, 20, 5))}
    with open(os.path.join(OUT, "values.json"), "w", encoding="utf-8") as f:
        json.dump(values, f, indent=1, ensure_ascii=False, default=_plain)
    total = sum(os.path.getsize(os.path.join(d, n)) for d, _, names in os.walk(OUT)
                for n in names)
    print(f"wrote {OUT} ({total} bytes)")
    return 0


def _plain(obj: object) -> object:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(type(obj).__name__)


if __name__ == "__main__":
    sys.exit(main())
