"""One logdir holding a run of ours, a TensorBoard run and a VisualDL 2.x run, served by the
real ``visualdl`` command and shown by Chromium: all three runs in the scalars view, and an
image and a histogram from each, with no console error."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from tests.helpers.cli import start_cli
from tests.helpers.pages import card_summary, wait_ready
from tests.sources.tfevents.tbwrite import EventWriter
from tests.sources.vdl2.common import LOGS, TRAIN
from visualdl import LogWriter

pytestmark = pytest.mark.browser

RUNS = ("ours", "tb", "vdl2")
# each run's image tag and its (width, height) on the page
IMAGES = {"ours": ("sample", (7, 5)), "tb": ("sample", (9, 4)), "vdl2": ("sample", (8, 6))}


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("mixed")
    rng = np.random.default_rng(5)
    with LogWriter(logdir=str(root / "ours")) as w:
        for step in range(20):
            w.add_scalar("loss", 2.0 / (step + 1), step, walltime=1.7e9 + step)
        w.add_image("sample", rng.integers(0, 256, (5, 7, 3), dtype=np.uint8), 3)
        w.add_histogram("weights", rng.normal(0, 1, 100), 3)
    with EventWriter(str(root / "tb")) as w:
        for step in range(20):
            w.add_scalar("loss", 1.5 / (step + 1), step, 1.7e9 + step)
        w.add_image("sample", rng.integers(0, 256, (4, 9, 3), dtype=np.uint8), 3, 1.7e9 + 3)
        w.add_histogram("weights", rng.normal(0, 1, 100), 3, 1.7e9 + 3)
    shutil.copytree(LOGS / "train", root / "vdl2")
    return root


def test_mixed_logdir_in_chromium(watched, logdir, tmp_path):
    page = watched.page
    with start_cli("--logdir", str(logdir)) as cli:
        try:
            page.goto(cli.url)
            page.wait_for_selector('.card[data-tag="loss"]')
            wait_ready(page, ["loss"])
            loss = card_summary(page)["loss"]
            assert sorted(set(loss["runs"])) == list(RUNS)
            assert loss["traces"] == 2 * len(RUNS)  # raw + smoothed per run
            assert loss["points"] == [20] * (2 * len(RUNS))
            page.screenshot(path=str(tmp_path / "mixed-scalars.png"), full_page=True)

            page.goto(f"{cli.url}?tab=images")
            for run, (tag, (width, height)) in IMAGES.items():
                card = f'.card[data-run="{run}"][data-tag="{tag}"]'
                _wait_state(page, card)
                img = f"{card} .image-frame img"
                page.wait_for_function(
                    "(s) => { const i = document.querySelector(s); return i && i.complete"
                    " && i.naturalWidth > 0; }", arg=img)
                size = page.locator(img).evaluate("(i) => [i.naturalWidth, i.naturalHeight]")
                assert size == [width, height], run
            # the VisualDL run shows both of its files' steps (VisualDL shows only the newest)
            vdl2 = '.card[data-run="vdl2"][data-tag="sample"]'
            assert page.locator(vdl2).get_attribute("data-total") == str(len(TRAIN["images"]))
            page.screenshot(path=str(tmp_path / "mixed-images.png"), full_page=True)

            page.goto(f"{cli.url}?tab=histograms")
            for run in RUNS:
                card = f'.card[data-run="{run}"][data-tag="weights"]'
                _wait_state(page, card)
                traces = page.locator(f"{card} .js-plotly-plot").evaluate("(p) => p.data.length")
                assert traces == (3 if run == "vdl2" else 1), run  # one ridge per step
            page.screenshot(path=str(tmp_path / "mixed-histograms.png"), full_page=True)
        finally:
            watched.finish()  # before the server stops: its polling would report that


def _wait_state(page, selector: str) -> None:
    page.locator(selector).scroll_into_view_if_needed()
    page.wait_for_function(
        "(s) => { const c = document.querySelector(s); return c && c.dataset.state === 'ready'; }",
        arg=selector)
