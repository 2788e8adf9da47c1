"""Keras 3 (any backend; torch needs no TensorFlow):
``model.fit(..., callbacks=[VisualDLCallback("logs")])``.

Laid out as Keras' ``TensorBoard`` callback lays out its logs, so dashboards and habits
carry over: a ``train`` and a ``validation`` run under ``logdir``, scalars ``epoch_<metric>``
(``val_`` dropped in the validation run) and ``batch_<metric>``, ``epoch_learning_rate``,
weight histograms ``<weight path>/histogram``. Importing this module imports keras.
"""

from __future__ import annotations

import os
from typing import Any

try:
    import keras
except ImportError as exc:  # say which extra brings it
    raise ImportError(f"visualdl.integrations.keras needs Keras 3: pip install "
                      f"'visualdl[keras]' ({exc})") from exc

from visualdl.integrations.common import metric_value, plain
from visualdl.writer.log_writer import LogWriter

__all__ = ["VisualDLCallback"]


class VisualDLCallback(keras.callbacks.Callback):
    """Log a ``model.fit`` run into ``logdir/train`` and ``logdir/validation``.

    ``update_freq``: ``"epoch"`` logs metrics at the end of each epoch; ``"batch"`` also
    after every batch, an integer N after every Nth (the global batch count is the step),
    as Keras' TensorBoard callback. ``histogram_freq``: every how many epochs the weights'
    histograms are logged (0: never). At the start of ``fit`` the model's config (and the
    optimizer's) is logged with ``add_config``; values that are no JSON are kept as text.
    Other keywords go to ``LogWriter``.
    """

    def __init__(self, logdir: str | os.PathLike = "logs", update_freq: str | int = "epoch",
                 histogram_freq: int = 0, **writer_options: Any) -> None:
        super().__init__()
        if update_freq == "batch":
            update_freq = 1
        if update_freq != "epoch" and (isinstance(update_freq, bool) or
                                       not isinstance(update_freq, int) or update_freq < 1):
            raise ValueError(f"update_freq must be 'epoch', 'batch' or a positive integer, "
                             f"got {update_freq!r}")
        if isinstance(histogram_freq, bool) or not isinstance(histogram_freq, int) or \
                histogram_freq < 0:
            raise ValueError(f"histogram_freq must be a non-negative integer, got "
                             f"{histogram_freq!r}")
        self.logdir = os.fspath(logdir)
        self.update_freq = update_freq
        self.histogram_freq = histogram_freq
        self._writer_options = writer_options
        self._writers: dict[str, LogWriter] = {}
        self._batch = 0  # batches trained, over every epoch: the step of batch scalars

    def _writer(self, run: str) -> LogWriter:
        writer = self._writers.get(run)
        if writer is None:
            writer = LogWriter(logdir=os.path.join(self.logdir, run), **self._writer_options)
            self._writers[run] = writer
        return writer

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._batch = 0
        self._writer("train").add_config(self._config())

    def _config(self) -> dict[str, Any]:
        """The model's and the optimizer's config; a model that cannot say its config
        (a subclass without ``get_config``) is named by its class."""
        model = self.model
        try:
            config: dict[str, Any] = {"model": plain(model.get_config())}
        except (NotImplementedError, TypeError, ValueError) as exc:
            config = {"model": {"class_name": type(model).__name__,
                                "get_config": f"not available: {exc}"}}
        optimizer = getattr(model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "get_config"):
            config["optimizer"] = plain(optimizer.get_config())
        return config

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._batch += 1
        if self.update_freq == "epoch" or self._batch % self.update_freq or not logs:
            return
        writer = self._writer("train")
        values = {f"batch_{k}": metric_value(k, v) for k, v in logs.items()}
        rate = self._learning_rate()
        if rate is not None:
            values["batch_learning_rate"] = rate
        for tag, value in values.items():
            writer.add_scalar(tag, value, self._batch)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs = logs or {}
        train = {f"epoch_{k}": metric_value(k, v) for k, v in logs.items()
                 if not k.startswith("val_")}
        rate = self._learning_rate()
        if rate is not None:
            train["epoch_learning_rate"] = rate
        val = {f"epoch_{k[4:]}": metric_value(k, v) for k, v in logs.items()
               if k.startswith("val_")}
        for run, values in (("train", train), ("validation", val)):
            if values:
                writer = self._writer(run)
                for tag, value in values.items():
                    writer.add_scalar(tag, value, epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def _learning_rate(self) -> float | None:
        optimizer = getattr(self.model, "optimizer", None)
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # LossScaleOptimizer
        rate = getattr(optimizer, "learning_rate", None)
        if rate is None:
            return None
        try:
            return float(rate)  # a variable or a 0-d tensor: several times cheaper than below
        except (TypeError, ValueError):
            return float(keras.ops.convert_to_numpy(rate))

    def _log_weights(self, epoch: int) -> None:
        writer = self._writer("train")
        for layer in self.model.layers:
            for weight in layer.weights:
                values = keras.ops.convert_to_numpy(weight)
                writer.add_histogram(f"{weight.path.replace(':', '_')}/histogram", values,
                                     epoch)

    def on_train_end(self, logs: dict | None = None) -> None:
        """Every writer closed: all logged is on disk when ``fit`` returns."""
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
