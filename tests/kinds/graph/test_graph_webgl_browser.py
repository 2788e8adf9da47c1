"""The graph view's WebGL2 drawing in a real headless Chromium (software WebGL: SwiftShader).

Big views are drawn with WebGL2 (graph/glcanvas.js), small ones with SVG (graph/canvas.js).
Pixels are read from page screenshots at the screen position of known nodes and compared
with the colours the drawing must give them. The interaction tests force WebGL on the
1,000-op chain (``graph_renderer=webgl`` in the URL) to stay quick; one test expands a
50,000-op model and checks its pixels."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import onnx
import pytest
from PIL import Image

from tests.helpers import onnx_models
from tests.helpers.pages import PageWatch
from tests.helpers.server import serving

pytestmark = pytest.mark.browser

SVG_NS = "{http://www.w3.org/2000/svg}"
COLORS_JS = Path(__file__).resolve().parents[3] / "web" / "js" / "views" / "graph" / "colors.js"
BIG = 50_000


@pytest.fixture(scope="module")
def big_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "chain50k.onnx"
    onnx.save(onnx_models.residual_chain(BIG), path)
    return path


@pytest.fixture(scope="module")
def collapsed_model(tmp_path_factory):
    """A chain whose first view is all collapsed groups (no frame drawn)."""
    path = tmp_path_factory.mktemp("collapsed") / "chain3k.onnx"
    onnx.save(onnx_models.residual_chain(3000, blocks_per_stage=20), path)
    return path


@pytest.fixture(scope="module")
def server(models, big_model, collapsed_model):
    """file:0 the small CNN, file:1 the 1,000-op chain, file:2 the 50,000-op chain, file:3 a
    3,000-op chain that opens all collapsed."""
    with serving([], models=[models.cnn, models.chain, big_model, collapsed_model]) as handle:
        yield handle


def rgb(css: str) -> tuple[int, int, int]:
    return tuple(int(css[i:i + 2], 16) for i in (1, 3, 5))


def close(a, b, tol: int = 8) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b))


class GLPage:
    """A page on the graph tab; the test fails on any console error it logs."""

    def __init__(self, browser, url: str, model: str, renderer: str = "webgl", init_script: str = "",
                 timeout: int = 20_000) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 900}, accept_downloads=True)
        if init_script:
            self.context.add_init_script(init_script)
        self.page = self.context.new_page()
        self.page.set_default_timeout(20_000)
        self.watch = PageWatch(self.page)
        self.page.goto(f"{url}/?tab=graph&graph_model={model}&graph_renderer={renderer}")
        self.wait_ready(timeout=timeout)

    def wait_ready(self, nodes: int | None = None, timeout: int = 20_000) -> None:
        want = "true" if nodes is None else f"s.dataset.nodes === '{nodes}'"
        self.page.wait_for_function(
            "() => { const s = document.querySelector('svg.graph-svg');"
            f" return window.__vdlGraph && s && s.dataset.state === 'ready' && {want}; }}", timeout=timeout)

    def eval(self, script: str, arg=None):
        return self.page.evaluate(script, arg)

    @property
    def renderer(self) -> str:
        return self.eval("() => window.__vdlGraph.renderer")

    def node(self, node_id: str) -> dict:
        return self.eval("(id) => window.__vdlGraph.data.nodes.find((n) => n.id === id)", node_id)

    def to_screen(self, x: float, y: float) -> tuple[float, float]:
        """Page coordinates of graph point (x, y)."""
        return tuple(self.eval("""([x, y]) => { const c = window.__vdlGraph.canvas;
            const r = c.active.element.getBoundingClientRect(); const pz = c.pz;
            return [r.left + x * pz.k + pz.tx, r.top + y * pz.k + pz.ty]; }""", [x, y]))

    def centre_of_view(self) -> tuple[float, float]:
        """The graph point at the middle of the drawing."""
        return tuple(self.eval("""() => { const c = window.__vdlGraph.canvas;
            const r = c.active.element.getBoundingClientRect();
            return c.pz.toGraph(r.left + r.width / 2, r.top + r.height / 2); }"""))

    def look_at(self, item: dict, k: float) -> None:
        """Centre node ``item`` at zoom ``k`` and wait for that frame to be drawn."""
        self.eval("""async ([item, k]) => { const c = window.__vdlGraph.canvas;
            const r = c.active.element.getBoundingClientRect();
            await c.pz.set(k, r.width / 2 - (item.x + item.w / 2) * k, r.height / 2 - (item.y + item.h / 2) * k);
            await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res))); }""", [item, k])

    def shot(self) -> Image.Image:
        return Image.open(io.BytesIO(self.page.screenshot())).convert("RGB")

    def background(self) -> tuple[int, int, int]:
        """The theme's background behind the drawing (what the WebGL canvas clears to)."""
        return tuple(self.eval("() => getComputedStyle(document.querySelector('.graph-canvas'))"
                               ".backgroundColor.match(/\\d+/g).slice(0, 3).map(Number)"))

    def colors(self) -> dict:
        return self.eval("""async () => { const m = await import(new URL('static/js/views/graph/colors.js', document.baseURI));
            return {categories: m.CATEGORY_COLORS, text: m.TEXT_COLOR}; }""")

    def close(self) -> None:
        self.context.close()
        assert self.watch.errors == [], self.watch.errors


@pytest.fixture
def chain(browser, server):
    """The 1,000-op chain drawn with WebGL, opened collapsed by scope."""
    p = GLPage(browser, server.url, "file:1")
    yield p
    p.close()


def expand_all(p: GLPage, nodes: int, timeout: int = 20_000) -> None:
    p.page.click("#graph-expand-all")
    p.wait_ready(nodes, timeout)


def test_50k_graph_drawn_with_webgl_pixels_at_nodes(browser, server):
    p = GLPage(browser, server.url, "file:2", renderer="auto", timeout=120_000)  # the server parses 50k ops
    try:
        assert p.renderer == "svg"  # the collapsed first view is small: SVG draws it
        expand_all(p, BIG + 2, timeout=120_000)
        assert p.renderer == "webgl"
        assert p.eval("() => document.querySelectorAll('svg.graph-svg g.node').length") == 0  # no DOM per node
        ops = p.eval("() => window.__vdlGraph.data.nodes.filter((n) => n.type === 'op').length")
        assert ops == BIG
        palette = p.colors()["categories"]
        picks = p.eval("""() => { const ops = window.__vdlGraph.data.nodes.filter((n) => n.type === 'op');
            return [ops[0], ops[2], ops[Math.floor(ops.length / 2) + 3], ops[ops.length - 1]]; }""")
        assert {n["category"] for n in picks} >= {"layer", "activation"}
        for item in picks:
            p.look_at(item, 0.25)  # far enough that no label covers the box's middle
            image = p.shot()
            x, y = p.to_screen(item["x"] + item["w"] / 2, item["y"] + item["h"] / 2)
            assert close(image.getpixel((int(x), int(y))), rgb(palette[item["category"]][0])), item
            # left of the whole drawing, level with the box: the background
            bx, by = p.to_screen(-30, item["y"] + item["h"] / 2)
            assert close(image.getpixel((int(bx), int(by))), p.background()), item
        # fitted, 50,000 boxes on screen: the frame is an image drawn on the CPU, each box a
        # dot, the selected one a mark in the selection's colour
        target = picks[2]
        p.eval("(id) => window.__vdlGraph.select(id)", target["id"])
        p.page.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=target["id"])
        p.eval("() => window.__vdlGraph.fit()")
        p.eval("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        assert p.eval("() => window.__vdlGraph.canvas.gl.mode") == "image"
        image = p.shot()
        x, y = p.to_screen(target["x"] + target["w"] / 2, target["y"] + target["h"] / 2)
        assert close(image.getpixel((int(x), int(y))), rgb("#2f6fde"), 30)
        x, y = p.to_screen(picks[0]["x"] + picks[0]["w"] / 2, picks[0]["y"] + picks[0]["h"] / 2)
        assert not close(image.getpixel((int(x), int(y))), p.background())  # the first op: a dot
        assert close(image.getpixel((int(x) + 60, int(y))), p.background())  # beside the column
        # zoomed in, the labels are drawn: dark text pixels inside the box (the last op: six
        # million px down, where only tile-relative coordinates keep float32 precise)
        item = picks[3]
        p.look_at(item, 1.5)
        image = p.shot()
        x0, y0 = p.to_screen(item["x"], item["y"])
        x1, y1 = p.to_screen(item["x"] + item["w"], item["y"] + item["h"])
        text = rgb(p.colors()["text"])
        dark = sum(1 for xx in range(int(x0) + 4, int(x1) - 4) for yy in range(int(y0) + 4, int(y1) - 4)
                   if close(image.getpixel((xx, yy)), text, 40))
        assert dark > 20
    finally:
        p.close()


def test_webgl_readied_unseen_for_a_big_model_only(browser, server):
    """A model of 1,000 ops or more readies its WebGL drawing once the first (SVG) view is
    in: drawn once out of sight, then hidden, the SVG still what is seen and clicked. The
    first big expand then draws with WebGL at once. A small model makes no WebGL context."""
    p = GLPage(browser, server.url, "file:1", renderer="auto")
    try:
        assert p.renderer == "svg"
        p.page.wait_for_function("() => { const gl = window.__vdlGraph.canvas.gl;"
                                 " return gl && gl.lastDraw > 0 && gl.data === null; }")
        assert p.eval("() => getComputedStyle(window.__vdlGraph.canvas.gl.element).display") == "none"
        group = p.eval("() => window.__vdlGraph.data.nodes.find((n) => n.type === 'group')")
        fill = p.eval("(id) => getComputedStyle(document.querySelector(`g.node[data-id='${id}'] rect.box`))"
                      ".fill.match(/\\d+/g).slice(0, 3).map(Number)", group["id"])
        x, y = p.to_screen(group["x"] + 3, group["y"] + group["h"] / 2)
        assert close(p.shot().getpixel((int(x), int(y))), tuple(fill), 4)  # the SVG box shows
        p.page.mouse.click(*p.to_screen(group["x"] + group["w"] / 2, group["y"] + group["h"] / 2))
        p.page.wait_for_function(  # the SVG took the click: the group is expanded
            "(id) => window.__vdlGraph.data.frames.some((f) => f.id === id)", arg=group["id"])
        expand_all(p, 1002)
        assert p.renderer == "webgl"
        item = p.eval("() => window.__vdlGraph.data.nodes.find((n) => n.type === 'op' && n.title === 'Relu')")
        p.look_at(item, 0.25)
        x, y = p.to_screen(item["x"] + item["w"] / 2, item["y"] + item["h"] / 2)
        assert close(p.shot().getpixel((int(x), int(y))), rgb(p.colors()["categories"][item["category"]][0]))
    finally:
        p.close()
    small = GLPage(browser, server.url, "file:0", renderer="auto")
    try:
        small.page.wait_for_timeout(1500)  # past the idle callback's 1 s deadline
        assert small.eval("() => window.__vdlGraph.canvas.gl") is None
        assert small.eval("() => document.querySelectorAll('canvas.graph-gl').length") == 0
    finally:
        small.close()


def test_expand_and_collapse_by_clicks(chain):
    p = chain
    assert p.renderer == "webgl"
    before = p.eval("() => window.__vdlGraph.data.nodes.length")
    group = p.eval("() => window.__vdlGraph.data.nodes.find((n) => n.type === 'group')")
    p.look_at(group, 1)
    p.page.mouse.click(*p.to_screen(group["x"] + group["w"] / 2, group["y"] + group["h"] / 2))
    p.page.wait_for_function(
        "(id) => window.__vdlGraph.data.frames.some((f) => f.id === id)", arg=group["id"])
    p.wait_ready()
    after = p.eval("() => window.__vdlGraph.data.nodes.length")
    assert after > before
    frame = p.eval("(id) => window.__vdlGraph.data.frames.find((f) => f.id === id)", group["id"])
    p.page.mouse.click(*p.to_screen(frame["x"] + 12, frame["y"] + 10))  # its head: collapse
    p.page.wait_for_function(
        "(id) => !window.__vdlGraph.data.frames.some((f) => f.id === id)", arg=group["id"])
    p.wait_ready()
    assert p.eval("() => window.__vdlGraph.data.nodes.length") == before


def test_the_first_expand_draws_its_frame_title_from_glyphs_made_up_front(browser, server):
    """The first frame on screen brings the first "− title": a glyph first seen re-uploads
    the whole atlas in the middle of drawing the expand, so our labels' glyphs are made with
    the atlas."""
    p = GLPage(browser, server.url, "file:3")
    try:
        assert p.eval("() => window.__vdlGraph.data.frames.length") == 0
        group = p.eval("() => window.__vdlGraph.data.nodes.find((n) => n.type === 'group')")
        p.look_at(group, 1)
        glyphs = "() => window.__vdlGraph.canvas.gl.atlas.index.size"
        atlas = p.eval(glyphs)
        p.page.mouse.click(*p.to_screen(group["x"] + group["w"] / 2, group["y"] + group["h"] / 2))
        p.page.wait_for_function(
            "(id) => window.__vdlGraph.data.frames.some((f) => f.id === id)", arg=group["id"])
        p.wait_ready()
        p.eval("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        assert p.eval("() => window.__vdlGraph.canvas.gl.run.length") > 0
        assert p.eval("() => window.__vdlGraph.canvas.gl.atlas.index.has('b−')")
        assert p.eval(glyphs) == atlas
    finally:
        p.close()


def test_find_next_and_previous_centre_the_hit(chain):
    p = chain
    p.page.fill("#graph-find", "residual/Add")
    p.page.wait_for_function("() => document.querySelector('.find-count').textContent.includes('found')")
    seen = []
    for key, want in (("Enter", "1 / "), ("Enter", "2 / "), ("Shift+Enter", "1 / ")):
        p.page.locator("#graph-find").press(key)
        p.page.wait_for_function("(w) => document.querySelector('.find-count').textContent.startsWith(w)", arg=want)
        # the count changes first; the match is marked once it is revealed and centred
        p.page.wait_for_function("() => { const f = window.__vdlGraph.finder;"
                                 " return f.index >= 0 && window.__vdlGraph.canvas.current === f.matches[f.index].id; }")
        current = p.eval("() => window.__vdlGraph.canvas.current")
        item = p.node(current)
        assert item is not None and item["subtitle"].endswith("residual")
        cx, cy = p.centre_of_view()
        assert abs(cx - (item["x"] + item["w"] / 2)) < 2 and abs(cy - (item["y"] + item["h"] / 2)) < 2
        assert p.renderer == "webgl"
        seen.append(current)
    assert seen[0] != seen[1] and seen[2] == seen[0]
    # the current match is outlined on screen
    image = p.shot()
    item = p.node(seen[0])
    x, y = p.to_screen(item["x"] + item["w"] / 2, item["y"] + 1)
    assert close(image.getpixel((int(x), int(y))), rgb("#e8590c"), 30)


def test_hover_and_selection(chain):
    p = chain
    expand_all(p, 1002)
    item = p.eval("() => window.__vdlGraph.data.nodes.find((n) => n.type === 'op' && n.title === 'Relu')")
    p.look_at(item, 0.25)
    palette = p.colors()["categories"]
    x, y = p.to_screen(item["x"] + item["w"] / 2, item["y"] + item["h"] / 2)
    p.page.mouse.move(x, y)
    # the tooltip is the op's full name (docs/graph_view.md), as the SVG drawing's <title> is
    p.page.wait_for_function("(name) => document.querySelector('canvas.graph-gl').title === name",
                             arg=item["name"])
    assert item["name"].endswith("/act/Relu")
    p.eval("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    hovered = p.shot().getpixel((int(x), int(y)))
    fill = rgb(palette["activation"][0])
    assert not close(hovered, fill, 3) and all(h <= f for h, f in zip(hovered, fill))  # darker
    p.page.mouse.click(x, y)
    p.page.locator(".graph-props").get_by_text(item["subtitle"]).first.wait_for()
    assert p.eval("() => window.__vdlGraph.selected") == item["id"]
    p.look_at(item, 1)
    image = p.shot()
    bx, by = p.to_screen(item["x"] + item["w"] / 2, item["y"] + 0.5)
    assert close(image.getpixel((int(bx), int(by))), rgb("#2f6fde"), 40)  # the selection's stroke


def test_minimap_click_moves_the_view(chain):
    p = chain
    expand_all(p, 1002)
    p.page.locator("canvas.graph-minimap").wait_for()
    height = p.eval("() => window.__vdlGraph.data.height")
    target = (p.eval("() => window.__vdlGraph.data.width") / 2, height * 0.75)
    before = p.centre_of_view()
    mx, my = p.eval("([x, y]) => window.__vdlGraph.canvas.minimap.toMap(x, y)", list(target))
    box = p.page.locator("canvas.graph-minimap").bounding_box()
    p.page.mouse.click(box["x"] + mx, box["y"] + my)
    p.page.wait_for_function(f"() => window.__vdlGraph.canvas.pz.toGraph(0, 0)[1] > {height * 0.5}")
    after = p.centre_of_view()
    per_px = height / box["height"]  # graph px per minimap px: the click's precision
    assert abs(after[1] - target[1]) < 2 * per_px and abs(after[1] - before[1]) > height * 0.5


def test_minimap_draws_each_box_in_its_colour(chain):
    """The minimap's image (drawn pixel by pixel): boxes in their categories' stroke
    colours, the margin clear."""
    p = chain
    expand_all(p, 1002)
    found = p.eval("""() => {
      const m = window.__vdlGraph.canvas.minimap;
      const img = m.base.getContext('2d').getImageData(0, 0, m.base.width, m.base.height).data;
      const colors = new Map();
      for (let i = 0; i < img.length; i += 4) {
        const key = `${img[i]},${img[i + 1]},${img[i + 2]},${img[i + 3]}`;
        colors.set(key, (colors.get(key) || 0) + 1);
      }
      const n = window.__vdlGraph.data.nodes[0];
      const x = Math.floor(m.ox + (n.x + n.w / 2) * m.s);
      const y = Math.floor(m.oy + (n.y + n.h / 2) * m.s);
      return { colors: Object.fromEntries(colors), first: Array.from(img.slice((y * m.base.width + x) * 4, (y * m.base.width + x) * 4 + 4)),
               corner: Array.from(img.slice(0, 4)) };
    }""")
    colors = {tuple(map(int, k.split(","))): v for k, v in found["colors"].items()}
    assert found["corner"] == [0, 0, 0, 0]
    strokes = {rgb(c) for c in re.findall(r"\['#[0-9a-f]{6}', '(#[0-9a-f]{6})'\]", COLORS_JS.read_text())}
    assert found["first"][3] == 255 and tuple(found["first"][:3]) in strokes  # a box's pixel
    assert colors.get((*rgb("#3465a4"), 255), 0) > 10  # layer boxes (MatMul)
    assert sum(n for (_, _, _, a), n in colors.items() if a == 0) > 0  # the margin


def test_keyboard_pan_zoom_and_node_navigation(chain):
    p = chain
    expand_all(p, 1002)
    canvas = p.page.locator("canvas.graph-gl")
    canvas.focus()
    k0, tx0 = p.eval("() => [window.__vdlGraph.canvas.pz.k, window.__vdlGraph.canvas.pz.tx]")
    p.page.keyboard.press("+")
    p.page.wait_for_function(f"() => Math.abs(window.__vdlGraph.canvas.pz.k - {k0 * 1.25}) < 1e-9")
    p.page.keyboard.press("ArrowLeft")
    p.page.wait_for_function(f"() => window.__vdlGraph.canvas.pz.tx !== {tx0}")
    p.page.keyboard.press("-")
    p.page.wait_for_function(f"() => Math.abs(window.__vdlGraph.canvas.pz.k - {k0}) < 1e-9")
    p.page.keyboard.press("Tab")  # the first node, in reading order
    live = p.page.locator(".graph-stage [aria-live]")
    p.page.wait_for_function("() => document.querySelector('.graph-stage [aria-live]').textContent.includes('node 1 of 1,002')"
                             " || document.querySelector('.graph-stage [aria-live]').textContent.includes('node 1 of 1002')")
    assert live.text_content().startswith("input")
    p.page.keyboard.press("Alt+ArrowDown")  # along the edge out of the input
    p.page.wait_for_function("() => document.querySelector('.graph-stage [aria-live]').textContent.startsWith('Next along an edge: MatMul')")
    cursor = p.eval("() => window.__vdlGraph.canvas.gl.cursor")
    assert cursor and p.node(cursor)["title"] == "MatMul"
    assert p.eval("() => document.activeElement.classList.contains('graph-gl')")
    p.page.keyboard.press("Enter")  # selects it: the properties panel shows it
    p.page.locator(".graph-props .props-title").get_by_text("MatMul").wait_for()
    assert p.eval("() => window.__vdlGraph.selected") == cursor


def test_node_styles_fill_the_boxes(chain):
    p = chain
    expand_all(p, 1002)
    item = p.eval("() => window.__vdlGraph.data.nodes.find((n) => n.type === 'op')")
    p.eval("(id) => window.__vdlGraph.canvas.setNodeStyle(new Map([[id, {fill: '#ff00ff', badge: '12 ms'}]]))", item["id"])
    p.look_at(item, 0.25)
    x, y = p.to_screen(item["x"] + item["w"] / 2, item["y"] + item["h"] / 2)
    assert close(p.shot().getpixel((int(x), int(y))), (255, 0, 255))
    p.eval("() => window.__vdlGraph.canvas.setNodeStyle(null)")
    p.look_at(item, 0.25)
    assert close(p.shot().getpixel((int(x), int(y))), rgb(p.colors()["categories"][item["category"]][0]))


def test_webgl_view_exports_the_whole_graph_as_svg(chain, tmp_path):
    p = chain
    expand_all(p, 1002)
    with p.page.expect_download() as info:
        p.page.click("#graph-export-svg")
    info.value.save_as(tmp_path / "chain.svg")
    root = ET.parse(tmp_path / "chain.svg").getroot()
    drawn = [g for g in root.iter(f"{SVG_NS}g") if "node" in (g.get("class") or "").split()]
    assert len(drawn) == 1002


def test_small_graph_is_svg_and_exports(browser, server, tmp_path):
    p = GLPage(browser, server.url, "file:0", renderer="auto")
    try:
        assert p.renderer == "svg"
        p.page.click("#graph-fit")  # all on screen: every box is an element of the SVG
        p.page.wait_for_function("() => document.querySelectorAll('svg.graph-svg g.node').length === 17")
        with p.page.expect_download() as info:
            p.page.click("#graph-export-svg")
        info.value.save_as(tmp_path / "cnn.svg")
        root = ET.parse(tmp_path / "cnn.svg").getroot()
        assert len([g for g in root.iter(f"{SVG_NS}g") if "node" in (g.get("class") or "").split()]) == 17
    finally:
        p.close()


def test_without_webgl2_the_view_says_so_and_draws_svg(browser, server):
    no_webgl = """{ const get = HTMLCanvasElement.prototype.getContext;
        HTMLCanvasElement.prototype.getContext = function (kind, ...rest) {
          return kind === 'webgl2' ? null : get.call(this, kind, ...rest); }; }"""
    p = GLPage(browser, server.url, "file:1", renderer="webgl", init_script=no_webgl)
    try:
        assert p.renderer == "svg"
        note = p.page.locator(".graph-note")
        note.wait_for()
        assert "WebGL2 is not available" in note.text_content()
        assert p.eval("() => document.querySelectorAll('svg.graph-svg g.node').length") > 0
    finally:
        p.close()


def test_diff_colours_both_webgl_sides(browser, mlp_diff_server):
    diff_server = mlp_diff_server
    # the server's url ends with '/': a page at '//', which puts the diff in its URL too
    p = GLPage(browser, diff_server.url, "file:0")
    try:
        p.page.select_option("#graph-compare", "file:1")
        p.page.wait_for_function("() => document.querySelector('.graph-diff').dataset.state === 'ready'")
        sides = {"before": "window.__vdlGraph.canvas", "after": "window.__vdlGraph.differ.canvas"}
        assert [p.eval(f"() => {s}.renderer") for s in sides.values()] == ["webgl", "webgl"]
        p.eval("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        image = p.shot()
        expect = {("before", "fc2"): "#f0a000", ("before", "act"): "#d62728", ("after", "squash"): "#1a9e3f"}
        for (side, name), color in expect.items():
            stage = sides[side]
            x, y = p.eval(f"""(name) => {{ const c = {stage}; const n = c.data.nodes.find((m) => m.subtitle === name
                    || m.title === name || (m.id && m.name === name));
                const r = c.active.element.getBoundingClientRect();
                return [r.left + (n.x + n.w / 2) * c.pz.k + c.pz.tx, r.top + n.y * c.pz.k + c.pz.ty + 1]; }}""", name)
            assert close(image.getpixel((int(x), int(y))), rgb(color), 40), (side, name)
        # the two sides pan and zoom together
        p.eval("() => window.__vdlGraph.zoomFrame(1.5)")
        p.page.wait_for_function("() => { const a = window.__vdlGraph.canvas.pz;"
                                 " const b = window.__vdlGraph.differ.canvas.pz; return a.k === b.k && a.tx === b.tx; }")
    finally:
        p.close()
