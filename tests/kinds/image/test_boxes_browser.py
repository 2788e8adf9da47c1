"""Boxes over an image in headless Chromium: drawn at their pixel positions over the image
(read off a screenshot), a class unticked hides its boxes, the score threshold hides the
boxes below it; an image without boxes shows no box controls."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tests.helpers.pages import PageWatch
from tests.helpers.server import serving
from visualdl import LogWriter

pytestmark = pytest.mark.browser

CARD = '.card[data-run="run"][data-tag="det"]'
BOXES = [[10, 10, 50, 40], [60, 20, 90, 70], [20, 50, 40, 75]]
LABELS = ["cat", "dog", "cat"]
SCORES = [0.9, 0.3, 0.6]
CAT, DOG = (0xFF, 0x2D, 0x55), (0x00, 0xE6, 0x76)  # the first two of BOX_COLORS


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("boxes-view")
    with LogWriter(logdir=str(root / "run")) as w:
        w.add_image("det", np.zeros((80, 100, 3), np.uint8), 0, boxes=BOXES, labels=LABELS,
                    scores=SCORES)
        w.add_image("plain", np.zeros((8, 8, 3), np.uint8), 0)
    return root


def _geometry(page) -> dict:
    """Where the image's pixels are on screen: object-fit: contain inside the <img> box."""
    return page.evaluate(
        """(sel) => { const img = document.querySelector(sel + ' .boxed img');
          const r = img.getBoundingClientRect();
          const s = Math.min(r.width / img.naturalWidth, r.height / img.naturalHeight);
          return { s, x: r.left + (r.width - img.naturalWidth * s) / 2,
                   y: r.top + (r.height - img.naturalHeight * s) / 2 }; }""", CARD)


def _near(shot: np.ndarray, x: float, y: float, color, reach: int = 2) -> bool:
    """Whether a pixel within ``reach`` of (x, y) has ``color`` (anti-aliasing aside)."""
    xi, yi = int(round(x)), int(round(y))
    patch = shot[yi - reach:yi + reach + 1, xi - reach:xi + reach + 1, :3].astype(int)
    return bool((np.abs(patch - np.array(color)).max(axis=2) <= 40).any())


def _shot(page) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(page.screenshot())).convert("RGB"))


def _shown(page) -> int:
    return int(page.locator(f"{CARD} .box-controls").get_attribute("data-shown"))


def test_boxes_drawn_filtered_by_class_and_threshold(browser, logdir):
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    watch = PageWatch(page)
    with serving(logdir) as server:
        page.goto(f"{server.url}?tab=images")
        page.locator(CARD).scroll_into_view_if_needed()
        page.wait_for_function(f"() => document.querySelectorAll('{CARD} svg.box-layer g.box')"
                               f".length === 3")
        page.wait_for_function(f"() => document.querySelector('{CARD} .boxed img').complete")
        assert _shown(page) == 3
        g = _geometry(page)
        assert g["s"] > 1  # the 100-pixel image is scaled up: positions must scale too
        at = lambda px, py: (g["x"] + px * g["s"], g["y"] + py * g["s"])  # noqa: E731
        shot = _shot(page)
        assert _near(shot, *at(10, 25), CAT)   # the first cat's left edge
        assert _near(shot, *at(50, 30), CAT)   # its right edge
        assert _near(shot, *at(90, 45), DOG)   # the dog's right edge
        assert _near(shot, *at(75, 70), DOG)   # its bottom edge
        assert not _near(shot, *at(30, 30), CAT, reach=1)  # inside: the image's own black
        assert not _near(shot, *at(5, 25), CAT, reach=1)   # outside, left of the edge
        # the class filter lists the labels present, with counts, all ticked
        classes = page.locator(f"{CARD} input[name=box-class]")
        assert [classes.nth(i).get_attribute("value") for i in range(classes.count())] == \
            ["cat", "dog"]
        assert page.locator(f"{CARD} .box-class").all_inner_texts() == ["cat (2)", "dog (1)"]
        page.locator(f"{CARD} input[name=box-class][value=cat]").uncheck()
        assert _shown(page) == 1
        shot = _shot(page)
        assert not _near(shot, *at(10, 25), CAT) and _near(shot, *at(90, 45), DOG)
        page.locator(f"{CARD} input[name=box-class][value=cat]").check()
        # the threshold: dog (0.3) goes at 0.5, the second cat (0.6) at 0.7
        slider = page.locator(f"{CARD} input[name=box-threshold]")
        for value, shown in (("0.5", 2), ("0.7", 1), ("0", 3)):
            slider.evaluate("(s, v) => { s.value = v; s.dispatchEvent(new Event('input')); }",
                            value)
            assert _shown(page) == shown, value
            if value == "0.5":
                shot = _shot(page)
                assert not _near(shot, *at(90, 45), DOG) and _near(shot, *at(10, 25), CAT)
                assert _near(shot, *at(20, 62), CAT)  # the 0.6 cat's left edge
            if value == "0.7":
                assert not _near(_shot(page), *at(20, 62), CAT)
        # an image without boxes: no overlay, no controls
        plain = '.card[data-run="run"][data-tag="plain"]'
        page.locator(plain).scroll_into_view_if_needed()
        page.wait_for_selector(f"{plain} .image-frame img")
        assert page.locator(f"{plain} svg.box-layer").count() == 0
        assert page.locator(f"{plain} .box-controls").is_hidden()
        watch.finish()
    assert watch.errors == []
    page.close()
