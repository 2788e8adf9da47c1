"""The Tensors view in Chromium: a small matrix as a table of its values, a large tensor as
a histogram with its statistics, and the step slider between them."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.server import serving
from visualdl import LogWriter

pytestmark = pytest.mark.browser


def test_values_and_histogram(watched, tmp_path):
    with LogWriter(logdir=str(tmp_path / "r")) as w:
        w.add_tensor("m", np.array([[1, 2, 3], [4, 5, 6]], np.int32), 0)
        w.add_tensor("m", np.array([[7.5, 8, 9], [10, 11, 12]]), 1)
        w.add_tensor("big", np.concatenate([np.zeros(9000), np.ones(3000)]), 0)
    page = watched.page
    with serving(tmp_path) as server:
        try:
            page.goto(f"{server.url}?tab=tensors")
            box = '.card[data-tag="m"] .tensor-box[data-step="1"]'
            page.wait_for_selector(box)
            cells = page.locator(f"{box} td").all_inner_texts()
            assert cells == ["7.5", "8", "9", "10", "11", "12"]
            page.locator('.card[data-tag="m"] .step-btn').first.click()
            page.wait_for_selector('.card[data-tag="m"] .tensor-box[data-step="0"]')
            assert page.locator('.card[data-tag="m"] td').all_inner_texts() == [
                "1", "2", "3", "4", "5", "6"]
            note = page.locator('.card[data-tag="m"] .card-note').first.inner_text()
            assert note == "2×3 · <i4 · 6 values"
            hist = '.card[data-tag="big"] .tensor-hist'
            page.locator('.card[data-tag="big"]').scroll_into_view_if_needed()
            page.wait_for_selector(hist)
            heights = page.locator(f"{hist} .tensor-bar").evaluate_all(
                "(bars) => bars.map((b) => b.style.height)")
            assert len(heights) == 30 and heights[0] == "100%" and heights[-1] == "33.3333%"
            assert "min 0 · max 1 · mean 0.25" in page.locator(hist).get_attribute("aria-label")
        finally:
            watched.finish()
