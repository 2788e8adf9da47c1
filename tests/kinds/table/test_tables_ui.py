"""The Tables view in Chromium: sort by a header (numbers numerically, empty last), filter
(text and ``column > value``), a thumbnail opened full size (its pixels), an audio cell that
plays, the step slider, a CSV of the rows shown, and 100,000 rows of which only those in
view are in the page, the last one reachable."""

from __future__ import annotations

import csv
import io

import pytest

from tests.kinds.table.common import BIG_ROWS, COLORS, NAMES, RATE

pytestmark = pytest.mark.browser

SMALL = '.card[data-tag="small"]'
BIG = '.card[data-tag="big"]'


@pytest.fixture()
def page(watched, tables_server):
    watched.page.goto(f"{tables_server.url}?tab=tables")
    yield watched.page
    watched.finish()


def _shown(page, card: str, step: int | None = None) -> None:
    page.locator(card).scroll_into_view_if_needed()
    want = "" if step is None else str(step)
    page.wait_for_function(
        "([s, want]) => { const c = document.querySelector(s); return c && c.dataset.shownStep"
        " !== undefined && (!want || c.dataset.shownStep === want); }", arg=[card, want])


def _column(page, card: str, col: int) -> list[str]:
    """The text of column ``col`` of the rows in the page, top to bottom."""
    return page.locator(card).evaluate(
        """(c, col) => [...c.querySelectorAll('.table-row')]
            .sort((a, b) => a.getAttribute('aria-rowindex') - b.getAttribute('aria-rowindex'))
            .map((r) => r.children[col].textContent)""", col)


def _sort(page, card: str, name: str) -> None:
    page.locator(f'{card} .table-th button', has_text=name).click()


def test_sort_by_numbers_then_text_and_reverse(page):
    _shown(page, SMALL, 5)
    assert _column(page, SMALL, 1) == [f"{n}5" for n in NAMES]  # logged order
    _sort(page, SMALL, "score")
    assert _column(page, SMALL, 2) == ["-1", "0.5", "2.25", "10", "NaN"]  # NaN last
    ascending = page.locator(f'{SMALL} .table-th[aria-sort="ascending"]')
    assert ascending.inner_text().startswith("score")
    _sort(page, SMALL, "score")
    assert _column(page, SMALL, 2) == ["10", "2.25", "0.5", "-1", "NaN"]
    _sort(page, SMALL, "name")
    assert _column(page, SMALL, 1) == ["alpha5", "bravo5", "charlie5", "delta5", "echo5"]


def test_filter_by_text_and_by_comparison(page):
    _shown(page, SMALL, 5)
    box = page.locator(f"{SMALL} .table-filter")
    box.fill("HO5")  # case-insensitive, any text cell
    page.wait_for_function("(s) => document.querySelector(s).textContent === '1 of 5 rows'",
                           arg=f"{SMALL} .table-count")
    assert _column(page, SMALL, 1) == ["echo5"]
    box.fill("score >= 0.5")
    page.wait_for_function("(s) => document.querySelector(s).textContent === '3 of 5 rows'",
                           arg=f"{SMALL} .table-count")
    assert _column(page, SMALL, 2) == ["0.5", "2.25", "10"]
    _sort(page, SMALL, "score")
    _sort(page, SMALL, "score")
    assert _column(page, SMALL, 0) == ["4", "1", "0"]  # the filter holds through a sort
    box.fill("")
    page.wait_for_function("(s) => document.querySelector(s).textContent === '5 rows'",
                           arg=f"{SMALL} .table-count")


def test_thumbnail_opens_full_size_with_its_pixels(page):
    _shown(page, SMALL, 5)
    page.locator(f'{SMALL} .table-row[data-row="2"] .table-thumb-btn').click()
    page.wait_for_function("() => { const i = document.querySelector('dialog.lightbox[open] img');"
                           " return i && i.complete && i.naturalWidth > 0; }")
    pixels = page.evaluate("""() => {
        const img = document.querySelector('dialog.lightbox img');
        const c = document.createElement('canvas');
        c.width = img.naturalWidth; c.height = img.naturalHeight;
        const g = c.getContext('2d');
        g.drawImage(img, 0, 0);
        const d = g.getImageData(3, 2, 1, 1).data;
        return [img.naturalWidth, img.naturalHeight, d[0], d[1], d[2]];
    }""")
    assert pixels == [8, 6, *COLORS[2]]
    caption = page.locator("dialog.lightbox .lightbox-caption").inner_text()
    assert "img, row 3" in caption and "8×6" in caption


def test_audio_cell_loads_and_plays(page):
    _shown(page, SMALL, 5)
    audio = page.locator(f'{SMALL} .table-row[data-row="4"] audio')
    duration = audio.evaluate("""(a) => new Promise((ok, fail) => {
        a.preload = 'auto';
        a.addEventListener('loadedmetadata', () => ok(a.duration), { once: true });
        a.addEventListener('error', () => fail(new Error('audio error')), { once: true });
        a.load();
    })""")
    assert duration == pytest.approx(1600 / RATE, abs=1e-3)
    assert page.locator(f'{SMALL} .table-row[data-row="1"] audio').count() == 0  # None


def test_step_slider_shows_the_other_step(page):
    _shown(page, SMALL, 5)
    page.locator(f"{SMALL} .step-btn").first.click()  # previous step
    _shown(page, SMALL, 0)
    page.wait_for_function("(s) => document.querySelector(s).textContent === 'delta'",
                           arg=f'{SMALL} .table-row[data-row="0"] .table-td:nth-child(2)')
    assert _column(page, SMALL, 1) == NAMES


def test_csv_holds_the_rows_shown_in_their_order(page):
    _shown(page, SMALL, 5)
    page.locator(f"{SMALL} .table-filter").fill("id < 3")
    page.wait_for_function("(s) => document.querySelector(s).textContent === '3 of 5 rows'",
                           arg=f"{SMALL} .table-count")
    _sort(page, SMALL, "name")
    with page.expect_download() as info:
        page.locator(f"{SMALL} .table-csv").click()
    download = info.value
    assert download.suggested_filename == "exp_small_5.csv"
    rows = list(csv.reader(io.StringIO(open(download.path(), encoding="utf-8").read())))
    assert rows[0] == ["id", "name", "score", "ok", "img", "clip"]
    assert [r[:4] for r in rows[1:]] == [["1", "alpha5", "2.25", "false"],
                                         ["0", "delta5", "0.5", "true"],
                                         ["2", "echo5", "-1", "true"]]
    assert rows[2][4].endswith("api/tables/blob?run=exp&tag=small&step=5&blob=0")
    assert rows[2][4].startswith("http://127.0.0.1:")
    assert rows[1][5] == "" and rows[2][5].endswith("&blob=4")  # the clips follow the images


def test_100k_rows_keep_only_the_rows_in_view_and_reach_the_last(page):
    _shown(page, BIG)
    assert page.locator(f"{BIG} .table-count").inner_text() == f"{BIG_ROWS:,} rows"
    in_dom = page.locator(f"{BIG} .table-row").count()
    assert 10 <= in_dom <= 60
    page.locator(f"{BIG} .table-scroll").evaluate("(s) => { s.scrollTop = s.scrollHeight; }")
    last = f'{BIG} .table-row[aria-rowindex="{BIG_ROWS + 1}"]'
    page.wait_for_selector(last)
    assert page.locator(f"{last} .table-td").all_inner_texts() == [
        str(BIG_ROWS - 1), str((BIG_ROWS - 1) * 7919 % 1000 / 10.0), f"row {BIG_ROWS - 1}"]
    assert page.locator(f"{BIG} .table-row").count() <= 60
    _sort(page, BIG, "value")  # sorting 100,000 rows returns to the top, smallest first
    page.wait_for_selector(f'{BIG} .table-row[aria-rowindex="2"]')
    assert _column(page, BIG, 1)[:3] == ["0", "0", "0"]


def test_new_data_elsewhere_keeps_the_table_where_it_was(watched, tmp_path):
    """A run that goes on logging (here a scalar) refreshes the page; the table shown, its
    sort and its scroll position stay."""
    from tests.helpers.server import serving
    from visualdl import LogWriter

    with LogWriter(logdir=str(tmp_path / "live")) as w:
        w.add_table("t", {"n": list(range(1000))}, 0)
    page = watched.page
    card = '.card[data-tag="t"]'
    with serving(tmp_path) as server:
        try:
            page.goto(f"{server.url}?tab=tables")
            _shown(page, card)
            _sort(page, card, "n")
            _sort(page, card, "n")  # descending
            page.locator(f"{card} .table-scroll").evaluate("(s) => { s.scrollTop = 14000; }")
            row = f'{card} .table-row[aria-rowindex="502"]'
            page.wait_for_selector(row)
            assert page.locator(row).inner_text() == "499"
            with LogWriter(logdir=str(tmp_path / "live")) as w:
                w.add_scalar("loss", 1.0, 0)
            page.wait_for_function("() => { document.getElementById('refresh').click();"
                                   " return !!document.getElementById('tab-scalars'); }",
                                   polling=500)
            assert page.locator(f"{card} .table-scroll").evaluate("(s) => s.scrollTop") == 14000
            assert page.locator(row).inner_text() == "499"
        finally:
            watched.finish()
