"""Reading visualdl logs back: ``LogReader`` and the values it returns.

Names load on first use (PEP 562): the kinds' units import ``visualdl.sources.values``, and
that must not pull in the whole reader. ``KINDS`` and ``BLOB_KINDS`` come from the registry
of kinds (built-in and plugins).
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "LogReader": "visualdl.reader.log_reader",
    "BlobRef": "visualdl.sources.values",
    "Scalars": "visualdl.sources.values",
    "CurveEvent": "visualdl.kinds.curves",
    "HistogramEvent": "visualdl.kinds.histogram.read",
    "HParamsEvent": "visualdl.kinds.hparams.read",
    "TextEvent": "visualdl.kinds.text.read",
    "load_embedding": "visualdl.kinds.embedding.read",
    "load_sprite": "visualdl.kinds.embedding.sprite",
    "Boxes": "visualdl.kinds.image.boxes",
    "load_boxes": "visualdl.kinds.image.boxes",
}
__all__ = sorted([*_WHERE, "KINDS", "BLOB_KINDS"])


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    if name in ("KINDS", "BLOB_KINDS"):
        from visualdl.kinds import registry

        return registry.names() if name == "KINDS" else registry.blob_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
