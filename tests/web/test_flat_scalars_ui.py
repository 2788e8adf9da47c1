"""A constant scalar (a learning rate logged every step) in headless Chromium: a flat line
at its value on an axis around it, not rounding noise of the smoothing magnified into a
square wave, nor the value on a -1..1 axis; a varying series is drawn as before."""

from __future__ import annotations

import math

import pytest

from tests.helpers.http import Client
from tests.helpers.pages import wait_ready
from tests.helpers.server import serving
from visualdl import LogWriter

pytestmark = pytest.mark.browser

LR = 0.003
STEPS = 200
# values that differ only by rounding: 0.1 + 0.2 and 0.3
ROUNDED = (0.1 + 0.2, 0.3)
TAGS = ("train/lr", "train/rounded", "train/zero", "loss")


def loss(step: int) -> float:
    return 1.0 / (1.0 + 0.05 * step) + 0.1 * math.sin(step)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("flat_ui")
    with LogWriter(logdir=str(root / "run")) as w:
        for step in range(STEPS):
            wall = 1e9 + step
            w.add_scalar("train/lr", LR, step, walltime=wall)
            w.add_scalar("train/rounded", ROUNDED[step % 2], step, walltime=wall)
            w.add_scalar("train/zero", 0.0, step, walltime=wall)
            w.add_scalar("loss", loss(step), step, walltime=wall)
    with serving(root) as handle:
        yield handle


def chart(page, tag: str) -> dict:
    """The y axis plotly drew for `tag` and the y values of each of its traces by role."""
    return page.evaluate(
        """(tag) => {
            const plot = document.querySelector(`.card[data-tag="${tag}"] .plot`);
            const y = plot._fullLayout.yaxis;
            return {
              range: y.range.slice(), autorange: y.autorange, type: y.type,
              ticks: [...plot.querySelectorAll('.ytick text')].map((t) => t.textContent),
              traces: Object.fromEntries(plot.data.map((d) => [d.meta.role, Array.from(d.y)])),
            };
        }""", tag)


def open_page(watched, server, query: str):
    page = watched.page
    page.goto(f"{server.url}?{query}")
    page.wait_for_selector(".card")
    wait_ready(page, list(TAGS))
    return page


def assert_flat(got: dict, value: float, role: str) -> None:
    lo, hi = got["range"]
    assert lo < value < hi, got["range"]
    span = hi - lo
    # an axis about the value: not rounding noise (1e-18 wide), not -1..1
    assert 0.01 * value <= span <= 0.5 * value, got["range"]
    ys = got["traces"][role]
    assert len(ys) == STEPS
    assert all(abs(y - value) <= 1e-12 * value for y in ys), sorted(set(ys))


@pytest.mark.parametrize("query,role", [
    ("", "smoothed"),  # the default smoothing, 0.6
    ("smoothing=0", "raw"),
    ("smoothing=0.99&outliers=true", "smoothed"),
    ("smode=running&savg=7", "smoothed"),
    ("logy=true", "smoothed"),
])
def test_a_constant_is_a_flat_line_at_its_value(watched, server, query, role):
    page = open_page(watched, server, query)
    lr = chart(page, "train/lr")
    rounded = chart(page, "train/rounded")
    if lr["type"] == "log":  # plotly's log axis range is in log10 units
        for got, value in ((lr, LR), (rounded, 0.3)):
            lo, hi = got["range"]
            assert lo < math.log10(value) < hi and 0.001 < hi - lo < 0.5, got["range"]
        assert all(abs(y - LR) <= 1e-12 * LR for y in lr["traces"][role])
    else:
        assert_flat(lr, LR, role)
        assert "0.003" in lr["ticks"], lr["ticks"]
        assert_flat(rounded, 0.3, role)
        zero = chart(page, "train/zero")
        assert zero["range"] == [-1, 1]  # around 0: +-1
        assert set(zero["traces"][role]) == {0}
    # the smoothed line of values that differ only by rounding stays within them
    assert all(min(ROUNDED) <= y <= max(ROUNDED) for y in rounded["traces"][role])


@pytest.mark.parametrize("query", ["", "smoothing=0"])
def test_a_varying_series_is_drawn_as_before(watched, server, query):
    page = open_page(watched, server, query)
    got = chart(page, "loss")
    assert got["autorange"] is True  # plotly's own range, as before
    values = [loss(s) for s in range(STEPS)]
    lo, hi = got["range"]
    assert lo < min(values) and max(values) < hi and hi - lo < 1.5 * (max(values) - min(values))
    if query == "":
        want = Client(server.url).json("/api/scalars", run="run", tag="loss", smoothing=0.6)["smoothed"]
        drawn = got["traces"]["smoothed"]
        assert len(drawn) == len(want)
        assert all(abs(a - b) <= 1e-12 * abs(b) for a, b in zip(drawn, want))
    else:
        assert got["traces"]["raw"] == pytest.approx(values, rel=1e-12)
