"""Learning-rate schedulers (PaddlePaddle style: the optimizer takes the scheduler as its
learning rate and reads it each step; the user, or a callback, calls ``scheduler.step()``)."""

from __future__ import annotations

import math
from typing import Any


class LRScheduler:
    """Base: ``step()`` advances ``last_epoch`` and recomputes ``last_lr``; calling the
    scheduler returns the current rate."""

    def __init__(self, learning_rate: float, last_epoch: int = -1) -> None:
        self.base_lr = float(learning_rate)
        self.last_epoch = last_epoch
        self.last_lr = self.base_lr
        self.step()

    def get_lr(self) -> float:
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        self.last_epoch = self.last_epoch + 1 if epoch is None else int(epoch)
        self.last_lr = float(self.get_lr())

    def __call__(self) -> float:
        return self.last_lr

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if isinstance(v, (int, float))}

    def set_state_dict(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    load_state_dict = set_state_dict


class StepLR(LRScheduler):
    """lr = base * gamma ** (epoch // step_size)."""

    def __init__(self, learning_rate: float, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size, self.gamma = int(step_size), float(gamma)
        super().__init__(learning_rate, last_epoch)

    def get_lr(self) -> float:
        return self.base_lr * self.gamma ** (self.last_epoch // self.step_size)


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2."""

    def __init__(self, learning_rate: float, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        self.T_max, self.eta_min = int(T_max), float(eta_min)
        super().__init__(learning_rate, last_epoch)

    def get_lr(self) -> float:
        t = min(self.last_epoch, self.T_max)
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * t / self.T_max)) / 2


class LinearWarmup(LRScheduler):
    """Ramp linearly from ``start_lr`` to ``end_lr`` over ``warmup_steps``, then follow
    ``learning_rate`` (a float or another scheduler, which then starts at its step 0)."""

    def __init__(self, learning_rate: float | LRScheduler, warmup_steps: int, start_lr: float,
                 end_lr: float, last_epoch: int = -1) -> None:
        self.after = learning_rate
        self.warmup_steps, self.start_lr, self.end_lr = int(warmup_steps), float(start_lr), float(end_lr)
        base = learning_rate.base_lr if isinstance(learning_rate, LRScheduler) else learning_rate
        super().__init__(base, last_epoch)

    def get_lr(self) -> float:
        t = self.last_epoch
        if t < self.warmup_steps:
            return self.start_lr + (self.end_lr - self.start_lr) * t / max(self.warmup_steps, 1)
        if isinstance(self.after, LRScheduler):
            self.after.step(t - self.warmup_steps)
            return self.after()
        return float(self.after)


StepDecay = StepLR
CosineAnnealingDecay = CosineAnnealingLR
