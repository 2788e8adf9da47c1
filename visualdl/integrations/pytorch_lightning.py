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
    """``visualdl.integrations.lightning.VisualDLLogger`` for ``pytorch_lightning``'s
    Trainer (see that class for what it logs).

    >>> trainer = pytorch_lightning.Trainer(logger=VisualDLLogger("logs", name="mnist"))
    """
