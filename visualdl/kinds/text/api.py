"""Text: every entry of a tag, as its Markdown source and as sanitized HTML.

Markdown is rendered here with ``markdown`` and then cleaned by ``nh3`` (a binding of the
ammonia sanitizer) against an allowlist, so a ``<script>`` or an ``onerror=`` in a logged
string never reaches the page as markup. The browser inserts only the cleaned HTML.
"""

from __future__ import annotations

from functools import lru_cache

from flask import Blueprint, Response

from visualdl.server.api_common import app_cache, read_events, run_tag_json

__all__ = ["blueprint", "render_markdown"]

KIND = "text"
blueprint = Blueprint("text", __name__)

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "img", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "sup",
    "table", "tbody", "td", "th", "thead", "tr", "ul",
}
_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"},
               "th": {"align"}, "td": {"align"}, "code": {"class"}}


def render_markdown(text: str) -> str:
    """Markdown (tables and fenced code included) to HTML that is safe to insert."""
    import markdown  # imported on the first text request, not at server start
    import nh3

    html = markdown.markdown(text, extensions=["tables", "fenced_code", "sane_lists"])
    # Relative URLs are dropped: in a logged string they can only point back into this
    # server's API (an ``<img src=x>`` would fire a request there), never at the user's files.
    return nh3.clean(html, tags=_TAGS, attributes=_ATTRIBUTES,
                     url_schemes={"http", "https", "mailto"}, link_rel="noopener noreferrer",
                     url_relative="deny")


@blueprint.get("/api/text")
def text() -> Response:
    """``?run=&tag=``: every entry (no sampling) with step, wall time, source and HTML."""
    return run_tag_json("text", _entries)


def _entries(run: str, tag: str) -> dict:
    events = read_events(run, KIND, tag)
    return {
        "run": run,
        "tag": tag,
        "total": len(events),
        "entries": [{"step": e.step, "wall_time": e.wall_time, "text": e.text,
                     "html": _rendered(e.text)} for e in events],
    }


def _rendered(text: str) -> str:
    """``render_markdown`` through the app's cache of recent renderings."""
    return app_cache("markdown", lambda: lru_cache(maxsize=4096)(render_markdown))(text)
