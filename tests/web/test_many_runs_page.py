"""The scalars page over a sweep of 1,001 runs, in Chromium: the charts on screen ask for
more series than one batch request may hold (2,000), and every run's line is drawn."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.pages import card_summary, wait_ready
from tests.helpers.server import serving
from visualdl import LogWriter

pytestmark = pytest.mark.browser

RUNS = 1001  # two charts of 1,001 runs: 2,002 series
STEPS = 3


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root: Path = tmp_path_factory.mktemp("many-runs-page")
    for i in range(RUNS):
        with LogWriter(logdir=str(root / f"run{i:04d}")) as w:
            for step in range(STEPS):
                w.add_scalar("a", i + step / 10, step=step, walltime=1e9 + step)
                w.add_scalar("b", -i - step / 10, step=step, walltime=1e9 + step)
    with serving(root, load_timeout=120) as handle:
        yield handle


def test_two_charts_of_1001_runs_are_drawn_whole(watched, server):
    page = watched.page
    page.set_default_timeout(60_000)
    page.goto(server.url + "?smoothing=0")
    page.wait_for_selector('.card[data-tag="b"]')
    wait_ready(page, ["a", "b"])
    cards = card_summary(page)
    for tag, sign in (("a", 1), ("b", -1)):
        card = cards[tag]
        assert card["state"] == "ready"
        assert len(set(card["runs"])) == RUNS
        assert card["points"] == [STEPS] * len(card["points"])
    values = page.evaluate(
        """() => { const d = document.querySelector('.card[data-tag="b"] .plot').data;
                   const t = d.find((t) => t.name && t.name.startsWith('run1000'));
                   return Array.from(t.y); }""")
    assert values == pytest.approx([-1000.0, -1000.1, -1000.2])
