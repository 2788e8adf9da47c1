"""``ActivationStats``: log what chosen layers output -- a histogram plus mean, std and the
fraction of exact zeros (dead units after a ReLU) -- through a LogWriter, via forward hooks.

Why a forward hook and host-side numpy: the statistics must not enter the autograd graph or
the traced program, and copying one activation every ``every`` calls is cheap next to the
forward pass that made it.

    stats = ActivationStats(writer, net, ["features.2", "classifier.1"], every=50)
    ...train...
    stats.remove()

Tags: ``activations/<layer>`` (histogram), ``activations/<layer>/mean``, ``.../std``,
``.../zero_fraction`` (scalars), at the step given by ``set_step`` (or counted calls).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .nn.layer import Layer
from .tensor import Tensor


class ActivationStats:
    """Hook the layers named ``layers`` (dotted names in ``net``; all of ``net``'s direct
    children when None) and log their outputs in training mode every ``every`` calls."""

    def __init__(self, writer: Any, net: Layer, layers: Iterable[str] | None = None,
                 every: int = 100, training_only: bool = True) -> None:
        named = dict(net.named_sublayers())
        names = list(layers) if layers is not None else [n for n, _ in net.named_children()]
        missing = [n for n in names if n not in named]
        if missing:
            raise KeyError(f"no sub-layers named {missing}; known: {sorted(named)}")
        self.writer, self.every, self.training_only = writer, max(1, int(every)), training_only
        self.step: int | None = None
        self._calls = {n: 0 for n in names}
        self._handles = [named[n].register_forward_hook(self._hook(n)) for n in names]

    def set_step(self, step: int) -> None:
        """Tag the next logged values with ``step`` (e.g. the global train step)."""
        self.step = int(step)

    def _hook(self, name: str):
        def hook(layer: Layer, args: tuple, out: Any) -> None:
            if self.training_only and not layer.training:
                return
            calls = self._calls[name]
            self._calls[name] = calls + 1
            if calls % self.every or not isinstance(out, Tensor):
                return
            self.log(name, out.numpy(), self.step if self.step is not None else calls)
        return hook

    def log(self, name: str, values: np.ndarray, step: int) -> None:
        """Write one activation's statistics."""
        v = np.asarray(values, dtype=np.float64)
        tag = f"activations/{name}"
        self.writer.add_histogram(tag, values, step)
        self.writer.add_scalar(f"{tag}/mean", float(v.mean()), step)
        self.writer.add_scalar(f"{tag}/std", float(v.std()), step)
        self.writer.add_scalar(f"{tag}/zero_fraction", float(np.count_nonzero(v == 0) / max(v.size, 1)), step)

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    def __enter__(self) -> ActivationStats:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()
