"""``/api/scalars/layouts``: the charts that combine scalar series, over every run.

``charts``: one per ``add_scalars`` main tag, its keys in the order first logged (the union
over runs and over calls with new keys), with the runs that recorded it. ``layout``: the
custom layouts, category by category; each run's last ``add_custom_scalars`` counts, and when
runs disagree about one (category, title), the latest layout wins.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from visualdl.api.common import etag_for, etag_json, provider

__all__ = ["blueprint", "layouts"]

KIND = "custom_scalars"
blueprint = Blueprint("custom_scalars", __name__)


def _events(data, run: str) -> list:  # noqa: ANN001 - a DataProvider
    try:
        return data.events(run, KIND, KIND)
    except KeyError:  # no charts in this run, or the run vanished meanwhile
        return []


def layouts(data: Any = None) -> dict:
    """The merged charts and layouts of every run (of ``data``: a data provider or a
    ``LogReader``; the app's provider when None), as a JSON-ready dict."""
    data = provider() if data is None else data
    charts: dict[str, dict] = {}
    latest: dict[str, tuple[float, str, dict]] = {}  # run -> its last layout
    for run in data.runs():
        for event in _events(data, run):
            if event.is_layout:
                latest[run] = (event.wall_time, run, event.layout)
                continue
            chart = charts.setdefault(event.main_tag, {"title": event.main_tag, "keys": {},
                                                       "runs": {}})
            chart["runs"][run] = None
            for key, tag in zip(event.keys, event.series):
                chart["keys"].setdefault(key, tag)
    merged: dict[str, dict[str, tuple[float, dict]]] = {}
    for wall_time, run, layout in sorted(latest.values(), key=lambda x: (x[0], x[1])):
        for category, items in layout.items():
            for title, (kind, tags) in items.items():
                entry = merged.setdefault(category, {}).setdefault(
                    title, {"title": title, "type": kind.lower(), "tags": tags, "runs": []})
                entry.update(type=kind.lower(), tags=tags)  # the latest layout wins
                entry["runs"].append(run)
    return {
        "charts": [{"title": c["title"], "keys": list(c["keys"]), "tags": list(c["keys"].values()),
                    "runs": list(c["runs"])} for c in charts.values()],
        "layout": [{"category": category, "charts": list(items.values())}
                   for category, items in merged.items()],
    }


@blueprint.get("/api/scalars/layouts")
def scalar_layouts() -> Response:
    """Every run's combined charts and custom layouts, merged (see the module's docstring)."""
    etag = etag_for("scalar-layouts", provider().version)
    return etag_json(etag, layouts)
