"""The model diff in a real headless Chromium: "Compare with…" in the graph view, the other
model drawn beside the open one, coloured ops, the listed changes, the summary, the SVG and
JSON exports, and the messages for unrelated models and a file that is no model."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import onnx
import pytest
from PIL import Image

from tests.helpers.http import Client
from tests.helpers.pages import PageWatch
from tests.helpers.server import serving

from .diff_models import mlp, unrelated

pytestmark = pytest.mark.browser

GREEN, RED, AMBER = "#1a9e3f", "#d62728", "#f0a000"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    root = tmp_path_factory.mktemp("diffbrowser")
    paths = [root / n for n in ("before.onnx", "after.onnx", "unrelated.onnx", "bad.onnx")]
    onnx.save(mlp(), paths[0])
    onnx.save(mlp(extra_tanh=True, drop_relu=True, w2_scale=1.5), paths[1])
    onnx.save(unrelated(), paths[2])
    paths[3].write_bytes(b"not a model at all")
    with serving(models=paths) as handle:
        yield Client(handle.url)


@pytest.fixture
def page(browser, client):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, accept_downloads=True)
    page = context.new_page()
    watch = PageWatch(page)
    page.goto(f"{client.url}/?tab=graph&graph_model=file:0")
    page.wait_for_function("() => window.__vdlGraph && window.__vdlGraph.svg.dataset.state === 'ready'",
                           timeout=20000)
    yield page, watch
    context.close()


def _compare(page, model: str, state: str = "ready") -> None:
    page.select_option("#graph-compare", model)
    page.wait_for_function(f"() => document.querySelector('.graph-diff').dataset.state === '{state}'",
                           timeout=20000)


def _marks(page, which: int) -> dict[str, tuple[str, str]]:
    """data-id -> (status, stroke of its box) of the coloured ops of drawing ``which``."""
    marks = page.evaluate("""(which) => Object.fromEntries(
        [...document.querySelectorAll('svg.graph-svg')[which].querySelectorAll('g.node[data-diff]')]
        .map((g) => [g.dataset.id, [g.dataset.diff, g.querySelector('rect.box').getAttribute('stroke')]]))""",
                         which)
    return {k: tuple(v) for k, v in marks.items()}


def test_diff_colours_lists_and_exports(page, client, tmp_path):
    page, watch = page
    _compare(page, "file:1")
    diff = client.get("/api/graph/diff", model="file:0", other="file:1").json()
    ids = {item["before"]["name"]: item["before"]["id"] for item in diff["removed"] + diff["changed"]}
    added = {item["after"]["name"]: item["after"]["id"] for item in diff["added"]}
    changed_after = diff["changed"][0]["after"]["id"]
    # left: the open model, removed in red and changed in amber; right: added and changed
    assert _marks(page, 0) == {ids["act"]: ("removed", RED), ids["fc2"]: ("changed", AMBER)}
    assert _marks(page, 1) == {added["squash"]: ("added", GREEN), changed_after: ("changed", AMBER)}
    # the listed changes, exactly
    listed = page.evaluate("""() => [...document.querySelectorAll('.graph-diff li.changed')].map((li) =>
        [li.querySelector('.linkish').textContent,
         [...li.querySelectorAll('ul.changes li')].map((x) => x.textContent)])""")
    assert listed == [["fc2 (MatMul)", [
        "weight W2 (input 1): float32 4×2 → float32 4×2, values differ (max |Δ| 0.500)"]]]
    assert page.locator(".graph-diff li.removed").all_text_contents() == ["act (Relu)"]
    assert page.locator(".graph-diff li.added").all_text_contents() == ["squash (Tanh)"]
    assert page.locator(".graph-diff .graph-diff-counts").text_content() == (
        "1 changed, 1 added, 1 removed, 2 unchanged (matched: 3 by name, 0 by structure)")
    rows = page.evaluate("""() => [...document.querySelectorAll('.graph-diff table.graph-diff-table')[1]
        .querySelectorAll('tr')].slice(1).map((tr) => [...tr.cells].map((td) => td.textContent))""")
    assert rows == [["MatMul", "2", "2"], ["Identity", "1", "1"], ["Relu", "1", "0"], ["Tanh", "0", "1"]]
    # the colours are on screen: the amber border of the changed op on the left
    box = page.evaluate("""(id) => { const r = document.querySelectorAll('svg.graph-svg')[0]
        .querySelector(`g.node[data-id="${id}"] rect.box`).getBoundingClientRect();
        return {x: r.x, y: r.y, w: r.width}; }""", ids["fc2"])
    shot = tmp_path / "diff.png"
    page.screenshot(path=str(shot))
    image = Image.open(shot).convert("RGB")
    border = [image.getpixel((int(box["x"] + box["w"] / 2), int(box["y"]) + dy)) for dy in range(4)]
    assert any(r > 200 and 120 < g < 200 and b < 60 for r, g, b in border), border
    # pan and zoom of the two sides are synced
    page.evaluate("() => window.__vdlGraph.zoomFrame(1.5)")
    page.wait_for_function("() => { const [a, b] = document.querySelectorAll('svg.graph-svg .viewport');"
                           " return a.getAttribute('transform') === b.getAttribute('transform'); }",
                           timeout=5000)
    # SVG export: both sides with their colours
    with page.expect_download() as info:
        page.click("#graph-diff-svg")
    path = tmp_path / "diff.svg"
    info.value.save_as(path)
    strokes = [r.get("stroke") for r in ET.parse(path).getroot().iter("{http://www.w3.org/2000/svg}rect")]
    assert (strokes.count(AMBER), strokes.count(RED), strokes.count(GREEN)) == (2, 1, 1)
    texts = [t.text for t in ET.parse(path).getroot().iter("{http://www.w3.org/2000/svg}text")]
    assert "before.onnx" in texts and "after.onnx" in texts
    # JSON export: the route's answer as a file
    with page.expect_download() as info:
        page.click("#graph-diff-json")
    info.value.save_as(tmp_path / "diff.json")
    assert json.loads((tmp_path / "diff.json").read_text()) == diff
    assert watch.errors == []


def test_unrelated_models_say_so(page):
    page, _ = page
    _compare(page, "file:2")
    assert page.locator(".graph-diff .graph-diff-message").text_content() == (
        "no op of one model matched an op of the other: these look like unrelated models")
    assert page.locator(".graph-diff .graph-diff-counts").text_content().startswith(
        "0 changed, 1 added, 4 removed")


def test_a_file_that_is_no_model_is_a_message(page):
    page, _ = page
    _compare(page, "file:3", state="error")
    text = page.locator(".graph-diff .graph-error").text_content()
    assert text.startswith("Cannot compare with bad.onnx: other: ")
    assert "neither an ONNX model" in text
    # and the view still works: another comparison opens
    _compare(page, "file:1")
    assert page.locator(".graph-diff li.added").all_text_contents() == ["squash (Tanh)"]
