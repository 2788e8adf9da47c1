"""Reading visualdl logs back: ``LogReader`` and the values it returns."""

from visualdl.reader.events import (  # noqa: F401
    BLOB_KINDS, KINDS, BlobRef, CurveEvent, HistogramEvent, HParamsEvent, Scalars, TextEvent,
)
from visualdl.reader.log_reader import LogReader, load_embedding  # noqa: F401
