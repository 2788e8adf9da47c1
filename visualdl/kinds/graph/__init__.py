"""Model graphs: ONNX bytes, and the graph view's component.

``parse`` turns ONNX into plain data, ``hierarchy`` groups nodes by name scope, ``layout``
lays each group out with igraph's Sugiyama layout, ``view`` composes what is visible for a
collapse state, ``document`` answers the API's questions about one model, and ``store``
knows where models come from (``add_graph`` logs, ``--model`` files, uploads: the last two
are no record kind, so the component is not only the reader's).

The names below load on first use, so that importing the kind (the registry does) does not
import onnx and igraph.
"""

from __future__ import annotations

import importlib
from typing import Any

from visualdl.kinds.spec import Kind

KIND = Kind("graph", __name__, message="graph", blob=True, views=("graph",))

_WHERE = {
    "GraphDocument": "document",
    "Options": "measure",
    "ModelError": "errors",
    "parse_bytes": "parse",
    "parse_model": "parse",
    "parse_path": "parse",
    "ModelStore": "store",
}
__all__ = sorted(["KIND", *_WHERE])


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
