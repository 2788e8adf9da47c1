"""``EarlyStopping``: stop ``fit`` when an evaluation metric stops improving."""

from __future__ import annotations

import math
import os
import warnings

from .base import Callback


class EarlyStopping(Callback):
    """Watch ``monitor`` (an eval log name: ``loss``, ``acc``, ...) after each evaluation;
    after ``patience`` evaluations without an improvement larger than ``min_delta`` set
    ``model.stop_training``. ``mode`` is ``min``, ``max`` or ``auto`` (max for names
    containing "acc", else min). With ``save_best_model`` and a ``save_dir`` the best model
    is saved as ``<save_dir>/best_model``."""

    def __init__(self, monitor: str = "loss", mode: str = "auto", patience: int = 0,
                 verbose: int = 1, min_delta: float = 0.0, baseline: float | None = None,
                 save_best_model: bool = True) -> None:
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"mode must be auto, min or max, got {mode!r}")
        self.monitor, self.patience, self.verbose = monitor, int(patience), int(verbose)
        self.min_delta, self.baseline = abs(float(min_delta)), baseline
        self.save_best_model = save_best_model
        self.maximize = mode == "max" or (mode == "auto" and "acc" in monitor)
        self.best = -math.inf if self.maximize else math.inf
        self.wait = 0
        self.stopped_epoch: int | None = None

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.wait = 0
        self.best = self.baseline if self.baseline is not None else (
            -math.inf if self.maximize else math.inf)
        self.stopped_epoch = None
        self._epoch = 0
        if not self.params.get("eval"):
            warnings.warn("EarlyStopping watches evaluation results, but fit() got no eval_data",
                          RuntimeWarning, stacklevel=2)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self._epoch = epoch

    def _improved(self, value: float) -> bool:
        if self.maximize:
            return value > self.best + self.min_delta
        return value < self.best - self.min_delta

    def on_eval_end(self, logs: dict | None = None) -> None:
        if self.params.get("mode") != "train":
            return  # a standalone evaluate() does not count
        value = (logs or {}).get(self.monitor)
        if value is None:
            warnings.warn(f"EarlyStopping: monitor {self.monitor!r} is not among the eval logs "
                          f"{sorted(logs or {})}", RuntimeWarning, stacklevel=2)
            return
        value = float(value[0] if isinstance(value, (list, tuple)) else value)
        if self._improved(value):
            self.best, self.wait = value, 0
            directory = self.params.get("save_dir")
            if self.save_best_model and directory:
                self.model.save(os.path.join(directory, "best_model"))
            return
        self.wait += 1
        if self.wait > self.patience:
            self.model.stop_training = True
            self.stopped_epoch = self._epoch
            if self.verbose:
                print(f"EarlyStopping: {self.monitor} has not improved on {self.best:.4f} for "
                      f"{self.wait} evaluations; stopping after epoch {self._epoch + 1}")
