"""The run table, grouping and zoom in Chromium, over a 1,001-run logdir and a real server."""

from __future__ import annotations

import math
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from tests.helpers.server import serving
from visualdl import LogWriter

pytestmark = pytest.mark.browser

LRS = [0.1 / 2**i for i in range(10)]
BATCHES = [16, 32, 64, 128, 256]
SEEDS = range(20)  # 10 x 5 x 20 = 1,000 runs, plus "long"
LOSS_STEPS = 20
LONG_STEPS = 100_000
HIDDEN = 54_321  # a step the full view (a few hundred points) does not show


def run_name(lr: float, bs: int, seed: int) -> str:
    return f"lr{lr:.6f}_bs{bs}_seed{seed}"


def loss(lr: float, bs: int, seed: int, step: int) -> float:
    return 1.0 / (1.0 + step * lr * 10) + bs * 1e-4 + seed * 1e-3


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("many")
    for lr in LRS:
        for bs in BATCHES:
            for seed in SEEDS:
                with LogWriter(logdir=str(root / run_name(lr, bs, seed)), flush_secs=3600) as w:
                    w.add_hparams({"lr": lr, "bs": bs, "seed": seed}, ["loss"], walltime=100.0)
                    for step in range(LOSS_STEPS):
                        w.add_scalar("loss", loss(lr, bs, seed, step), step=step,
                                     walltime=1000.0 + step)
    with LogWriter(logdir=str(root / "long")) as w:
        for step in range(LONG_STEPS):
            w.add_scalar("signal", math.sin(step / 500.0), step=step, walltime=5000.0 + step)
    with serving(root, reload_interval=5.0, load_timeout=120) as handle:
        yield handle


def open_page(watched, url):
    page = watched.page
    page.goto(url)
    page.wait_for_selector(".run-list li[data-run]")
    return page


def count_text(page) -> str:
    return page.locator("#runs h2 .count").text_content()


def test_run_list_holds_only_visible_rows(watched, server):
    page = open_page(watched, server.url + "?group=hp:lr")
    page.wait_for_function("() => document.querySelector('#runs h2 .count').textContent.startsWith('1001 of 1001')")
    rows = page.locator(".run-list li[data-run]").count()
    assert 5 <= rows <= 60  # a screenful and a margin, not 1,001
    names = sorted([run_name(lr, bs, s) for lr in LRS for bs in BATCHES for s in SEEDS]
                   + ["long"])
    assert page.locator(".run-list li[data-run]").first.get_attribute("data-run") == names[0]
    assert page.locator(f'.run-list li[data-run="{names[-1]}"]').count() == 0
    page.evaluate("() => { const t = document.querySelector('.run-table'); t.scrollTop = t.scrollHeight; }")
    page.wait_for_selector(f'.run-list li[data-run="{names[-1]}"]')  # the last run by name
    assert page.locator(".run-list li[data-run]").count() <= 60
    # the hparams are columns; sorting by lr descending puts the largest first
    page.evaluate("() => { document.querySelector('.run-table').scrollTop = 0; }")
    page.click('.run-sort[data-sort="hp:lr"]')
    page.click('.run-sort[data-sort="hp:lr"]')
    page.wait_for_function("() => document.querySelector('.run-sort[data-sort=\"hp:lr\"]').getAttribute('aria-sort') === 'descending'")
    top = page.locator(".run-list li[data-run]").first
    assert top.get_attribute("data-run").startswith(f"lr{LRS[0]:.6f}_")
    assert top.locator('.run-cell[data-col="hp:lr"]').text_content() == f"{LRS[0]:.4g}"
    assert parse_qs(urlparse(page.url).query)["rsort"] == ["-hp:lr"]


def test_filter_by_regex_and_by_hparam_then_select_all_matching(watched, server):
    page = open_page(watched, server.url + "?group=hp:lr")
    page.fill("input[name=run-filter]", "_seed3$")
    page.wait_for_function("() => document.querySelector('#runs h2 .count').textContent === '50 of 1001 shown · 50 match'")
    names = page.eval_on_selector_all(".run-list li[data-run]", "els => els.map(e => e.dataset.run)")
    assert names and all(n.endswith("_seed3") for n in names)
    page.fill("input[name=run-where]", "bs>=128 lr<0.01")
    # lr < 0.01: 6 values (0.1/2**4 .. 0.1/2**9); bs >= 128: 2 values; one seed
    page.wait_for_function("() => document.querySelector('#runs h2 .count').textContent.endsWith('· 12 match')")
    names = page.eval_on_selector_all(".run-list li[data-run]", "els => els.map(e => e.dataset.run)")
    want = sorted(run_name(lr, bs, 3) for lr in LRS if lr < 0.01 for bs in (128, 256))
    assert sorted(names) == want
    page.click("button[name=select-none]")
    page.wait_for_function("() => document.querySelector('#runs h2 .count').textContent.startsWith('0 of 1001')")
    assert sorted(parse_qs(urlparse(page.url).query)["off"]) == want
    page.fill("input[name=run-where]", "")
    page.fill("input[name=run-filter]", "")
    page.wait_for_function("() => document.querySelector('#runs h2 .count').textContent === '989 of 1001 shown'")
    page.fill("input[name=run-filter]", "seed3$")
    page.click("button[name=select-all]")
    page.wait_for_function("() => document.querySelector('#runs h2 .count').textContent.startsWith('50 of')")
    assert "off" not in parse_qs(urlparse(page.url).query)
    # the grouped chart follows the filters: 10 lr groups of 5 runs each
    card = '.card[data-tag="loss"]'
    page.wait_for_function(f"() => document.querySelector('{card}')?.dataset.groups === '10'"
                           f" && document.querySelector('{card} .plot').data.filter(t => t.meta.role === 'center').every(t => t.meta.members.length === 5)")


def test_grouping_draws_bands_with_members_in_the_tooltip(watched, server):
    page = open_page(watched, server.url + "?group=hp:lr&gband=std&smoothing=0")
    card = '.card[data-tag="loss"]'
    page.wait_for_selector(f'{card}[data-state="ready"]')
    traces = page.evaluate(f"() => document.querySelector('{card} .plot').data.map(t => ({{role: t.meta.role, group: t.meta.group, members: t.meta.members, y: t.y, x: t.x, fill: t.fill}}))")
    centers = [t for t in traces if t["role"] == "center"]
    assert len(centers) == 10 and len(traces) == 30
    assert [t["fill"] for t in traces if t["role"] == "band-upper"] == ["tonexty"] * 10
    by_group = {t["group"]: t for t in traces}
    lr = LRS[3]
    center = next(t for t in centers if t["group"] == f"lr={lr:g}")
    members = [run_name(lr, bs, s) for bs in BATCHES for s in SEEDS]
    assert sorted(center["members"]) == sorted(members)
    matrix = np.array([[loss(lr, bs, s, step) for step in range(LOSS_STEPS)]
                       for bs in BATCHES for s in SEEDS])
    assert center["x"] == list(range(LOSS_STEPS))
    assert np.allclose(center["y"], matrix.mean(0))
    upper = next(t for t in traces if t["role"] == "band-upper" and t["group"] == f"lr={lr:g}")
    assert np.allclose(upper["y"], matrix.mean(0) + matrix.std(0))
    assert by_group  # every trace names its group
    # hover: the unified tooltip names the group's members
    box = page.locator(f"{card} .plot .nsewdrag").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    page.wait_for_selector(f"{card} .hoverlayer .legend, {card} .hoverlayer text")
    hover = page.locator(f"{card} .hoverlayer").text_content()
    assert "100 runs" in hover and "and 91 more" in hover
    first_members = {sorted(run_name(x, bs, s) for bs in BATCHES for s in SEEDS)[0] for x in LRS}
    assert any(name in hover for name in first_members)
    # the grouping is in the URL and in the settings after a reload
    page.reload()
    page.wait_for_selector(f'{card}[data-state="ready"]')
    assert page.locator("select[name=group-mode]").input_value() == "hp"
    assert page.locator("input[name=group-by]").input_value() == "lr"
    assert page.locator("select[name=group-band]").input_value() == "std"


def test_grouping_by_name_regex_from_the_settings(watched, server):
    page = open_page(watched, server.url + "?smoothing=0&runFilter=_bs16_")
    page.select_option("select[name=group-mode]", "re")
    page.fill("input[name=group-by]", r"^(lr[\d.]+)_")
    page.press("input[name=group-by]", "Enter")
    page.locator("input[name=group-by]").dispatch_event("change")
    card = '.card[data-tag="loss"]'
    page.wait_for_function(f"() => document.querySelector('{card}')?.dataset.groups === '10'")
    assert parse_qs(urlparse(page.url).query)["group"] == [r"re:^(lr[\d.]+)_"]
    names = page.evaluate(f"() => document.querySelector('{card} .plot').data.filter(t => t.meta.role === 'center').map(t => t.meta.group)")
    assert sorted(names) == sorted(f"lr{lr:.6f}" for lr in LRS)


def test_zoom_refetches_the_window_and_reset_restores(watched, server):
    page = open_page(watched, server.url + "?runFilter=^long$&smoothing=0")
    card = '.card[data-tag="signal"]'
    page.wait_for_selector(f'{card}[data-state="ready"]')
    plot = f"document.querySelector('{card} .plot')"
    full = page.evaluate(f"() => {plot}.data[0].x")
    assert len(full) < 5000 and HIDDEN not in full and full[-1] == LONG_STEPS - 1
    windows = []
    page.on("request", lambda r: "start_step" in (r.post_data or "") and windows.append(r.post_data_json))
    # a user's drag-zoom over a part of the x axis
    box = page.locator(f"{card} .plot .nsewdrag").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.40, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.45, y, steps=5)
    page.mouse.move(box["x"] + box["width"] * 0.50, y, steps=5)
    page.mouse.up()
    page.wait_for_function(f"() => {plot}.closest('.card').dataset.window !== ''")
    assert windows and windows[-1]["start_step"] > 30_000 and windows[-1]["end_step"] < 60_000
    zoomed = page.evaluate(f"() => {plot}.data[0].x")
    lo, hi = windows[-1]["start_step"], windows[-1]["end_step"]
    assert min(zoomed) >= lo and max(zoomed) <= hi and len(zoomed) > 100
    # deeper: a window narrower than the chart holds every step, the hidden one too
    page.evaluate(f"() => Plotly.relayout({plot}, {{'xaxis.range': [{HIDDEN - 20}, {HIDDEN + 20}]}})")
    page.wait_for_function(f"() => {plot}.data[0].x.includes({HIDDEN})")
    xs = page.evaluate(f"() => {plot}.data[0].x")
    assert xs == list(range(HIDDEN - 20, HIDDEN + 21))
    ys = page.evaluate(f"() => {plot}.data[0].y")
    assert ys[20] == pytest.approx(math.sin(HIDDEN / 500.0))
    assert windows[-1]["start_step"] == HIDDEN - 20 and windows[-1]["end_step"] == HIDDEN + 20
    # double-click resets to the full view
    page.dblclick(f"{card} .plot .nsewdrag")
    page.wait_for_function(f"() => {plot}.closest('.card').dataset.window === ''")
    assert page.evaluate(f"() => {plot}.data[0].x") == full
