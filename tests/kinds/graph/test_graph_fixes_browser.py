"""Fixes of the graph view found in use, in a real headless Chromium: SVG export in slices with
progress, find's true count and every match reachable, tooltips with the full name, the status
after a failed upload, the diff kept in the URL and without a minimap over it, and the live
region's thousands separators."""

from __future__ import annotations

import re

import pytest

from tests.helpers.http import Client
from tests.helpers.pages import PageWatch

from .test_graph_browser import Page

pytestmark = pytest.mark.browser


def _ids(client) -> dict[str, str]:
    return {m["name"]: m["id"] for m in client.get("/api/graph/models").json()["models"]}


# ---- 1: Export SVG is built in slices, with progress in the status line ----------------------

_WATCH_EXPORT = """() => {
  const status = document.querySelector('.graph-status');
  window.__exportSeen = [];
  window.__ticks = 0;
  window.__ticker = setInterval(() => { window.__ticks += 1; }, 2);
  new MutationObserver(() => window.__exportSeen.push([status.textContent, window.__ticks]))
    .observe(status, { childList: true, characterData: true, subtree: true });
  window.__vdlGraph.canvas.exportSliceMs = 0; // many slices even for 1,000 boxes
}"""

# what Export SVG saved before it was built in slices: the whole drawing cloned and serialized
_OLD_EXPORT = """async () => {
  const m = await import(new URL('static/js/views/graph/download.js', document.baseURI));
  const c = window.__vdlGraph.canvas;
  return m.svgDocument(c.drawingClone(), c.data.width, c.data.height, '#ffffff').text;
}"""


@pytest.mark.parametrize("renderer", ["svg", "webgl"])
def test_export_svg_in_slices_with_progress_same_file(browser, client, tmp_path, renderer):
    p = Page(browser, client, _ids(client)["chain.onnx"], tmp_path, renderer=renderer)
    try:
        p.page.click("#graph-expand-all")
        p.wait_nodes(1002)
        assert p.page.evaluate("() => window.__vdlGraph.renderer") == renderer
        # a node style ("Colour by") is part of the drawing, and so of the file
        p.page.evaluate("() => window.__vdlGraph.canvas.setNodeStyle({n5: {fill: '#123456', badge: '7'}})")
        before = p.page.locator(".graph-status").inner_text()
        assert re.fullmatch(r"1,000 of 1,000 ops shown", before), before
        expected = p.page.evaluate(_OLD_EXPORT)
        p.page.evaluate(_WATCH_EXPORT)
        with p.page.expect_download() as info:
            p.page.click("#graph-export-svg")
        path = tmp_path / "chain.svg"
        info.value.save_as(path)
        p.page.wait_for_function("() => !window.__vdlGraph.exporting")
        seen = p.page.evaluate("() => { clearInterval(window.__ticker); return window.__exportSeen; }")
        # the file: exactly what the one-go export made
        text = path.read_text(encoding="utf-8")
        assert len(text) == len(expected) and text == expected
        assert text.count('class="node ') == 1002 and "#123456" in text
        # progress in the status line, then back to what is shown
        progress = [(int(m.group(1)), ticks) for s, ticks in seen
                    if (m := re.fullmatch(r"Exporting SVG… (\d+)%", s))]
        assert any(0 < pct < 100 for pct, _ in progress), seen
        assert [pct for pct, _ in progress] == sorted(pct for pct, _ in progress)
        # the page stayed responsive: timers ran between the slices
        assert progress[-1][1] - progress[0][1] >= 3, seen
        assert p.page.locator(".graph-status").inner_text() == before
        assert p.errors == []
    finally:
        p.close()


# ---- 3: find counts every match and steps to each ---------------------------------------------

def test_find_count_is_the_total_and_every_match_is_reachable(browser, client, tmp_path):
    chain = _ids(client)["chain.onnx"]
    whole = client.get("/api/graph/search", params={"model": chain, "q": "block", "limit": 5000}).json()
    ids = [m["id"] for m in whole["matches"]]
    assert whole["total"] == len(ids) == 1001 > 500
    p = Page(browser, client, chain, tmp_path, renderer="svg")
    try:
        page = p.page
        count = page.locator(".find-count")
        page.locator("#graph-find").fill("block")
        page.wait_for_function("() => document.querySelector('.find-count').textContent === '1,001 found'")
        page.locator("#graph-find").press("Enter")
        page.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=ids[0])
        assert count.inner_text() == "1 / 1,001"
        # back from the first: the last of all (on a page not loaded yet)
        page.locator("#graph-find").press("Shift+Enter")
        page.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=ids[1000])
        assert count.inner_text() == "1,001 / 1,001"
        page.locator("#graph-find").press("Shift+Enter")
        page.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=ids[999])
        assert count.inner_text() == "1,000 / 1,001"
        # forward past the 500th (the first page's last): the 501st
        page.evaluate("() => { window.__vdlGraph.finder.index = 499; }")
        page.locator("#graph-find").press("Enter")
        page.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=ids[500])
        assert count.inner_text() == "501 / 1,001"
        assert page.locator("g.node.current").get_attribute("data-id") == ids[500]
        page.locator("#graph-find").press("Enter")
        page.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=ids[501])
        assert count.inner_text() == "502 / 1,001"
        assert p.errors == []
    finally:
        p.close()


# ---- 4: hover tooltips name the node ------------------------------------------------------------

def test_svg_nodes_have_their_full_name_as_tooltip(browser, client, tmp_path):
    p = Page(browser, client, "file:0", tmp_path, renderer="svg")
    try:
        view = client.get("/api/graph/view", params={"model": "file:0"}).json()
        tips = p.page.evaluate("""() => Object.fromEntries(window.__vdlGraph.data.nodes.map((n) => {
            const t = window.__vdlGraph.canvas.svgCanvas.node(n.id).querySelector(':scope > title');
            return [n.id, t ? t.textContent : null]; }))""")
        assert tips["n1"] == "/stem/conv/Conv"
        assert tips == {n["id"]: n["name"] or n["title"] for n in view["nodes"]}
        p.page.click("#graph-collapse-all")
        p.wait_nodes(5)
        group = p.page.eval_on_selector("g.node[data-id='g:layer1'] > title", "t => t.textContent")
        assert group == "layer1"
        assert p.errors == []
    finally:
        p.close()


def test_webgl_tooltip_is_the_full_name(browser, client, tmp_path):
    chain = _ids(client)["chain.onnx"]
    p = Page(browser, client, chain, tmp_path, renderer="webgl")
    try:
        p.page.click("#graph-expand-all")
        p.wait_nodes(1002)
        item = p.page.evaluate("""() => { const c = window.__vdlGraph.canvas;
            const n = c.data.nodes.find((m) => m.type === 'op' && m.title === 'Relu');
            const r = c.active.element.getBoundingClientRect();
            c.pz.set(1, r.width / 2 - (n.x + n.w / 2), r.height / 2 - (n.y + n.h / 2));
            return {name: n.name, x: r.left + r.width / 2, y: r.top + r.height / 2}; }""")
        p.page.wait_for_timeout(100)
        p.page.mouse.move(item["x"], item["y"])
        p.page.wait_for_function("() => document.querySelector('canvas.graph-gl').title !== ''")
        assert p.page.get_attribute("canvas.graph-gl", "title") == item["name"]
        assert item["name"] == "stage0/block0/act/Relu"
        assert p.errors == []
    finally:
        p.close()


# ---- 5: a failed upload leaves the status saying what is shown ----------------------------------

def test_failed_upload_resets_the_status(browser, client, tmp_path):
    p = Page(browser, client, "file:0", tmp_path)
    try:
        before = p.page.locator(".graph-status").inner_text()
        assert before.endswith("ops shown")
        bad = tmp_path / "broken.onnx"
        bad.write_bytes(b"definitely not protobuf \xff\xfe")
        p.page.set_input_files("#graph-file", str(bad))
        p.page.locator(".graph-error").wait_for()
        assert "Could not open broken.onnx" in p.page.locator(".graph-error").inner_text()
        p.page.wait_for_function("(t) => document.querySelector('.graph-status').textContent === t", arg=before,
                                 timeout=5000)
        assert p.page.evaluate("() => window.__vdlGraph.model.id") == "file:0"
        assert [e for e in p.errors if "status of 400" not in e] == []
    finally:
        p.close()


# ---- 7: the live region's numbers have thousands separators --------------------------------------

@pytest.mark.parametrize("renderer", ["svg", "webgl"])
def test_live_region_count_has_separators(browser, client, tmp_path, renderer):
    p = Page(browser, client, _ids(client)["chain.onnx"], tmp_path, renderer=renderer)
    try:
        p.page.click("#graph-expand-all")
        p.wait_nodes(1002)
        drawing = "svg.graph-svg" if renderer == "svg" else "canvas.graph-gl"
        p.page.locator(drawing).focus()
        p.page.keyboard.press("Tab")
        p.page.wait_for_function("() => document.querySelector('.graph-stage [aria-live]').textContent !== ''")
        live = p.page.locator(".graph-stage [aria-live]").first.text_content()
        assert live.endswith(", node 1 of 1,002"), live
        assert p.errors == []
    finally:
        p.close()


# ---- 2 and 6: the diff (its own models) ----------------------------------------------------------

@pytest.fixture(scope="module")
def diff_client(mlp_diff_server):
    return Client(mlp_diff_server.url)


@pytest.fixture
def diff_page(browser, diff_client):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    watch = PageWatch(page)
    yield page, watch
    context.close()


def _open(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function("() => window.__vdlGraph && window.__vdlGraph.svg.dataset.state === 'ready'",
                           timeout=20000)


def _diff_ready(page) -> None:
    page.wait_for_function("() => document.querySelector('.graph-diff').dataset.state === 'ready'",
                           timeout=20000)


def test_diff_is_kept_in_the_url_and_restored(diff_page, diff_client):
    page, watch = diff_page
    _open(page, f"{diff_client.url}/?tab=graph&graph_model=file:0")
    page.select_option("#graph-compare", "file:1")
    _diff_ready(page)
    assert "graph_compare=file%3A1" in page.url or "graph_compare=file:1" in page.url
    link = page.url
    # the link reopens the diff: both sides, the report, the colours
    _open(page, link)
    _diff_ready(page)
    assert page.input_value("#graph-compare") == "file:1"
    assert page.locator(".graph-diff li.added").all_text_contents() == ["squash (Tanh)"]
    assert page.locator("svg.graph-svg").count() == 2
    assert page.locator("svg.graph-svg").nth(1).locator("g.node[data-diff=added]").count() == 1
    # closing the diff takes it out of the URL
    page.select_option("#graph-compare", "")
    page.wait_for_function("() => !location.search.includes('graph_compare')")
    assert page.locator("svg.graph-svg").count() == 1
    assert watch.errors == []


_MINIMAPS = """() => [...document.querySelectorAll('.graph-minimap')].filter((m) => m.isConnected
    && getComputedStyle(m).display !== 'none').map((m) => { const r = m.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom]; })"""


def test_diff_drawings_have_no_minimap_over_them(diff_page, diff_client):
    page, watch = diff_page
    _open(page, f"{diff_client.url}/?tab=graph&graph_model=file:0")
    zoom_in = "() => window.__vdlGraph.canvas.pz.set(3, 0, 0)"
    # one drawing, zoomed in past the screen: its minimap shows
    page.evaluate(zoom_in)
    page.wait_for_function(f"() => ({_MINIMAPS})().length === 1")
    page.select_option("#graph-compare", "file:1")
    _diff_ready(page)
    page.evaluate(zoom_in)  # both sides follow: each drawing bigger than its half
    page.wait_for_function("() => { const [a, b] = document.querySelectorAll('svg.graph-svg .viewport');"
                           " return a.getAttribute('transform') === b.getAttribute('transform'); }")
    big = page.evaluate("""() => [...document.querySelectorAll('svg.graph-svg')].map((s) => {
        const v = s.querySelector('.viewport').getBBox(); const k = 3;
        return v.width * k > s.clientWidth || v.height * k > s.clientHeight; })""")
    assert big == [True, True]
    assert page.evaluate(_MINIMAPS) == []
    # fitted again (the right side's extra op below the left's fit): still none
    page.evaluate("() => window.__vdlGraph.fit()")
    assert page.evaluate(_MINIMAPS) == []
    # closed: the one drawing has its minimap again. Zoomed in on every poll: a redraw that
    # closing may still bring (the view's answer, fitted) must not win a race with one zoom
    page.select_option("#graph-compare", "")
    page.wait_for_function(f"() => {{ ({zoom_in})(); return ({_MINIMAPS})().length === 1; }}")
    assert watch.errors == []
