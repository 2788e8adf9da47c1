"""The graph view in a real headless Chromium (Debian's /usr/bin/chromium via Playwright).

Skipped cleanly when chromium or playwright is missing; never downloads a browser."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from PIL import Image

from tests.helpers.pages import PageWatch

pytestmark = pytest.mark.browser

SVG_NS = "{http://www.w3.org/2000/svg}"
# The session's Chromium is the ``browser`` fixture of tests/conftest.py.


class Page:
    """A page on the graph tab; ``errors`` collects its console errors and failed requests."""

    def __init__(self, browser, client, model: str, tmp_path, renderer: str = "auto") -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 900},
                                           accept_downloads=True)
        self.page = self.context.new_page()
        self.errors = PageWatch(self.page).errors
        self.client = client
        self.tmp_path = tmp_path
        self.page.goto(f"{client.url}/?tab=graph&graph_model={model}&graph_renderer={renderer}")
        self.wait_ready()

    def wait_ready(self) -> None:
        self.page.wait_for_function(
            "() => { const s = document.querySelector('svg.graph-svg');"
            " return s && s.dataset.state === 'ready' && window.__vdlGraph"
            " && window.__vdlGraph.svg.dataset.state === 'ready'; }", timeout=20000)

    def wait_nodes(self, count: int) -> None:
        """Wait until ``count`` boxes are drawn (the view's count: off-screen tiles of a big
        graph are detached from the document until they scroll into view)."""
        self.page.wait_for_function(
            f"() => document.querySelector('svg.graph-svg').dataset.nodes === '{count}'"
            " && document.querySelector('svg.graph-svg').dataset.state === 'ready'",
            timeout=30000)

    def nodes(self) -> int:
        return int(self.page.get_attribute("svg.graph-svg", "data-nodes"))

    def dom_nodes(self) -> int:
        return self.page.locator("svg.graph-svg .nodes g.node").count()

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(self.tmp_path / f"{name}.png"))

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def page(browser, client, tmp_path):
    p = Page(browser, client, "file:0", tmp_path)
    yield p
    p.close()


def test_draws_every_visible_node(page, client):
    view = client.get("/api/graph/view", params={"model": "file:0"}).json()
    assert page.nodes() == len(view["nodes"]) == 17  # small: opens fully expanded
    page.page.click("#graph-fit")  # everything on screen: every box is in the document
    page.page.wait_for_function(
        "() => document.querySelectorAll('svg.graph-svg .nodes g.node').length === 17")
    assert page.page.locator("svg.graph-svg .edges path.edge").count() == len(view["edges"])
    assert page.page.locator("svg.graph-svg .frames g.frame").count() == 5
    labels = page.page.locator("svg.graph-svg .edge-labels text").all_text_contents()
    assert "batch×8×16×16" in labels
    colors = page.page.eval_on_selector(
        "g.node[data-id=n1] rect.box", "r => r.getAttribute('fill')")
    assert colors == "#cfe0fb"  # Conv: the "layer" category
    page.page.click("#graph-collapse-all")
    page.wait_nodes(5)
    assert page.dom_nodes() == 5
    page.page.click("#graph-expand-all")
    page.wait_nodes(17)
    page.page.click("#graph-fit")
    page.page.wait_for_function(
        "() => document.querySelectorAll('svg.graph-svg .nodes g.node').length === 17")
    page.shot("graph-cnn")
    assert page.errors == []


def test_click_group_expands_and_header_collapses(page):
    page.page.click("#graph-collapse-all")
    page.wait_nodes(5)
    page.page.click("g.node[data-id='g:layer1']")
    page.wait_nodes(6)  # layer1 -> block0, block1
    assert page.page.locator("g.frame[data-path='layer1']").count() == 1
    # the panel shows the clicked group once its details arrive
    page.page.wait_for_function(
        "() => document.querySelector('.graph-props').innerText.includes('layer1')")
    page.page.click("g.node[data-id='g:layer1/block0']")
    page.wait_nodes(10)
    page.page.click("g.frame[data-path='layer1'] .frame-head")
    page.wait_nodes(5)
    assert page.errors == []


def test_click_node_shows_properties(page):
    page.page.click("g.node[data-id=n1]")  # the stem Conv
    props = page.page.locator(".graph-props")
    props.get_by_text("pads").wait_for()
    text = props.inner_text()
    assert "Conv" in text and "/stem/conv/Conv" in text and "[1, 1, 1, 1]" in text
    assert "stem.conv.weight" in text and "8×3×3×3" in text
    assert page.page.locator("g.node[data-id=n1].selected").count() == 1
    props.get_by_role("button", name="Show values").first.click()
    props.locator("pre.values").wait_for()
    assert page.errors == []


def test_find_highlights_and_reveals(page):
    page.page.click("#graph-collapse-all")
    page.wait_nodes(5)
    page.page.locator("svg.graph-svg").focus()
    page.page.keyboard.press("Control+f")
    assert page.page.evaluate("() => document.activeElement.id") == "graph-find"
    page.page.keyboard.type("relu_1")
    page.page.wait_for_function("() => document.querySelector('.find-count').textContent.includes('found')")
    page.page.keyboard.press("Enter")
    current = page.page.locator("g.node.current")
    current.wait_for()
    node_id = current.get_attribute("data-id")
    details = page.client.get("/api/graph/node", params={"model": "file:0", "id": node_id}).json()
    assert details["name"] == "/layer1/block0/relu_1/Relu"
    assert page.nodes() > 5  # the groups hiding it were expanded
    page.page.locator(".graph-props").get_by_text("/layer1/block0/relu_1/Relu").wait_for()
    page.page.keyboard.press("Enter")  # next match: the one in block1
    page.page.wait_for_function(
        f"() => document.querySelector('g.node.current') && "
        f"document.querySelector('g.node.current').dataset.id !== '{node_id}'")
    assert page.page.locator(".find-count").inner_text() == "2 / 2"
    page.shot("graph-find")
    assert page.errors == []


def test_export_svg_and_png(page):
    with page.page.expect_download() as info:
        page.page.click("#graph-export-svg")
    svg_path = page.tmp_path / "export.svg"
    info.value.save_as(svg_path)
    root = ET.parse(svg_path).getroot()
    assert root.tag == f"{SVG_NS}svg" and float(root.get("width")) > 100
    nodes = [g for g in root.iter(f"{SVG_NS}g") if "node" in (g.get("class") or "").split()]
    assert len(nodes) == page.nodes() == 17
    texts = "".join(t.text or "" for t in root.iter(f"{SVG_NS}text"))
    assert "GlobalAveragePool" in texts
    with page.page.expect_download() as info:
        page.page.click("#graph-export-png")
    png_path = page.tmp_path / "export.png"
    info.value.save_as(png_path)
    with Image.open(png_path) as img:
        img.load()
        assert img.format == "PNG" and img.width > 100 and img.height > 100
        colors = img.convert("RGB").getcolors(1 << 20)
        assert colors is not None and len(colors) > 5  # something was drawn, not a blank
    assert page.errors == []


def test_keyboard_pan_zoom_and_activate(page):
    svg = page.page.locator("svg.graph-svg")
    svg.focus()
    before = page.page.eval_on_selector("g.viewport", "g => g.getAttribute('transform')")
    page.page.keyboard.press("+")
    page.page.wait_for_function(
        f"() => document.querySelector('g.viewport').getAttribute('transform') !== {before!r}")
    k1 = page.page.evaluate("window.__vdlGraph.pz.k")
    page.page.keyboard.press("-")
    page.page.keyboard.press("ArrowLeft")
    page.page.keyboard.press("1")
    page.page.wait_for_function("() => window.__vdlGraph.pz.k === 1")
    page.page.keyboard.press("0")
    page.page.wait_for_function("() => window.__vdlGraph.pz.k !== 1")
    assert k1 > 0
    page.page.locator("g.node[data-id=n1]").focus()
    page.page.keyboard.press("Enter")
    page.page.locator(".graph-props").get_by_text("pads").wait_for()
    frame = page.page.evaluate("() => window.__vdlGraph.zoomFrame(1.2)")
    assert 0 < frame < 1000
    k_before = page.page.evaluate("() => window.__vdlGraph.pz.k")
    page.page.mouse.move(600, 400)
    page.page.mouse.wheel(0, -300)
    page.page.wait_for_function(f"() => window.__vdlGraph.pz.k > {k_before}")
    assert page.errors == []


def test_toggles_attributes_and_direction(page):
    page.page.check("#graph-attrs")
    page.page.wait_for_function("() => document.querySelectorAll('svg.graph-svg text.line').length > 0")
    assert "pads" in page.page.locator("g.node[data-id=n1]").text_content()
    page.page.check("#graph-horizontal")
    page.page.wait_for_function("() => window.__vdlGraph.data && window.__vdlGraph.data.direction === 'LR'")
    data = page.page.evaluate("() => ({w: window.__vdlGraph.data.width, h: window.__vdlGraph.data.height})")
    assert data["w"] > data["h"]
    assert "graph_dir=LR" in page.page.url and "graph_attrs=1" in page.page.url
    page.shot("graph-horizontal")
    assert page.errors == []


def test_upload_opens_the_model_and_refuses_garbage(page, models, tmp_path):
    page.page.set_input_files("#graph-file", str(models.control))
    page.page.wait_for_function(
        "() => window.__vdlGraph.model && window.__vdlGraph.model.source === 'upload'")
    page.wait_ready()
    page.wait_nodes(16)
    assert page.errors == []
    bad = tmp_path / "notes.onnx"
    bad.write_bytes(b"definitely not protobuf \xff\xfe")
    page.page.set_input_files("#graph-file", str(bad))
    alert = page.page.locator(".graph-error")
    alert.wait_for()
    assert "not an ONNX model" in alert.inner_text()
    # the browser logs the 400 response itself; nothing else may reach the console
    assert [e for e in page.errors if "status of 400" not in e] == []


def test_large_model_opens_collapsed_and_expands(browser, client, tmp_path):
    """SVG's tiling, chosen in the URL (auto draws 1,002 boxes with WebGL)."""
    ids = {m["name"]: m["id"] for m in client.get("/api/graph/models").json()["models"]}
    p = Page(browser, client, ids["chain.onnx"], tmp_path, renderer="svg")
    try:
        initial = client.get("/api/graph/view", params={"model": ids["chain.onnx"]}).json()
        assert p.nodes() == len(initial["nodes"])
        group = next(n for n in initial["nodes"] if n["type"] == "group")
        p.page.click(f"g.node[data-id='{group['id']}']")
        p.page.wait_for_function(
            f"() => document.querySelector(\"g.frame[data-id='{group['id']}']\") !== null")
        p.page.click("#graph-expand-all")
        p.wait_nodes(1002)
        assert 0 < p.dom_nodes() < 1002  # only the tiles near the view are in the document
        with p.page.expect_download() as info:
            p.page.click("#graph-export-svg")
        info.value.save_as(tmp_path / "chain.svg")
        root = ET.parse(tmp_path / "chain.svg").getroot()
        drawn = [g for g in root.iter(f"{SVG_NS}g") if "node" in (g.get("class") or "").split()]
        assert len(drawn) == 1002  # the export holds the whole graph
        p.shot("graph-chain")
        assert p.errors == []
    finally:
        p.close()


def _find_state(p) -> dict:
    return p.evaluate("() => ({selected: window.__vdlGraph.selected,"
                      " count: document.querySelector('.find-count').textContent})")


def test_find_enter_acts_on_the_text_in_the_box(page):
    """Enter right after typing (the search's 200 ms debounce still waiting) steps through
    the matches of the text in the box, and the debounced search does not start them again."""
    p = page.page
    search = lambda q: [m["id"] for m in page.client.get(  # noqa: E731
        "/api/graph/search", params={"model": "file:0", "q": q, "limit": 500}).json()["matches"]]
    relu, conv = search("Relu"), search("Conv")
    assert not set(relu[:2]) & set(conv[:2])
    p.locator("svg.graph-svg").focus()
    p.keyboard.press("Control+f")
    p.keyboard.type("Relu")
    p.wait_for_function("() => document.querySelector('.find-count').textContent.includes('found')")
    p.keyboard.press("Enter")
    p.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=relu[0])
    # a new text and Enter at once: its first match, not the previous text's second
    p.keyboard.press("Control+a")
    p.keyboard.type("Conv")
    p.keyboard.press("Enter")
    p.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=conv[0])
    p.wait_for_timeout(500)  # past the debounce: its search must not reset the count
    assert _find_state(p) == {"selected": conv[0], "count": f"1 / {len(conv)}"}
    p.keyboard.press("Enter")
    p.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=conv[1])
    assert _find_state(p)["count"] == f"2 / {len(conv)}"
    # no matches yet (the box cleared), then a text and Enter at once
    p.keyboard.press("Escape")
    p.locator("#graph-find").focus()
    p.keyboard.type("Relu")
    p.keyboard.press("Enter")
    p.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=relu[0])
    p.wait_for_timeout(500)
    assert _find_state(p) == {"selected": relu[0], "count": f"1 / {len(relu)}"}
    p.keyboard.press("Enter")
    p.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=relu[1])
    assert _find_state(p)["count"] == f"2 / {len(relu)}"
    p.keyboard.press("Shift+Enter")
    p.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=relu[0])
    assert _find_state(p)["count"] == f"1 / {len(relu)}"
    assert page.errors == []


_KEY_STATE = """() => {
  const a = document.activeElement;
  const head = a.classList && a.classList.contains('frame-head');
  return {
    focus: head ? `head:${a.parentNode.dataset.id}` : (a.dataset && a.dataset.id) || a.tagName,
    live: document.querySelector('.graph-stage [aria-live]').textContent,
  };
}"""


def _reading_order(p) -> list[str]:
    """The drawn nodes and expanded groups' headers by rows, then columns (TB)."""
    data = p.evaluate("() => ({nodes: window.__vdlGraph.data.nodes.map((n) => [n.id, n.x, n.y]),"
                      " frames: window.__vdlGraph.data.frames.map((f) => [f.id, f.x, f.y])})")
    items = [(y, x, f"head:{i}") for i, x, y in data["frames"]] + \
        [(y, x, i) for i, x, y in data["nodes"]]
    return [key for _, _, key in sorted(items)]


def test_svg_keyboard_reading_order_edges_and_focus_after_enter(page):
    """The WebGL drawing's keyboard model in SVG (docs/graph_view.md): Tab in reading order,
    each move said in the live region, Alt+Down / Alt+Up along the edges, and Enter on a
    group keeps the focus on that group in the redrawn view."""
    p = page.page
    state = lambda: p.evaluate(_KEY_STATE)  # noqa: E731
    order = _reading_order(p)
    assert order[:4] == ["n0", "head:g:stem", "n1", "n2"]
    nodes = page.nodes()
    p.locator("svg.graph-svg").focus()
    seen = []
    for _ in order:
        p.keyboard.press("Tab")
        seen.append(state()["focus"])
    assert seen == order  # every one, off-screen ones too (brought into view)
    p.keyboard.press("Tab")  # past the last: the focus leaves the drawing
    assert not p.evaluate("() => document.querySelector('svg.graph-svg')"
                          ".contains(document.activeElement)")
    p.locator("svg.graph-svg").focus()
    p.keyboard.press("Tab")
    assert state()["focus"] == "n0"
    assert state()["live"].endswith(f", node 1 of {nodes}")
    p.keyboard.press("Tab")
    assert state() == {"focus": "head:g:stem", "live": "Group stem, 2 ops, expanded"}
    p.keyboard.press("Tab")
    assert state()["focus"] == "n1" and state()["live"].endswith(f"node 2 of {nodes}")
    p.keyboard.press("Shift+Tab")
    assert state()["focus"] == "head:g:stem"
    p.keyboard.press("Tab")
    p.keyboard.press("Alt+ArrowDown")  # the stem's Conv -> its Relu
    assert state() == {"focus": "n2", "live": f"Next along an edge: Relu relu, node 3 of {nodes}"}
    p.keyboard.press("Alt+ArrowUp")
    assert state()["focus"] == "n1" and state()["live"].startswith("Previous along an edge: Conv")
    # Enter on a header collapses its group: the focus is on the group's box after the redraw
    p.keyboard.press("Shift+Tab")
    assert state()["focus"] == "head:g:stem"
    p.keyboard.press("Enter")
    page.wait_nodes(nodes - 1)
    p.wait_for_function("() => document.activeElement.dataset.id === 'g:stem'")
    assert state()["live"].startswith("Group stem, 2 ops, collapsed, node 2 of")
    p.keyboard.press("Enter")  # expands it again: on its header
    page.wait_nodes(nodes)
    p.wait_for_function("() => document.activeElement.classList.contains('frame-head')")
    assert state() == {"focus": "head:g:stem", "live": "Group stem, 2 ops, expanded"}
    p.keyboard.press("Tab")
    assert state()["focus"] == "n1"
    assert page.errors == []
