"""Text: every entry of a tag, as its Markdown source and as sanitized HTML.

Markdown is rendered here with ``markdown-it-py`` (CommonMark plus tables and
strikethrough) and then cleaned by ``nh3`` (a binding of the ammonia sanitizer) against an
allowlist, so a ``<script>`` or an ``onerror=`` in a logged string never reaches the page
as markup. The browser inserts only the cleaned HTML.

Rendering one entry is bounded, whatever was logged: markdown-it parses in linear time
(Python-Markdown does not, on a long line of ``[``) and stops nesting at
``MAX_NESTING`` levels; an entry longer than ``MAX_MARKDOWN_CHARS`` is shown as escaped
plain text with a note; raw HTML with more than ``MAX_RAW_TAGS`` tags is shown as text
(html5ever, under nh3, takes quadratic time on deeply nested lists); and an entry that
still fails to render is shown as plain text without failing its neighbours.

Images never load: relative URLs could only point back into this server's API and any other
source is off-site (a request to a third party each time the page is shown), so Markdown
images become links to their source and the ``src`` of raw ``<img>`` tags is dropped.
"""

from __future__ import annotations

import html
import logging
import re
from functools import lru_cache
from typing import Any

from flask import Blueprint, Response

from visualdl.api.common import app_cache, read_events, run_tag_json

__all__ = ["blueprint", "render_markdown", "MAX_MARKDOWN_CHARS", "MAX_NESTING", "MAX_RAW_TAGS"]

KIND = "text"
blueprint = Blueprint("text", __name__)
_log = logging.getLogger(__name__)

#: Longer entries are shown as escaped plain text: a pathological line (all `[`) renders far
#: slower than ordinary text, so this bounds the time one entry takes.
MAX_MARKDOWN_CHARS = 100_000
#: Blocks and inline elements nested deeper than this are not parsed further.
MAX_NESTING = 50
#: More raw HTML tags than this in one entry: the raw HTML is shown as text.
MAX_RAW_TAGS = 1000
_CACHED_CHARS = 20_000  # longer entries are rendered on each request, not kept in the cache

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "img", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "sup",
    "table", "tbody", "td", "th", "thead", "tr", "ul",
}
# img keeps no src: see the module docstring.
_ATTRIBUTES = {"a": {"href", "title"}, "img": {"alt", "title"},
               "th": {"align"}, "td": {"align"}, "code": {"class"}}
_RAW_TAG = re.compile(r"<[A-Za-z]")


@lru_cache(maxsize=2)
def _parser(html_allowed: bool) -> Any:
    """A markdown-it parser (built once: building one costs more than a short render)."""
    from markdown_it import MarkdownIt  # imported on the first text request, not at start

    md = MarkdownIt("commonmark", {"html": html_allowed, "maxNesting": MAX_NESTING})
    md.enable(["table", "strikethrough"])
    # nh3 is the one judge of URLs (it drops relative, data: and javascript: ones); without
    # this, markdown-it would leave a rejected link as its literal source text.
    md.validateLink = lambda url: True
    md.add_render_rule("image", _image_as_link)
    return md


def _image_as_link(self, tokens, idx, options, env) -> str:  # noqa: ANN001 - markdown-it API
    """``![alt](src)`` as a link to ``src`` labelled with the alt text: never loaded."""
    token = tokens[idx]
    src = token.attrGet("src") or ""
    label = self.renderInlineAsText(token.children or [], options, env) or src
    title = token.attrGet("title")
    title_attr = f' title="{html.escape(title)}"' if title else ""
    return f'<a href="{html.escape(src)}"{title_attr}>{html.escape(label)}</a>'


def render_markdown(text: str) -> str:
    """Markdown (tables and fenced code included) to HTML that is safe to insert, in time
    and memory bounded by the limits above."""
    import nh3

    if len(text) > MAX_MARKDOWN_CHARS:
        return _plain(text, f"This entry has {len(text):,} characters, more than the "
                            f"{MAX_MARKDOWN_CHARS:,} rendered as Markdown; shown as plain text.")
    md = _parser(True)
    env: dict = {}
    tokens = md.parse(text, env)
    if _raw_tag_count(tokens) > MAX_RAW_TAGS:
        md = _parser(False)
        tokens = md.parse(text, env)
    rendered = md.renderer.render(tokens, md.options, env)
    # Relative URLs are dropped: in a logged string they can only point back into this
    # server's API (a link could fire a request there), never at the user's files.
    return nh3.clean(rendered, tags=_TAGS, attributes=_ATTRIBUTES,
                     url_schemes={"http", "https", "mailto"}, link_rel="noopener noreferrer",
                     url_relative="deny").strip()


def _raw_tag_count(tokens: list) -> int:
    count = 0
    for token in tokens:
        if token.type == "html_block":
            count += len(_RAW_TAG.findall(token.content))
        elif token.type == "inline":
            count += sum(len(_RAW_TAG.findall(c.content)) for c in token.children or ()
                         if c.type == "html_inline")
    return count


def _plain(text: str, note: str) -> str:
    return f"<p><em>{html.escape(note)}</em></p><pre>{html.escape(text)}</pre>"


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
    """``render_markdown`` through the app's cache of recent renderings; an entry that
    cannot be rendered is shown as plain text, and its neighbours are not affected."""
    try:
        if len(text) > _CACHED_CHARS:
            return render_markdown(text)
        return app_cache("markdown", lambda: lru_cache(maxsize=4096)(render_markdown))(text)
    except Exception as err:  # noqa: BLE001 - one bad entry must not fail the whole tag
        _log.warning("could not render a text entry as Markdown: %r", err)
        return _plain(text, f"This entry could not be rendered as Markdown "
                            f"({type(err).__name__}); shown as plain text.")
