"""visualdl: see your training.

The public face of the package: ``LogWriter`` to record, ``LogReader`` to read back.
"""

__version__ = "0.1.0"

from visualdl.writer.log_writer import LogWriter  # noqa: E402
from visualdl.reader.log_reader import LogReader  # noqa: E402

__all__ = ["LogWriter", "LogReader", "__version__"]
