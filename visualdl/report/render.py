"""A report's data into one self-contained HTML file: the page's CSS and script, plotly.js
from the installed ``plotly`` package and the data as JSON, all inline, so that the file
opens from disk with no server and no network."""

from __future__ import annotations

import html
import importlib.util
import json
import time
from pathlib import Path

from visualdl.format.version import __version__

__all__ = ["render", "plotly_js"]

_ASSETS = Path(__file__).resolve().parent / "assets"


def plotly_js() -> str:
    """plotly.min.js as the ``plotly`` package ships it (found without importing plotly)."""
    spec = importlib.util.find_spec("plotly")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise FileNotFoundError("the plotly package is not installed; it ships plotly.min.js")
    return (Path(folders[0]) / "package_data" / "plotly.min.js").read_text(encoding="utf-8")


def _inline_script(code: str) -> str:
    # "</script" inside would end the element early; "<\/" means the same in JS and JSON.
    return code.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")


def render(data: dict, title: str = "visualdl report") -> str:
    """The HTML page of ``data`` (from :func:`visualdl.report.collect.collect`)."""
    meta = dict(data, title=title, version=__version__,
                created=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
    payload = json.dumps(meta, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    css = (_ASSETS / "report.css").read_text(encoding="utf-8")
    script = (_ASSETS / "report.js").read_text(encoding="utf-8")
    return "".join([
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<title>{html.escape(title)}</title><style>{css}</style></head><body>",
        f"<header><h1>{html.escape(title)}</h1><div id=\"controls\"></div></header>",
        "<main id=\"report\"></main><footer id=\"footer\"></footer>",
        f"<script id=\"report-data\" type=\"application/json\">{payload}</script>",
        # not run as the page loads: report.js draws a first look, then runs it
        f"<script id=\"plotly-src\" type=\"text/plain\">{_inline_script(plotly_js())}</script>",
        f"<script>{_inline_script(script)}</script>",
        "</body></html>\n",
    ])
