"""The Lightning logger's body, shared by ``lightning.pytorch`` and the standalone
``pytorch_lightning`` (same API, different base classes: a Trainer accepts only loggers of
its own package's ``Logger``). Laid out as ``TensorBoardLogger`` lays out its runs, so a
switch keeps the folders: ``save_dir/name/version_N``."""

from __future__ import annotations

import os
from argparse import Namespace
from collections.abc import Mapping
from typing import Any

from lightning_utilities.core.rank_zero import rank_zero_only, rank_zero_warn

from visualdl.integrations.common import flat_hparams, metric_value, plain
from visualdl.writer.log_writer import LogWriter


class _Nothing:
    """What ``experiment`` is on ranks other than 0: every call does nothing."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


class VisualDLLoggerBody:
    """Lightning's logger interface over ``LogWriter`` (see the subclasses' docstrings)."""

    LOGGER_JOIN_CHAR = "-"

    def __init__(self, save_dir: str | os.PathLike = ".", name: str | None = "lightning_logs",
                 version: int | str | None = None, log_graph: bool = False, prefix: str = "",
                 **writer_options: Any) -> None:
        super().__init__()
        self._save_dir = os.fspath(save_dir)
        self._name = name or ""
        self._version = version
        self._log_graph = log_graph
        self._prefix = prefix
        self._writer_options = writer_options
        self._experiment: LogWriter | None = None
        self._hparams: dict[str, Any] = {}
        self._metric_tags: dict[str, None] = {}  # in the order first logged

    # -- where ---------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def version(self) -> int | str:
        if self._version is None:
            self._version = self._next_version()
        return self._version

    @property
    def save_dir(self) -> str:
        return self._save_dir

    @property
    def root_dir(self) -> str:
        return os.path.join(self._save_dir, self._name)

    @property
    def log_dir(self) -> str:
        version = self.version if isinstance(self.version, str) else f"version_{self.version}"
        return os.path.expanduser(os.path.expandvars(os.path.join(self.root_dir, version)))

    def _next_version(self) -> int:
        """One more than the highest ``version_N`` folder in ``root_dir``, as TensorBoardLogger."""
        try:
            names = os.listdir(self.root_dir)
        except OSError:
            return 0
        found = [int(n[8:]) for n in names if n.startswith("version_") and n[8:].isdigit()
                 and os.path.isdir(os.path.join(self.root_dir, n))]
        return max(found) + 1 if found else 0

    # -- the writer ------------------------------------------------------------------
    @property
    def experiment(self) -> LogWriter:
        """The run's ``LogWriter`` (made on first use), for what the logger has no method
        of its own for: ``logger.experiment.add_histogram(...)``, ``add_figure``, ..."""
        if rank_zero_only.rank > 0:
            return _Nothing()  # type: ignore[return-value]
        if self._experiment is None:
            self._experiment = LogWriter(logdir=self.log_dir, **self._writer_options)
        return self._experiment

    # -- what the Trainer calls --------------------------------------------------------
    @rank_zero_only
    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        """Each metric as a scalar at ``step`` (a dict value: one scalar a key, ``name/key``).
        All are checked before any is written: a value that is no number is a
        ``TypeError`` naming it, and the metrics logged before are kept."""
        values = {}
        for name, value in metrics.items():
            name = f"{self._prefix}{self.LOGGER_JOIN_CHAR}{name}" if self._prefix else name
            if isinstance(value, Mapping):
                values.update({f"{name}/{k}": metric_value(f"{name}/{k}", v)
                               for k, v in value.items()})
            else:
                values[name] = metric_value(name, value)
        step = 0 if step is None else step
        writer = self.experiment
        for tag, value in values.items():
            writer.add_scalar(tag, value, step)
            if tag not in self._metric_tags:
                self._metric_tags[tag] = None

    @rank_zero_only
    def log_hyperparams(self, params: Any, metrics: Mapping[str, Any] | None = None,
                        step: int | None = None) -> None:
        """The run's config (nested, ``add_config``) and its hyper-parameters (flattened
        to dotted keys, ``add_hparams``, with the metrics logged so far as its metrics).
        Values that are no JSON are kept as text, never refused."""
        if isinstance(params, Namespace):
            params = vars(params)
        nested = plain(params)
        if not isinstance(nested, dict):
            raise TypeError(f"log_hyperparams: params must be a dict or an argparse.Namespace,"
                            f" got {type(params).__name__}")
        if metrics:
            self.log_metrics(metrics, step)
        if not nested:
            return
        self.experiment.add_config(nested)
        self._hparams.update(flat_hparams(nested))
        self._write_hparams()

    def _write_hparams(self) -> None:
        if self._hparams:  # the last add_hparams counts: it names every metric seen
            self.experiment.add_hparams(self._hparams, list(self._metric_tags))

    @rank_zero_only
    def log_graph(self, model: Any, input_array: Any = None) -> None:
        """The model's graph (ONNX, traced on ``input_array`` or the model's
        ``example_input_array``), when the logger was made with ``log_graph=True``, as
        TensorBoardLogger; without an example input it warns and logs nothing."""
        if not self._log_graph:
            return
        from visualdl.integrations.torch_graph import onnx_bytes

        example = getattr(model, "example_input_array", None) if input_array is None \
            else input_array
        if example is None:
            rank_zero_warn("VisualDLLogger: the graph was not logged: set "
                           "`model.example_input_array` or pass `input_array`")
            return
        transfer = getattr(model, "_apply_batch_transfer_handler", None)
        if callable(transfer):  # onto the model's device, as the Trainer moves batches
            example = transfer(example)
        self.experiment.add_graph(onnx_bytes(model, example))

    @rank_zero_only
    def log_image(self, key: str, images: Any, step: int | None = None,
                  dataformats: str = "CHW") -> None:
        """An image (a tensor or array; CHW as torch's tensors are, else say
        ``dataformats``) or a list of them (``key/0``, ``key/1``, ...) at ``step``."""
        step = 0 if step is None else step
        if isinstance(images, (list, tuple)):
            for i, image in enumerate(images):
                self.experiment.add_image(f"{key}/{i}", image, step, dataformats=dataformats)
        else:
            self.experiment.add_image(key, images, step, dataformats=dataformats)

    @rank_zero_only
    def save(self) -> None:
        """Nothing to wait for: Lightning calls this after every ``log_metrics``, and a
        flush there would hold the training step until the disk has the data (on a busy
        disk, far longer than a step). The writer's thread writes every ``flush_secs``
        (a keyword of this logger, 5 s by default) and ``finalize`` writes everything."""

    @rank_zero_only
    def finalize(self, status: str) -> None:
        """The hyper-parameters again, now naming every metric logged, then the writer closed
        (all it holds written). A later ``log_*`` call opens the run again."""
        if self._experiment is None:
            return
        self._write_hparams()
        self._experiment.close()
        self._experiment = None
