"""visualdl: see your training.

The public face of the package: ``LogWriter`` to record, ``LogReader`` to read back, and
``SummaryWriter``, torch's TensorBoard writer interface over ``LogWriter``; ``Audio`` wraps
an audio cell of ``LogWriter.add_table``.
They load on first use (PEP 562), so that ``visualdl --logdir`` does not import the
writer and a training script does not import the reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from visualdl.format.version import __version__
__all__ = ["LogWriter", "LogReader", "SummaryWriter", "Audio", "__version__"]

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
