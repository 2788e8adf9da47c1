"""``LRScheduler``: advance the optimizer's learning-rate scheduler by step or by epoch.

Schedulers here are PaddlePaddle-style (the optimizer reads ``scheduler()`` each step and
someone calls ``scheduler.step()``); this callback is that someone. ``fit`` adds one
(``by_step=True``) when the optimizer has a scheduler and no LRScheduler callback is given.
"""

from __future__ import annotations

from .base import Callback


class LRScheduler(Callback):
    def __init__(self, by_step: bool = True, by_epoch: bool = False) -> None:
        if by_step == by_epoch:
            raise ValueError("LRScheduler steps either by_step or by_epoch, not both or neither")
        self.by_step, self.by_epoch = by_step, by_epoch

    def _scheduler(self):
        opt = getattr(self.model, "optimizer", None)
        return getattr(opt, "lr_scheduler", None)

    def on_train_batch_end(self, step: int, logs: dict | None = None) -> None:
        if self.by_step:
            sched = self._scheduler()
            if sched is not None:
                sched.step()

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.by_epoch:
            sched = self._scheduler()
            if sched is not None:
                sched.step()
