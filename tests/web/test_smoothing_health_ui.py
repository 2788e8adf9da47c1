"""Smoothing modes, the min/max band, run states, the NaN mark and the first screen in
headless Chromium over real logs and a real server: what is drawn is what the API says."""

from __future__ import annotations

import json
import os
import time
from urllib.parse import quote

import pytest

from tests.helpers.http import Client, wait_for
from tests.helpers.pages import wait_ready
from tests.helpers.server import serving
from tests.kinds.scalar.test_first_screen import write_demo_like
from visualdl import LogWriter

pytestmark = pytest.mark.browser

STEPS = [0, 1, 2, 3, 4, 5, 10, 20, 40, 540, 547, 554, 561, 568, 575, 582, 589, 596]


def value(i: int) -> float:
    return float((i * 7) % 5) + 0.25 * i


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("health_ui")
    with LogWriter(logdir=str(root / "done")) as w:  # closed, with a NaN at step 7
        for i in range(20):
            w.add_scalar("loss", float("nan") if i == 7 else 1.0 / (i + 1), i, walltime=1e9 + i)
    with LogWriter(logdir=str(root / "died")) as w:  # dies inside its last write
        w.add_scalar("loss", 0.5, 0, walltime=1e9)
        w.flush()
        size = os.path.getsize(w.file_name)
        w.add_scalar("loss", 0.4, 1, walltime=1e9 + 1)
    (path,) = [p for p in (root / "died").iterdir() if "vdlrecords" in p.name]
    with open(path, "r+b") as f:
        f.truncate(size + 5)
    old = time.time() - 86_400
    os.utime(path, (old, old))
    with LogWriter(logdir=str(root / "uneven")) as w:
        for i, s in enumerate(STEPS):
            w.add_scalar("uneven", value(i), s, walltime=1e9 + s)
    return root


@pytest.fixture(scope="module")
def server(logdir):
    live = LogWriter(logdir=str(logdir / "live"))  # open while the tests run
    live.add_scalar("loss", 1.0, 0)
    live.flush()
    try:
        with serving(logdir) as handle:
            handle.live = live
            yield handle
    finally:
        live.close()


def drawn(page, tag: str, role: str, run: str) -> list:
    return page.evaluate(
        """([tag, role, run]) => {
            const plot = document.querySelector(`.card[data-tag="${tag}"] .plot`);
            const t = (plot.data || []).find((d) => d.meta.role === role && d.meta.run === run);
            return t ? Array.from(t.y) : null;
        }""", [tag, role, run])


def api(server, **query) -> dict:
    return Client(server.url).json("/api/scalars", run="uneven", tag="uneven", **query)


def close_to(got, want):
    assert got is not None and len(got) == len(want)
    for a, b in zip(got, want):
        assert (a is None and b is None) or abs(a - float(b)) < 1e-9, (got, want)


def open_uneven(watched, server, query: str):
    page = watched.page
    page.goto(f"{server.url}?{query}")
    page.wait_for_selector('.card[data-tag="uneven"]')
    wait_ready(page, ["uneven"])
    return page


@pytest.mark.parametrize("query,params", [
    ("smoothing=0.6", {"smoothing": 0.6}),
    ("smoothing=0.6&smode=time_ema", {"smoothing": 0.6, "smoothing_mode": "time_ema"}),
    ("smode=running&savg=3", {"smoothing_mode": "running", "smoothing_points": 3}),
])
def test_each_mode_draws_what_the_api_computes(watched, server, query, params):
    page = open_uneven(watched, server, query)
    body = api(server, **params)
    assert body.get("smoothing_mode", "ema") == params.get("smoothing_mode", "ema")
    want = body["smoothed"]
    page.wait_for_function(
        "(want) => { const p = document.querySelector('.card[data-tag=\"uneven\"] .plot');"
        " const t = (p.data || []).find((d) => d.meta.role === 'smoothed');"
        " return t && Math.abs(t.y[9] - want) < 1e-9; }", arg=want[9])
    close_to(drawn(page, "uneven", "smoothed", "uneven"), want)


def test_the_mode_select_changes_the_trace_and_the_url(watched, server):
    page = open_uneven(watched, server, "smoothing=0.6")
    ema = drawn(page, "uneven", "smoothed", "uneven")
    page.select_option("select[name=smoothing-mode]", "time_ema")
    page.wait_for_function("() => location.search.includes('smode=time_ema')")
    want = api(server, smoothing=0.6, smoothing_mode="time_ema")["smoothed"]
    page.wait_for_function(
        "(want) => { const p = document.querySelector('.card[data-tag=\"uneven\"] .plot');"
        " const t = p.data.find((d) => d.meta.role === 'smoothed');"
        " return Math.abs(t.y[9] - want) < 1e-9; }", arg=want[9])
    got = drawn(page, "uneven", "smoothed", "uneven")
    close_to(got, want)
    assert abs(got[9] - ema[9]) > 0.1  # the pause before step 540 forgets the past
    page.select_option("select[name=smoothing-mode]", "running")
    page.fill("input[name=smoothing-points]", "4")
    page.press("input[name=smoothing-points]", "Enter")
    page.wait_for_function("() => location.search.includes('savg=4')")
    want = api(server, smoothing_mode="running", smoothing_points=4)["smoothed"]
    page.wait_for_function(
        "(want) => { const p = document.querySelector('.card[data-tag=\"uneven\"] .plot');"
        " const t = p.data.find((d) => d.meta.role === 'smoothed');"
        " return t && Math.abs(t.y[5] - want) < 1e-9; }", arg=want[5])
    close_to(drawn(page, "uneven", "smoothed", "uneven"), want)


def test_the_envelope_band_is_drawn(watched, server, tmp_path):
    page = open_uneven(watched, server, "smoothing=0.6&envelope=1")
    page.wait_for_function(
        "() => { const p = document.querySelector('.card[data-tag=\"uneven\"] .plot');"
        " return (p.data || []).some((d) => d.meta.role === 'envelope-upper'); }")
    body = api(server, smoothing=0.6, envelope=1)
    close_to(drawn(page, "uneven", "envelope-lower", "uneven"), body["lower"])
    close_to(drawn(page, "uneven", "envelope-upper", "uneven"), body["upper"])
    fill = page.evaluate(
        "() => document.querySelector('.card[data-tag=\"uneven\"] .plot').data"
        ".find((d) => d.meta.role === 'envelope-upper').fill")
    assert fill == "tonexty"
    # plotly drew the band: a filled path in the SVG
    assert page.locator('.card[data-tag="uneven"] .plot path.js-fill').count() >= 1
    page.screenshot(path=str(tmp_path / "envelope.png"))


def test_the_run_table_shows_states_and_filters_by_them(watched, server, tmp_path):
    server.live.add_scalar("loss", 0.9, 1)  # new points: running (the page may come late)
    server.live.flush()
    client = Client(server.url)
    wait_for(lambda: client.json("/api/runs")["states"]["live"]["state"] == "running")
    page = watched.page
    page.goto(server.url)
    page.wait_for_selector('.run-cell[data-col="state"]')
    page.wait_for_function(
        "() => document.querySelectorAll('.run-cell[data-col=\"state\"]').length === 4")
    cells = page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('li[data-run]')].map((li) =>"
        " [li.dataset.run, li.querySelector('.run-cell[data-col=\"state\"]').textContent]))")
    assert cells == {"died": "✗ crashed", "done": "✓ finished", "live": "● running",
                     "uneven": "✓ finished"}
    nan = page.evaluate(
        "() => document.querySelector('li[data-run=\"done\"] .run-cell[data-col=\"nan\"]')"
        ".textContent")
    assert nan == "NaN at step 7 (loss)"
    page.fill("input[name=run-where]", "state=crashed")
    page.press("input[name=run-where]", "Enter")
    page.wait_for_function(
        "() => [...document.querySelectorAll('li[data-run]')].map((li) => li.dataset.run)"
        ".join() === 'died'")
    page.screenshot(path=str(tmp_path / "run_states.png"))


def test_the_first_nan_is_marked_on_its_chart(watched, server, tmp_path):
    page = watched.page
    page.goto(f"{server.url}?smoothing=0")
    page.wait_for_selector('.card[data-tag="loss"]')
    wait_ready(page, ["loss"])
    page.wait_for_function(
        "() => { const p = document.querySelector('.card[data-tag=\"loss\"] .plot');"
        " return (p.layout.annotations || []).some((a) => a.text === 'NaN at step 7'); }")
    mark = page.evaluate(
        "() => { const p = document.querySelector('.card[data-tag=\"loss\"] .plot');"
        " const a = p.layout.annotations.find((x) => x.text === 'NaN at step 7');"
        " const s = p.layout.shapes.find((x) => x.name === 'nan-mark');"
        " return [a.x, s.x0]; }")
    assert mark == [7, 7]
    assert page.locator('.card[data-tag="loss"] .annotation-text').all_text_contents() == \
        ["NaN at step 7"]
    page.screenshot(path=str(tmp_path / "nan_mark.png"))


def test_the_first_screen_opens_on_the_loss(watched, tmp_path):
    write_demo_like(tmp_path)
    with serving(tmp_path) as handle:
        page = watched.page
        page.goto(handle.url)
        page.wait_for_selector(".card")
        first = page.evaluate(
            "() => [...document.querySelectorAll('.card')].slice(0, 4).map((c) => c.dataset.tag)")
        assert first == ["train/loss", "train/acc_top1", "train/acc_top3", "train/lr"]
        groups = page.eval_on_selector_all(".group .group-name",
                                           "els => els.map(e => e.textContent)")
        assert groups == ["train", "eval", "weights", "grads", "activations"]
        # a pinned chart still comes first
        pin = json.dumps(["t", "activations/classifier.relu/mean"], separators=(",", ":"))
        page.goto(handle.url + "?pin=" + quote(pin))
        page.wait_for_selector(".card")
        page.wait_for_function("() => document.querySelectorAll('.card').length === 18")
        first = page.evaluate("() => document.querySelector('.card').dataset.tag")
        assert first == "activations/classifier.relu/mean"
        page.goto("about:blank")  # no polling of the server once it is stopped
