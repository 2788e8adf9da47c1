"""Runs with configs for the config tests: what each run logged, to check answers against."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from visualdl import LogWriter


@dataclasses.dataclass
class Optim:
    name: str = "adam"
    lr: float = 0.001


@dataclasses.dataclass
class Model:
    depth: int = 12
    layers: list = dataclasses.field(default_factory=lambda: [64, 32])


@dataclasses.dataclass
class Train:
    model: Model = dataclasses.field(default_factory=Model)
    optim: Optim = dataclasses.field(default_factory=Optim)
    seed: int = 0


LOSSES = {"a": [4.0, 2.0, 1.0, 1.5], "b": [3.0, 2.5, 0.5, 0.75], "c": [5.0, 4.0, 3.5, 3.25]}
ACCS = {"a": [0.1, 0.5, 0.4], "b": [0.2, 0.3, 0.9], "c": [0.6, 0.2, 0.1]}


def write_config_runs(logdir: Path) -> Path:
    """Runs ``a`` (a dataclass, then a Namespace merged over it), ``b`` (a YAML file), ``c``
    (a nested dict) with ``loss`` and ``eval/acc`` scalars, and ``hp`` (only add_hparams)."""
    with LogWriter(logdir=str(logdir / "a")) as w:
        w.add_config(Train())
        w.add_config(argparse.Namespace(seed=1, note="first"))
        _scalars(w, "a")
    yaml_path = logdir / "b.yaml"
    yaml_path.write_text("model:\n  depth: 24\n  layers: [64, 32]\noptim:\n  name: sgd\n"
                         "  lr: 0.001\nseed: 1\n", encoding="utf-8")
    with LogWriter(logdir=str(logdir / "b")) as w:
        w.add_config(str(yaml_path))
        _scalars(w, "b")
    with LogWriter(logdir=str(logdir / "c")) as w:
        w.add_config({"model": {"depth": 12, "layers": [64, 32, 16]},
                      "optim": {"name": "adam", "lr": 0.01}, "seed": 1})
        w.add_hparams({"seed": 7, "batch": 32}, ["loss"])  # config's seed wins
        _scalars(w, "c")
    with LogWriter(logdir=str(logdir / "hp")) as w:
        w.add_hparams({"optim.lr": 0.1, "opt": "adam", "layers": 3}, ["loss"])
        w.add_scalar("loss", 1.0, 0)
    (logdir / "b.json").write_text(json.dumps({"x": 1}), encoding="utf-8")
    return logdir


def _scalars(w: LogWriter, run: str) -> None:
    for step, value in enumerate(LOSSES[run]):
        w.add_scalar("loss", value, step * 10)
    for step, value in enumerate(ACCS[run]):
        w.add_scalar("eval/acc", value, step * 10 + 5)
