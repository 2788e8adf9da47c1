"""A dashboard as one self-contained HTML file (``visualdl export --format html``, the
dashboard's "Save as HTML"): the chosen runs' scalars, run table, media, histograms, text
and graphs, with plotly.js and the data inline, so that it opens from disk with no server
and no network. Above the kinds (it reads through their modules) and below the server,
which serves the same report at ``/api/export/html``."""

from __future__ import annotations

from typing import Any

from visualdl.report.collect import Budget, collect, decode_array
from visualdl.report.render import render
from visualdl.report.select import (ReportError, Selection, selection_from_query,
                                    selection_from_url)

__all__ = ["Budget", "ReportError", "Selection", "build_report", "collect", "decode_array",
           "render", "selection_from_query", "selection_from_url"]


def build_report(data: Any, selection: Selection | None = None, budget: Budget = Budget(),
                 title: str = "visualdl report") -> str:
    """The report's HTML for ``data`` (a ``LogReader`` or a server's data provider);
    ``ReportError`` for an empty logdir or unknown runs or tags."""
    return render(collect(data, selection or Selection(), budget), title=title)
