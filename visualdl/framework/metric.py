"""Metrics for ``Model.prepare(metrics=[...])`` (``vf.metric``), in PaddlePaddle's shape:
``compute(pred, *labels)`` turns one batch's outputs into what ``update`` takes,
``update(...)`` adds the batch and returns its value, ``accumulate()`` gives the value over
every batch since ``reset()``, ``name()`` gives the log names.

Metrics work on host (numpy) arrays: they are tiny next to a training step, and keeping them
off the autograd graph means a metric can never change gradients.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .tensor import Tensor


def _host(value: Any) -> np.ndarray:
    return value.numpy() if isinstance(value, Tensor) else np.asarray(value)


class Metric:
    """Base class. Subclasses implement ``update``, ``accumulate``, ``reset`` and ``name``."""

    def compute(self, pred: Any, *labels: Any) -> tuple:
        """Prepare one batch for ``update`` (default: everything as numpy arrays)."""
        return (_host(pred),) + tuple(_host(label) for label in labels)

    def update(self, *args: Any) -> Any:
        raise NotImplementedError

    def accumulate(self) -> Any:
        raise NotImplementedError

    def reset(self) -> None:
        raise NotImplementedError

    def name(self) -> list[str]:
        raise NotImplementedError


class Accuracy(Metric):
    """Top-k classification accuracy of (N, C) scores against (N,) or (N, 1) labels.

    ``Accuracy()`` logs ``acc``; ``Accuracy(topk=(1, 5))`` logs ``acc_top1`` and ``acc_top5``
    (PaddlePaddle's names). ``update`` returns the batch's value(s).
    """

    def __init__(self, topk: int | Sequence[int] = (1,), name: str | None = None) -> None:
        self.topk = (int(topk),) if isinstance(topk, (int, np.integer)) else tuple(int(k) for k in topk)
        if not self.topk or min(self.topk) < 1:
            raise ValueError(f"topk must hold positive integers, got {topk!r}")
        self.maxk = max(self.topk)
        self._name = name or "acc"
        self.reset()

    def compute(self, pred: Any, *labels: Any) -> tuple[np.ndarray]:
        """A (N, len(topk)) 0/1 array: whether the label is among the top-k scores."""
        scores = _host(pred)
        label = _host(labels[0]).reshape(-1)
        if scores.ndim != 2 or scores.shape[0] != label.shape[0]:
            raise ValueError(f"Accuracy expects (N, C) scores and N labels, got {scores.shape} "
                             f"and {label.shape}")
        k = min(self.maxk, scores.shape[1])
        if k == 1:
            top = scores.argmax(axis=1)[:, None]
        else:
            part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
            order = np.take_along_axis(-scores, part, axis=1).argsort(axis=1, kind="stable")
            top = np.take_along_axis(part, order, axis=1)
        hit = top == label[:, None]
        return (np.stack([hit[:, :kk].any(axis=1) for kk in self.topk], axis=1),)

    def update(self, correct: Any, *_: Any) -> float | list[float]:
        correct = _host(correct)
        n = correct.shape[0]
        sums = correct.sum(axis=0).astype(np.float64)
        self.total += sums
        self.count += n
        values = (sums / max(n, 1)).tolist()
        return values[0] if len(values) == 1 else values

    def accumulate(self) -> float | list[float]:
        values = (self.total / max(self.count, 1)).tolist()
        return values[0] if len(values) == 1 else values

    def reset(self) -> None:
        self.total = np.zeros(len(self.topk))
        self.count = 0

    def name(self) -> list[str]:
        if len(self.topk) == 1 and self.topk[0] == 1:
            return [self._name]
        return [f"{self._name}_top{k}" for k in self.topk]


__all__ = ["Accuracy", "Metric"]
