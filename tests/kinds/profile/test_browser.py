"""The profiler dashboard in headless Chromium over a real server: every pane draws what the
API says, the timeline canvas has pixels and W/A/S/D change the window it asks for, a bad
trace shows its message without breaking the others, and the console stays clean."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.helpers.pages import PageWatch
from tests.kinds.profile import traces

pytestmark = pytest.mark.browser


@pytest.fixture()
def watched(browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    watch = PageWatch(page)
    yield watch
    assert watch.errors == []
    page.close()


def open_profiler(watched, server, run="ours", tag="train"):
    page = watched.page
    page.goto(f"{server.url}?tab=profiler")
    page.wait_for_selector("#tab-profiler[aria-selected=true]")
    page.wait_for_selector("select[name=profile-run] option", state="attached")
    if page.locator("select[name=profile-run]").input_value() != run:
        page.select_option("select[name=profile-run]", run)
    page.wait_for_function("(t) => [...document.querySelectorAll('select[name=profile-tag] option')]"
                           ".some((o) => o.value === t)", arg=tag)
    if page.locator("select[name=profile-tag]").input_value() != tag:
        page.select_option("select[name=profile-tag]", tag)
    return page


def pane(page, name: str) -> None:
    page.click(f".prof-tab[data-pane={name}]")
    page.wait_for_selector(f".prof-{name}[data-state]")
    assert page.locator(f".prof-{name}").get_attribute("data-state") == "ready", \
        page.locator(f".prof-{name}").inner_text()


def test_overview_bars_and_environment(watched, server, api):
    page = open_profiler(watched, server)
    page.wait_for_function("() => { const p = document.querySelector('.prof-overview .plot');"
                           " return p && p.data && p.data.length > 0; }")
    bars = page.evaluate("() => document.querySelector('.prof-overview .plot').data"
                         ".map((t) => [t.meta.phase, t.y])")
    body = api.json("/api/profile/overview", run="ours", tag="train")
    for phase, ys in bars:
        assert ys == pytest.approx([s["parts"][phase] / 1000 for s in body["steps"]])
    assert {p for p, _ in bars} >= {"data", "forward", "backward", "optimizer", "compile"}
    assert page.locator(".prof-env").inner_text().count("visualdl") >= 1
    rows = page.locator(".prof-steps tbody tr")
    assert rows.count() == 3


def test_operator_table_rows_match_the_api_sort_and_search(watched, server, api):
    page = open_profiler(watched, server)
    page.wait_for_selector(".prof-overview[data-state=ready]")
    pane(page, "operators")
    body = api.json("/api/profile/operators", run="ours", tag="train")
    table = page.locator(".prof-operators .prof-table-wrap")
    names = page.locator(".prof-operators tbody tr").evaluate_all(
        "(rows) => rows.map((r) => [r.dataset.name, Number(r.querySelector('[data-key=self]').dataset.value),"
        " Number(r.querySelector('[data-key=calls]').dataset.value)])")
    assert [(n, s, c) for n, s, c in names] == [(r["name"], pytest.approx(r["self"]), r["calls"])
                                                for r in body["rows"]]
    page.click(".prof-operators th button[data-key=calls]")
    calls = page.locator(".prof-operators tbody [data-key=calls]").evaluate_all(
        "(cells) => cells.map((c) => Number(c.dataset.value))")
    assert calls == sorted(calls, reverse=True)
    page.fill("input[name=operators-search]", "matmul")
    page.wait_for_function("() => document.querySelector('.prof-operators .prof-table-wrap').dataset.rows === '2'")
    assert table.get_attribute("data-rows") == "2"
    top = page.evaluate("() => document.querySelector('.prof-operators .plot').data[0].x.length")
    assert top == min(10, len(body["rows"]))
    page.select_option("select[name=group]", "shapes")
    page.wait_for_selector(".prof-operators th button[data-key=shapes]")


def test_timeline_draws_and_keys_change_the_window(watched, server):
    page = open_profiler(watched, server)
    page.wait_for_selector(".prof-overview[data-state=ready]")
    pane(page, "timeline")
    canvas = page.locator(".prof-canvas")
    page.wait_for_function("() => document.querySelector('.prof-canvas').dataset.state === 'ready'")
    painted = canvas.evaluate(
        "(c) => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }")
    assert painted > 1000
    first = canvas.get_attribute("data-requests")
    start, end = float(canvas.get_attribute("data-start")), float(canvas.get_attribute("data-end"))
    canvas.focus()
    page.keyboard.press("w")
    page.wait_for_function("(n) => document.querySelector('.prof-canvas').dataset.requests !== n", arg=first)
    page.wait_for_function("(e) => Number(document.querySelector('.prof-canvas').dataset.end) < e", arg=end)
    s2, e2 = float(canvas.get_attribute("data-start")), float(canvas.get_attribute("data-end"))
    assert s2 > start and e2 < end  # zoomed in around the middle
    page.keyboard.press("d")
    page.wait_for_function("(s) => Number(document.querySelector('.prof-canvas').dataset.start) > s", arg=s2)
    requested = canvas.get_attribute("data-requested").split(",")
    assert float(requested[0]) > s2
    page.keyboard.press("s")
    page.wait_for_function("(w) => { const c = document.querySelector('.prof-canvas');"
                           " return Number(c.dataset.end) - Number(c.dataset.start) > w; }",
                           arg=(e2 - s2) * 1.1)
    # click an event: its details come from the server
    page.click("text=Reset zoom")
    page.wait_for_function("(s) => Number(document.querySelector('.prof-canvas').dataset.viewStart) === s",
                           arg=start)
    box = canvas.bounding_box()
    page.mouse.click(box["x"] + 170 + 5, box["y"] + 20 + 8)  # the first step, on the main thread
    page.wait_for_selector(".prof-details table[data-id]")
    assert "ProfilerStep#5" in page.locator(".prof-details").inner_text()
    # search jumps to an event
    page.fill("input[name=timeline-search]", "SGD")
    page.click(".prof-search button")
    page.wait_for_selector(".prof-results button")
    page.click(".prof-results button")
    # the first event's details are still shown until the found one's arrive
    page.wait_for_function("() => document.querySelector('.prof-details').innerText"
                           ".includes('SGD.step')")
    assert "SGD.step" in page.locator(".prof-details").inner_text()


def test_memory_chart_and_top_ops(watched, server, api):
    page = open_profiler(watched, server)
    page.wait_for_selector(".prof-overview[data-state=ready]")
    pane(page, "memory")
    body = api.json("/api/profile/memory", run="ours", tag="train")
    page.wait_for_function("() => { const p = document.querySelector('.prof-memory .plot');"
                           " return p && p.data && p.data.length === 1; }")
    ys = page.evaluate("() => document.querySelector('.prof-memory .plot').data[0].y")
    assert max(ys) == body["devices"][0]["peak"]
    peak = page.locator(".prof-peaks li").first.get_attribute("data-peak")
    assert float(peak) == body["devices"][0]["peak"]
    assert page.locator(".prof-memory tbody tr").first.get_attribute("data-name") == "empty"


def test_compare_two_runs(watched, server, api):
    page = open_profiler(watched, server)
    page.wait_for_selector(".prof-overview[data-state=ready]")
    pane(page, "compare")
    page.select_option("select[name=compare-run]", "files")
    page.wait_for_function("() => { const p = document.querySelector('.prof-compare');"
                           " const s = document.querySelector('select[name=compare-run]');"
                           " return p && p.dataset.state === 'ready' && s && s.value === 'files'; }")
    rows = page.locator(".prof-compare tbody tr")
    body = api.json("/api/profile/compare", run="ours", tag="train", run2="files", tag2="host_1")
    assert rows.count() == len(body["rows"])
    page.select_option("select[name=compare-run]", "ours")
    page.wait_for_function("() => { const p = document.querySelector('.prof-compare');"
                           " return document.querySelector('select[name=compare-span]') && p &&"
                           " p.dataset.state === 'ready'; }")
    page.select_option("select[name=compare-span]", "5")
    page.wait_for_function("() => { const s = document.querySelector('select[name=compare-span]');"
                           " const p = document.querySelector('.prof-compare');"
                           " return s && s.value === '5' && p && p.dataset.state === 'ready'; }")


def test_download_link_serves_the_trace(watched, server, our_trace):
    page = open_profiler(watched, server)
    page.wait_for_selector(".prof-overview[data-state=ready]")
    link = page.locator(".prof-download")
    with page.expect_download() as info:
        link.click()
    download = info.value
    assert download.suggested_filename.endswith(".pt.trace.json.gz")
    data = gzip.decompress(open(download.path(), "rb").read())
    assert json.loads(data) == our_trace


def test_bad_trace_shows_its_message_and_others_still_work(watched, server):
    page = open_profiler(watched, server, run="broken", tag="truncated")
    # the run's first worker ("empty") shows its own error until "truncated" is loaded
    page.wait_for_function("() => { const e = document.querySelector('.prof-body .prof-error');"
                           " return e && e.innerText.includes('truncated'); }")
    assert "truncated" in page.locator(".prof-body .prof-error").inner_text()
    page.select_option("select[name=profile-tag]", "good")
    page.wait_for_selector(".prof-overview[data-state=ready]")
    pane(page, "operators")
    assert page.locator(".prof-operators tbody tr").count() == len(traces.op_table(traces.ours()))
