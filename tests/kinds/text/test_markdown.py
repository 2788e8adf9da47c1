"""Logged Markdown is rendered in bounded time and memory, one bad entry never fails its
neighbours, and off-site images never load (issue 13, item 6).

Python-Markdown raised RecursionError on a list nested 600 deep, so ``/api/text`` answered
500 for the whole tag, and it kept ``<img src="https://...">``, so the page fetched from
third parties. The speed half (a line of 50,000 ``[`` took > 300 s) is measured by
``python bench/server_load.py --only markdown``, not asserted here.
"""

from __future__ import annotations

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogWriter

NESTED_LIST = "- " * 600 + "deep"
NESTED_QUOTES = "> " * 5000 + "deep"
LONG_PARAGRAPH = "**bold** and more words. " * 6000  # 150,000 characters
RAW_NESTED_HTML = "<ul><li>" * 5000 + "deep"
OFFSITE = "![chart](https://tracker.example/pixel.png \"t\") and <img src=\"https://tracker.example/b.png\" alt=\"b\">"


@pytest.fixture(scope="module")
def entries(tmp_path_factory):
    root = tmp_path_factory.mktemp("markdown")
    texts = ["first **ok**", NESTED_LIST, LONG_PARAGRAPH, NESTED_QUOTES, RAW_NESTED_HTML,
             OFFSITE, "last *ok*"]
    with LogWriter(logdir=str(root / "run")) as w:
        for step, text in enumerate(texts):
            w.add_text("notes", text, step)
    with serving(root) as server:
        client = Client(server.url)
        response = client.get("/api/text", run="run", tag="notes")
        client.close()
    assert response.status_code == 200, response.text[:300]
    return response.json()["entries"]


def test_every_entry_is_served_next_to_a_pathological_one(entries):
    assert [e["step"] for e in entries] == list(range(7))
    assert entries[0]["html"] == "<p>first <strong>ok</strong></p>"
    assert entries[6]["html"] == "<p>last <em>ok</em></p>"


def test_deep_nesting_is_cut_not_a_crash(entries):
    from visualdl.kinds.text.api import MAX_NESTING

    html = entries[1]["html"]
    assert html.startswith("<ul>\n<li>")
    assert 0 < html.count("<ul>") <= MAX_NESTING
    quotes = entries[3]["html"]
    assert 0 < quotes.count("<blockquote>") <= MAX_NESTING
    assert entries[1]["text"] == NESTED_LIST  # the source is kept as logged


def test_raw_html_nested_deeply_is_shown_as_text(entries):
    html = entries[4]["html"]
    assert "<ul>" not in html and html.count("&lt;ul&gt;&lt;li&gt;") == 5000


def test_overlong_entry_is_escaped_plain_text_with_a_note(entries):
    from visualdl.kinds.text.api import MAX_MARKDOWN_CHARS

    html = entries[2]["html"]
    assert len(LONG_PARAGRAPH) > MAX_MARKDOWN_CHARS
    assert html.startswith("<p><em>This entry has 150,000 characters")
    assert "shown as plain text" in html
    assert "<strong>" not in html and "<pre>**bold** and more words." in html


def test_offsite_images_never_load(entries):
    html = entries[5]["html"]
    assert "src=" not in html
    assert '<a href="https://tracker.example/pixel.png" title="t" rel="noopener noreferrer">chart</a>' in html
    assert '<img alt="b">' in html


def test_markdown_still_has_tables_fenced_code_and_sanitizing():
    from visualdl.kinds.text.api import render_markdown

    html = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nx = 1 < 2\n```\n\n"
                           "<script>alert(1)</script>\n\n[x](javascript:alert(1)) <b onclick=y>b</b>")
    assert "<table>" in html and "<td>1</td>" in html
    assert '<pre><code class="language-python">x = 1 &lt; 2\n</code></pre>' in html
    assert "<script" not in html and "javascript:" not in html and "onclick" not in html
    assert "<b>b</b>" in html


def test_a_failing_renderer_shows_plain_text(monkeypatch):
    """Whatever a renderer raises, the entry degrades to escaped text (not a 500)."""
    from visualdl.kinds.text import api

    def broken(text: str) -> str:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(api, "render_markdown", broken)
    html = api._rendered("<b>x</b>" + "y" * 30_000)  # over the cache size: rendered directly
    assert html.startswith("<p><em>This entry could not be rendered as Markdown (RecursionError)")
    assert "&lt;b&gt;x&lt;/b&gt;" in html
