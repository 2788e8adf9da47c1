"""``ModelCheckpoint``: save the model (and optimizer) every ``save_freq`` epochs and at the
end of training, through ``Model.save`` (so checkpoints are ``vf.save`` files that never
unpickle).

In data-parallel training only rank 0 writes (the replicas are equal: every rank writing
the same files would race), and each checkpoint is reported in ``Model.checkpoints`` with
the step it was saved at, which the VisualDL callback logs (the run's list of checkpoints).
"""

from __future__ import annotations

import os
from typing import Any

from .base import Callback
from .visualdl import process_rank


def gather_optimizer_state(model: Any) -> None:
    """A sharded optimizer's state made whole on every rank (``consolidate_state_dict``, a
    collective: every rank calls this at the same point, before rank 0 saves); an optimizer
    without one has nothing to gather."""
    consolidate = getattr(model.optimizer, "consolidate_state_dict", None)
    if consolidate is not None:
        consolidate()


class ModelCheckpoint(Callback):
    """Writes ``<save_dir>/<epoch>.vfparams`` (+ ``.vfopt``) every ``save_freq`` epochs and
    ``<save_dir>/final.*`` when training ends. ``save_dir`` defaults to ``fit(save_dir=...)``;
    with neither, nothing is saved."""

    def __init__(self, save_freq: int = 1, save_dir: str | None = None) -> None:
        self.save_freq = max(1, int(save_freq))
        self.save_dir = save_dir
        self.step = 0

    def _dir(self) -> str | None:
        return self.save_dir or self.params.get("save_dir")

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.step = 0

    def on_train_batch_end(self, step: int, logs: dict | None = None) -> None:
        self.step += 1

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        directory = self._dir()
        if directory and (epoch + 1) % self.save_freq == 0:
            self._save(os.path.join(directory, str(epoch)))

    def on_train_end(self, logs: dict | None = None) -> None:
        directory = self._dir()
        if directory:
            self._save(os.path.join(directory, "final"))

    def _save(self, path: str) -> None:
        gather_optimizer_state(self.model)
        if process_rank() != 0:  # as the VisualDL callback decides who logs checkpoints
            return
        self.model.save(path)
        self.model.checkpoints.append({"path": os.path.abspath(path + ".vfparams"),
                                       "step": self.step})
