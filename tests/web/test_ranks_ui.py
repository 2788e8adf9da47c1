"""A data-parallel run in headless Chromium: the rank selector switches the curves drawn
(rank 0 by default), a chart's per-rank overlay draws every rank, the elastic restarts are
marked at their steps, the run table shows world size and restarts, and the run's
checkpoints are listed with their steps. The logs are written in-process by ranked
LogWriters (tests.helpers.ranks)."""

from __future__ import annotations

import pytest

from tests.helpers.ranks import CHECKPOINTS, RESIZES, STEPS, WORLD, rank_value, write_ranked
from tests.helpers.server import serving

pytestmark = pytest.mark.browser

CARD = '.card[data-tag="loss"]'


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(write_ranked(tmp_path_factory.mktemp("ranks_ui"))) as handle:
        yield handle


def _open(watched, server):
    page = watched.page
    page.goto(f"{server.url}?tab=scalars&smoothing=0")
    page.wait_for_selector(f"{CARD}[data-state=ready]")
    page.wait_for_selector(".workers-panel:not([hidden])")
    return page


def _lines(page):
    """{trace name: y values} of the loss chart's drawn lines."""
    return page.eval_on_selector(
        f"{CARD} .plot", "p => Object.fromEntries(p.data.filter((t) => t.meta.role === 'raw')"
        ".map((t) => [t.name, t.y]))")


def _wait_lines(page, expected):
    page.wait_for_function(
        """([sel, want]) => { const p = document.querySelector(sel + ' .plot');
            if (!p || !p.data) return false;
            const got = Object.fromEntries(p.data.filter((t) => t.meta.role === 'raw')
              .map((t) => [t.name, t.y]));
            return JSON.stringify(got) === JSON.stringify(want); }""",
        arg=[CARD, expected])


def test_rank_selector_switches_the_curves(watched, server):
    page = _open(watched, server)
    one = [float(s) for s in range(STEPS)]
    _wait_lines(page, {"dp": [rank_value(0, s) for s in range(STEPS)], "one": one})
    options = page.eval_on_selector_all("select[name=rank] option", "os => os.map((o) => o.value)")
    assert options == [str(r) for r in range(WORLD)]
    assert page.eval_on_selector("select[name=rank]", "s => s.value") == "0"
    assert page.get_attribute(CARD, "data-rank") == "0"  # the note says so at the default too
    assert "rank 0" in page.locator(f"{CARD} .card-note").text_content()
    page.select_option("select[name=rank]", "2")
    # rank 2 of the data-parallel run; the run of one process keeps its one series
    _wait_lines(page, {"dp": [rank_value(2, s) for s in range(STEPS)], "one": one})
    assert page.get_attribute(CARD, "data-rank") == "2"
    assert "rank 2" in page.locator(f"{CARD} .card-note").text_content()
    assert "rank=2" in page.url
    # the card's CSV is what it draws: rank 2's values
    page.wait_for_function(f"() => document.querySelector('{CARD} a[data-format=csv]').href.includes('rank=2')")
    with page.expect_download() as info:
        page.click(f"{CARD} a[data-format=csv]")
    rows = [line.split(",") for line in open(info.value.path()).read().splitlines()]
    assert rows[0] == ["run", "rank", "step", "wall_time", "value"]
    assert [float(r[4]) for r in rows[1:] if r[0] == "dp"] == [rank_value(2, s) for s in range(STEPS)]
    page.select_option("select[name=rank]", "0")
    _wait_lines(page, {"dp": [rank_value(0, s) for s in range(STEPS)], "one": one})


def test_overlay_draws_every_rank(watched, server):
    page = _open(watched, server)
    button = page.locator(f"{CARD} button[name=overlay]")
    assert button.is_visible() and button.get_attribute("aria-pressed") == "false"
    button.click()
    want = {f"dp · rank {r}": [rank_value(r, s) for s in range(STEPS)] for r in range(WORLD)}
    want["one"] = [float(s) for s in range(STEPS)]
    _wait_lines(page, want)
    assert button.get_attribute("aria-pressed") == "true"
    assert page.get_attribute(CARD, "data-rank") == "all"
    dashes = page.eval_on_selector(
        f"{CARD} .plot", "p => p.data.filter((t) => t.meta.run === 'dp').map((t) => t.line.dash || 'solid')")
    assert len(set(dashes)) == WORLD  # each rank drawn in a line style of its own
    button.click()
    _wait_lines(page, {"dp": [rank_value(0, s) for s in range(STEPS)],
                       "one": [float(s) for s in range(STEPS)]})


def test_restarts_are_marked_at_their_steps(watched, server):
    page = _open(watched, server)
    marks = page.eval_on_selector(
        f"{CARD} .plot", """p => [(p.layout.shapes || []).filter((s) => s.name === 'resize-mark')
            .map((s) => [s.x0, s.x1]), (p.layout.annotations || [])
            .filter((a) => a.name === 'resize-mark').map((a) => [a.x, a.text, a.hovertext])]""")
    shapes, labels = marks
    assert shapes == [[step, step] for _, step, _ in RESIZES]
    assert labels == [[step, f"↻{restart}", f"dp: restart {restart} at step {step}, "
                       f"{size} worker{'s' if size != 1 else ''}"]
                      for restart, step, size in RESIZES]
    # drawn where the step is on the axis: the mark's pixel matches the axis' own mapping
    x_px = page.eval_on_selector(
        f"{CARD} .plot", """p => { const fl = p._fullLayout;
            const line = p.querySelectorAll('.shapelayer path')[0].getBBox();
            return [line.x, fl._size.l + fl.xaxis.l2p(fl.xaxis.d2l(8))]; }""")
    assert abs(x_px[0] - x_px[1]) < 2


def test_run_table_shows_world_size_and_restarts(watched, server):
    page = _open(watched, server)
    cell = '#runs li[data-run="{run}"] .run-cell[data-col="{col}"]'
    page.wait_for_selector(cell.format(run="dp", col="world"))
    assert page.locator(cell.format(run="dp", col="world")).text_content() == str(RESIZES[-1][2])
    assert page.locator(cell.format(run="dp", col="restarts")).text_content() == str(len(RESIZES))
    assert page.locator(cell.format(run="one", col="world")).text_content() == "–"
    assert page.locator('#runs .run-sort[data-sort="world"]').text_content().startswith("World size")


def test_checkpoints_are_listed_with_their_steps(watched, server):
    page = _open(watched, server)
    rows = page.eval_on_selector_all(
        '.run-workers[data-run="dp"] .checkpoints-table tbody tr',
        "rs => rs.map((r) => [...r.cells].map((c) => c.textContent))")
    assert rows == [[str(step), path] for step, path in CHECKPOINTS]
    caption = page.locator('.run-workers[data-run="dp"] .checkpoints-table caption').text_content()
    assert caption == "Checkpoints of dp"
    summary = page.locator('.run-workers[data-run="dp"] summary').text_content()
    assert summary == f"dp: world size {RESIZES[-1][2]} · {len(RESIZES)} restarts · 2 checkpoints"
    ranks = page.eval_on_selector_all(
        '.run-workers[data-run="dp"] .ranks-table tbody tr', "rs => rs.map((r) => r.cells[0].textContent)")
    assert ranks == [str(r) for r in range(WORLD)]
    assert page.locator('.run-workers[data-run="one"]').count() == 0
