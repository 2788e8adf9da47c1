"""Hugging Face Transformers: ``Trainer(..., callbacks=[VisualDLCallback()])``.

It logs what transformers' ``TensorBoardCallback`` logs, under the same tags (``train/loss``,
``train/learning_rate``, ``eval/<metric>``, the texts ``args`` and ``model_config``), and
adds the run's config (``add_config``: the ``TrainingArguments`` and the model's config,
nested) and hyper-parameters (``add_hparams``), so runs compare in the hparams view.
``report_to="visualdl"`` would need a change in transformers itself; with ``report_to="none"``
(or a list without "tensorboard") only this callback logs. Importing this module imports
transformers.
"""

from __future__ import annotations

import logging
import os
from typing import Any

try:
    from transformers import TrainerCallback
    from transformers.integrations.integration_utils import rewrite_logs
except ImportError as exc:  # say which extra brings it
    raise ImportError(f"visualdl.integrations.transformers needs transformers: pip install "
                      f"'visualdl[transformers]' ({exc})") from exc

from visualdl.compat.summary_writer import default_log_dir
from visualdl.integrations.common import flat_hparams, plain
from visualdl.writer.log_writer import LogWriter

__all__ = ["VisualDLCallback"]

_log = logging.getLogger(__name__)


class VisualDLCallback(TrainerCallback):
    """Log a ``transformers.Trainer`` run into ``logdir``.

    ``logdir`` defaults to ``args.logging_dir`` where the ``TrainingArguments`` have one
    (transformers 4), else ``<output_dir>/runs/<date>_<host>`` as ``TensorBoardCallback``
    names it. ``writer`` (a ``LogWriter``) is used instead of making one; other keywords go
    to ``LogWriter``. Only the main process (``state.is_world_process_zero``) logs.
    """

    def __init__(self, logdir: str | os.PathLike | None = None, writer: LogWriter | None = None,
                 **writer_options: Any) -> None:
        self.logdir = os.fspath(logdir) if logdir is not None else None
        self.writer = writer
        self._writer_options = writer_options
        self._hparams: dict[str, Any] = {}
        self._metric_tags: dict[str, None] = {}

    def _open(self, args: Any) -> LogWriter:
        if self.writer is None:
            if self.logdir is None:
                self.logdir = getattr(args, "logging_dir", None) or \
                    os.path.join(args.output_dir, default_log_dir())
            self.writer = LogWriter(logdir=self.logdir, **self._writer_options)
        return self.writer

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None,
                       **kwargs: Any) -> None:
        """The arguments and the model's config: as text (TensorBoardCallback's tags), as
        the run's config, and as its hyper-parameters."""
        if not state.is_world_process_zero:
            return
        writer = self._open(args)
        writer.add_text("args", args.to_json_string(), 0)
        config: dict[str, Any] = {"args": plain(args.to_dict())}
        model_config = getattr(model, "config", None)
        if model_config is not None:
            if hasattr(model_config, "to_json_string"):
                writer.add_text("model_config", model_config.to_json_string(), 0)
            config["model"] = plain(model_config)
        writer.add_config(config)
        self._hparams = flat_hparams(args.to_sanitized_dict())
        self._write_hparams()

    def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None,
               **kwargs: Any) -> None:
        """Numbers as scalars at the global step, text as text, under TensorBoardCallback's
        tags; anything else is left out with a warning, as TensorBoardCallback does."""
        if not state.is_world_process_zero or not logs:
            return
        writer = self._open(args)
        step = state.global_step
        for tag, value in rewrite_logs(logs).items():
            if isinstance(value, (int, float)):
                writer.add_scalar(tag, float(value), step)
                if tag not in self._metric_tags:
                    self._metric_tags[tag] = None
            elif isinstance(value, str):
                writer.add_text(tag, value, step)
            else:
                _log.warning("VisualDLCallback: %r is %s, neither a number nor text: not "
                             "logged", tag, type(value).__name__)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """The hyper-parameters again, naming the metrics logged; the writer closed."""
        if self.writer is None:
            return
        self._write_hparams()
        self.writer.close()
        self.writer = None

    def _write_hparams(self) -> None:
        if self._hparams:  # the last add_hparams counts: it names every metric seen
            self.writer.add_hparams(self._hparams, list(self._metric_tags))
