"""The profiler's Distributed tab in headless Chromium over a real server: the ranks' bars,
the slowest rank's text and the collectives table say what /api/profile/distributed says
for the real DDP traces; a single-worker run of ours says it has no communication; a run
whose ranks share no step shows the message; the console stays clean."""

from __future__ import annotations

import pytest

from tests.helpers.http import Client
from tests.helpers.pages import PageWatch
from tests.helpers.server import serving
from tests.kinds.profile.test_distributed import make_logdir

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(make_logdir(tmp_path_factory.mktemp("distributed"), unreadable=False)) as handle:
        yield handle


@pytest.fixture(scope="module")
def api(server):
    client = Client(server.url)
    yield client
    client.close()


@pytest.fixture()
def watched(browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    watch = PageWatch(page)
    yield watch
    assert watch.errors == []
    page.close()


def open_distributed(page, server, run: str, pane: str = "distributed") -> None:
    page.goto(f"{server.url}?tab=profiler&pane={pane}")
    page.wait_for_selector("select[name=profile-run] option", state="attached")
    if page.locator("select[name=profile-run]").input_value() != run:
        page.select_option("select[name=profile-run]", run)
    page.wait_for_selector(".prof-tab[data-pane=overview]")
    page.wait_for_function("(r) => document.querySelector('select[name=profile-run]').value === r", arg=run)


def test_bars_slowest_rank_and_collectives(watched, server, api):
    page = watched.page
    open_distributed(page, server, "ddp", pane="overview")
    page.click(".prof-tab[data-pane=distributed]")
    page.wait_for_selector(".prof-distributed[data-state=ready]")
    page.wait_for_function("() => { const p = document.querySelector('.prof-dist-plot');"
                           " return p && p.data && p.data.length === 4; }")
    body = api.json("/api/profile/distributed", run="ddp")
    bars = page.evaluate("() => document.querySelector('.prof-dist-plot').data"
                         ".map((t) => [t.meta.part, t.y, t.x])")
    assert [b[0] for b in bars] == ["computation", "overlap", "communication", "other"]
    for part, ys, xs in bars:
        assert ys == ["rank 0 (worker0)", "rank 1 (worker1)"]
        assert xs == pytest.approx([r["totals"][part] / 1000 for r in body["ranks"]])
    slow = body["ranks"][body["slowest"]]
    other = body["ranks"][1 - body["slowest"]]
    text = page.locator(".prof-dist-slowest").inner_text()
    assert text.startswith(f"Slowest rank: rank {slow['rank']} ({slow['worker']})")
    assert f"rank {other['rank']} ({other['worker']}) {other['totals']['wait'] / 1000:.3f} ms" in text
    rows = page.locator(".prof-dist-collectives tbody tr")
    assert rows.count() == 2
    for k, rank in enumerate(body["ranks"]):
        row = rows.nth(k)
        [c] = rank["collectives"]
        assert row.get_attribute("data-op") == "all_reduce" == c["op"]
        assert row.locator("[data-key=calls]").inner_text() == "5"
        assert row.locator("[data-key=bytes]").inner_text() == "187.7 KiB"  # 5 x 9610 x 4 B
        assert row.locator("[data-key=time]").inner_text() == f"{c['time'] / 1000:.2f} ms"
    cells = page.locator(".prof-dist-ranks tbody tr[data-rank='1'] [data-key=communication]")
    assert cells.inner_text() == f"{body['ranks'][1]['totals']['communication'] / 1000:.3f}"


def test_single_worker_of_ours_says_no_communication(watched, server):
    page = watched.page
    open_distributed(page, server, "ours")
    page.wait_for_selector(".prof-tab[data-pane=overview][aria-selected=true]")
    assert page.locator(".prof-tab[data-pane=distributed]").count() == 0  # one worker, no distributedInfo


def test_missing_rank_and_no_common_step_show_messages(watched, server):
    page = watched.page
    open_distributed(page, server, "onerank")
    page.wait_for_selector(".prof-distributed[data-state=ready]")
    assert "world size 2" in page.locator(".prof-dist-warnings").inner_text()
    page.select_option("select[name=profile-run]", "shifted")
    page.wait_for_selector(".prof-distributed[data-state=error]")
    assert "share no step" in page.locator(".prof-distributed .prof-error").inner_text()
    # the browser logs the answer's 422 itself; nothing else may have gone wrong
    assert [e for e in watched.errors if "422" in e] == \
        ["Failed to load resource: the server responded with a status of 422 (UNPROCESSABLE ENTITY)"]
    watched.errors.clear()
