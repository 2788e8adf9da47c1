"""PyTorch Lightning as the standalone ``pytorch_lightning`` package (2.x):
``Trainer(logger=VisualDLLogger("logs"))``.

Importing this module imports ``pytorch_lightning``; ``visualdl.integrations.lightning``
is the same logger for ``lightning.pytorch`` (a Trainer takes loggers of its own package).
"""

from __future__ import annotations

try:
    from pytorch_lightning.loggers import Logger
except ImportError as exc:  # say which extra brings it
    raise ImportError(f"visualdl.integrations.pytorch_lightning needs pytorch_lightning 2: "
                      f"pip install pytorch-lightning ({exc})") from exc

from visualdl.integrations._lightning_logger import VisualDLLoggerBody

__all__ = ["VisualDLLogger"]


class VisualDLLogger(VisualDLLoggerBody, Logger):
    """Log a Lightning run into ``save_dir/name/version_N`` (TensorBoardLogger's layout).

    - ``self.log(...)`` in a LightningModule -> scalars (``log_metrics``);
    - ``self.save_hyperparameters()`` -> the run's config (nested) and its hyper-parameters
      (flattened), which the hparams view compares across runs;
    - ``log_graph=True`` and ``example_input_array`` -> the model's graph (ONNX);
    - ``log_image(key, images, step)``, and ``experiment``: the run's ``LogWriter``.

    ``prefix`` is put before every metric name; other keywords (``flush_secs``,
    ``system_metrics``, ...) go to ``LogWriter``.

    >>> trainer = pytorch_lightning.Trainer(logger=VisualDLLogger("logs", name="mnist"))
    """
