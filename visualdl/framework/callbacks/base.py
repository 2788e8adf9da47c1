"""``Callback``: the hooks ``Model.fit/evaluate/predict`` call, and ``CallbackList``, which
calls them on several callbacks in order.

Order of calls in ``fit`` (eval only on epochs where it runs)::

    on_train_begin
      on_epoch_begin(epoch)
        on_train_batch_begin(step) / on_train_batch_end(step, logs)   (every batch)
      on_epoch_end(epoch, logs)
      on_eval_begin
        on_eval_batch_begin(step) / on_eval_batch_end(step, logs)
      on_eval_end(logs)
    on_train_end(logs)

``logs`` are plain dicts of Python numbers: the batch's ``loss`` and metric values (train
batches), the epoch means (``on_epoch_end``), or the evaluation's results (``on_eval_end``).
A callback reaches the model through ``self.model`` (its ``network``, ``optimizer`` and the
``batch`` being processed) and the run's settings through ``self.params``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..training import Model

HOOKS = (
    "on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
    "on_train_batch_begin", "on_train_batch_end", "on_eval_begin", "on_eval_end",
    "on_eval_batch_begin", "on_eval_batch_end", "on_predict_begin", "on_predict_end",
    "on_predict_batch_begin", "on_predict_batch_end",
)


class Callback:
    """Base class: override the hooks you need; every hook does nothing by default."""

    model: Model | None = None
    params: dict[str, Any] = {}

    def set_model(self, model: Model) -> None:
        self.model = model

    def set_params(self, params: dict[str, Any]) -> None:
        """``params``: ``batch_size``, ``epochs``, ``steps`` (per epoch, None if unknown),
        ``verbose``, ``metrics`` (log names: ``loss`` then each metric's), ``log_freq``,
        ``save_dir``, ``eval`` (whether fit evaluates), ``mode`` (train/eval/predict)."""
        self.params = params

    def on_train_begin(self, logs: dict | None = None) -> None: ...
    def on_train_end(self, logs: dict | None = None) -> None: ...
    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None: ...
    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None: ...
    def on_train_batch_begin(self, step: int, logs: dict | None = None) -> None: ...
    def on_train_batch_end(self, step: int, logs: dict | None = None) -> None: ...
    def on_eval_begin(self, logs: dict | None = None) -> None: ...
    def on_eval_end(self, logs: dict | None = None) -> None: ...
    def on_eval_batch_begin(self, step: int, logs: dict | None = None) -> None: ...
    def on_eval_batch_end(self, step: int, logs: dict | None = None) -> None: ...
    def on_predict_begin(self, logs: dict | None = None) -> None: ...
    def on_predict_end(self, logs: dict | None = None) -> None: ...
    def on_predict_batch_begin(self, step: int, logs: dict | None = None) -> None: ...
    def on_predict_batch_end(self, step: int, logs: dict | None = None) -> None: ...


class CallbackList:
    """Calls each hook on every callback, in list order. Hooks that no callback overrides
    are skipped without a call, so an empty hook costs nothing per batch."""

    def __init__(self, callbacks: Iterable[Callback], model: Model, params: dict[str, Any]):
        self.callbacks = list(callbacks)
        for cb in self.callbacks:
            cb.set_model(model)
            cb.set_params(params)
        for hook in HOOKS:
            bound = [getattr(cb, hook) for cb in self.callbacks
                     if getattr(type(cb), hook) is not getattr(Callback, hook)]
            setattr(self, hook, _fan_out(bound))

    def __iter__(self):
        return iter(self.callbacks)


def _fan_out(bound: list):
    if not bound:
        return lambda *args, **kwargs: None
    if len(bound) == 1:
        return bound[0]

    def call(*args: Any, **kwargs: Any) -> None:
        for fn in bound:
            fn(*args, **kwargs)

    return call
