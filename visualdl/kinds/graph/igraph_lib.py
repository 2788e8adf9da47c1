"""igraph, imported without the matplotlib it would import for drawing.

When matplotlib is installed, importing igraph imports ``matplotlib.pyplot`` as well, for
plotting the graph view never does: about 0.6 s before a model's first view (bench/graph.py
times the parse). While igraph is imported, ``import matplotlib`` is made to fail with a
``None`` entry in ``sys.modules`` (the import system's own way to block a module), so igraph
keeps its placeholder instead; the entry goes as soon as igraph is in. When matplotlib is
already imported (a training script's figures), nothing is blocked and igraph uses it.
"""

from __future__ import annotations

import sys

__all__ = ["igraph"]


def _import_without_pyplot():  # noqa: ANN202 - the igraph module
    block = "matplotlib" not in sys.modules
    if block:
        sys.modules["matplotlib"] = None  # type: ignore[assignment]
    try:
        import igraph
    finally:
        if block and sys.modules.get("matplotlib", 0) is None:
            del sys.modules["matplotlib"]
    return igraph


igraph = _import_without_pyplot()
