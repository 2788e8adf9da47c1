"""visualdl: see your training.

The public face of the package: ``LogWriter`` to record, ``LogReader`` to read back, and
``SummaryWriter``, torch's TensorBoard writer interface over ``LogWriter``; ``Audio`` wraps
an audio cell of ``LogWriter.add_table``; and wandb's API (``init``, ``log``, ``config``,
``run``, ``finish``, ``Image``, ...: :mod:`visualdl.tracking`), so that a W&B script runs
with ``import visualdl as wandb``.
They load on first use (PEP 562), so that ``visualdl --logdir`` does not import the
writer and a training script does not import the reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from visualdl.format.version import __version__
__all__ = ["LogWriter", "LogReader", "SummaryWriter", "Audio", "__version__"]
# the wandb-style API (visualdl.tracking); "run", "config" and "summary" are the current
# run's, so they are looked up on each use and not listed for "import *"
_TRACKING = ("init", "log", "finish", "alert", "define_metric", "watch", "unwatch", "login",
             "Image", "Histogram", "Table", "Video", "AlertLevel", "Run", "Settings")
__all__ += list(_TRACKING)

if TYPE_CHECKING:
    from visualdl.compat.summary_writer import SummaryWriter
    from visualdl.kinds.table.cells import Audio
    from visualdl.reader.log_reader import LogReader
    from visualdl.writer.log_writer import LogWriter


def __getattr__(name: str) -> Any:
    if name == "LogWriter":
        from visualdl.writer.log_writer import LogWriter

        return LogWriter
    if name == "LogReader":
        from visualdl.reader.log_reader import LogReader

        return LogReader
    if name == "SummaryWriter":
        from visualdl.compat.summary_writer import SummaryWriter

        return SummaryWriter
    if name == "Audio":  # an audio cell of LogWriter.add_table
        from visualdl.kinds.table.cells import Audio

        return Audio
    if name in _TRACKING or name in ("run", "config", "summary"):
        import visualdl.tracking as tracking

        if name == "run":
            return tracking.current()
        if name in ("config", "summary"):
            return getattr(tracking, name)()
        return getattr(tracking, name)
    if name == "convert":  # a callable module: visualdl.convert(src, dst)
        import visualdl.convert

        return visualdl.convert
    if name == "notebook":  # visualdl.notebook.display(...) after a bare "import visualdl"
        import importlib

        return importlib.import_module("visualdl.notebook")
    raise AttributeError(f"module 'visualdl' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext visualdl`` in IPython/Jupyter: adds the ``%visualdl`` magic, which shows
    the dashboard in the notebook (see :mod:`visualdl.notebook`)."""
    from visualdl.notebook import load_ipython_extension as load

    load(ipython)


def __dir__() -> list[str]:
    return sorted(__all__)
