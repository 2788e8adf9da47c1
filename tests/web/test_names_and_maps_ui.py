"""Issue 13, item 11 (UI): names holding control or bidi characters are shown with those
characters as visible escapes (a right-to-left override no longer reverses the text), and
plotly map figures, whose map files come from a CDN the CSP blocks, show a note instead of
a blank chart. In Chromium, with no console errors."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.helpers.server import serving
from visualdl import LogWriter

RTL_RUN = "abc\u202edef"
RTL_TAG = "loss\u202egol"
MAP_FIGURE = {
    "data": [{"type": "scattergeo", "lon": [2.35, -74.0], "lat": [48.86, 40.71],
              "mode": "markers"}],
    "layout": {"geo": {"projection": {"type": "natural earth"}}},
}
LINE_FIGURE = {"data": [{"type": "scatter", "x": [0, 1], "y": [3, 4]}], "layout": {}}


@pytest.fixture
def server(tmp_path):
    with LogWriter(logdir=str(tmp_path / RTL_RUN)) as w:
        for step in range(3):
            w.add_scalar(RTL_TAG, float(step), step)
        w.add_figure("map", MAP_FIGURE, 0)
        w.add_figure("line", LINE_FIGURE, 0)
    with serving(tmp_path) as handle:
        yield handle


def _card(run: str, tag: str) -> str:
    return f".card[data-run={_css(run)}][data-tag={_css(tag)}]"


def _css(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def test_rtl_override_in_names_is_shown_as_an_escape(watched, server):
    page = watched.page
    page.goto(f"{server.url}?tab=scalars")
    page.wait_for_selector(".run-list .run-name")
    shown = page.locator(".run-list .run-name").first.text_content()
    assert shown == "abc\\u202Edef"
    assert page.locator(".run-list label").first.get_attribute("title") == "abc\\u202Edef"
    title = page.locator(".card .card-title").first
    title.wait_for()
    assert title.text_content() == "loss\\u202Egol"
    page.locator(".card").first.scroll_into_view_if_needed()
    page.wait_for_function("() => { const p = document.querySelector('.card .js-plotly-plot');"
                           " return p && p.data && p.data.length > 0; }")
    legend_names = page.evaluate(
        "() => document.querySelector('.card .js-plotly-plot').data.map((t) => t.name)")
    assert "abc\\u202Edef" in legend_names
    assert not any("\u202e" in (n or "") for n in legend_names)
    watched.finish()


def test_map_figure_shows_a_note_instead_of_a_blank_chart(watched, server):
    page = watched.page
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{server.url}?tab=figures")
    for tag in ("map", "line"):
        selector = _card(RTL_RUN, tag)
        page.locator(selector).scroll_into_view_if_needed()
        page.wait_for_function(
            "(s) => { const c = document.querySelector(s); return c && c.dataset.shown === '0'; }",
            arg=selector)
    note = page.locator(f"{_card(RTL_RUN, 'map')} .figure-note")
    assert note.is_visible()
    assert "map files from the internet" in note.text_content()
    assert "scattergeo" in note.text_content()
    assert page.locator(f"{_card(RTL_RUN, 'map')} .figure-plot").is_hidden()
    line = _card(RTL_RUN, "line")
    assert page.locator(f"{line} .figure-note").is_hidden()
    assert page.evaluate(f"() => document.querySelector('{line} .js-plotly-plot').data[0].y") == [3, 4]
    # The map never went to plotly (whose geo drawing fetches map files from a CDN), and
    # the page asked nothing of any server but ours.
    assert page.evaluate("(s) => document.querySelector(s).data === undefined",
                         f"{_card(RTL_RUN, 'map')} .figure-plot")
    ours = urlsplit(server.url).netloc
    elsewhere = [url for url in requested
                 if urlsplit(url).scheme in ("http", "https") and urlsplit(url).netloc != ours]
    assert elsewhere == []
    watched.finish()
