"""``ModelCheckpoint``: save the model (and optimizer) every ``save_freq`` epochs and at the
end of training, through ``Model.save`` (so checkpoints are ``vf.save`` files that never
unpickle)."""

from __future__ import annotations

import os

from .base import Callback


class ModelCheckpoint(Callback):
    """Writes ``<save_dir>/<epoch>.vfparams`` (+ ``.vfopt``) every ``save_freq`` epochs and
    ``<save_dir>/final.*`` when training ends. ``save_dir`` defaults to ``fit(save_dir=...)``;
    with neither, nothing is saved."""

    def __init__(self, save_freq: int = 1, save_dir: str | None = None) -> None:
        self.save_freq = max(1, int(save_freq))
        self.save_dir = save_dir

    def _dir(self) -> str | None:
        return self.save_dir or self.params.get("save_dir")

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        directory = self._dir()
        if directory and (epoch + 1) % self.save_freq == 0:
            self.model.save(os.path.join(directory, str(epoch)))

    def on_train_end(self, logs: dict | None = None) -> None:
        directory = self._dir()
        if directory:
            self.model.save(os.path.join(directory, "final"))
