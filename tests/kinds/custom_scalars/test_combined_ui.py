"""Combined charts in headless Chromium over real logs and a real server: add_scalars as one
chart, custom multiline and margin layouts, pinned cards from the URL, charts made from
regexes, per-chart run subsets, and the same smoothing/downloads as single charts."""

from __future__ import annotations

import csv
import io
import json
from urllib.parse import parse_qs, urlparse

import pytest

from tests.helpers.pages import ema
from tests.helpers.server import serving
from visualdl import LogWriter

pytestmark = pytest.mark.browser

RUNS = {"r1": 1.0, "r2": 3.0}
KEYS = ("train", "val", "test")
STEPS = 40
LAYOUT = {"Custom": {
    "acc and lr": ["Multiline", [r"^acc$", r"^lr/"]],   # two kinds of names
    "acc band": ["Margin", ["acc", "acc_lo", "acc_hi"]],
}}


def loss(run: str, key: str, step: int) -> float:
    return RUNS[run] * 10 + KEYS.index(key) + step * 0.01


def acc(run: str, step: int) -> float:
    return RUNS[run] + step / 100


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("combined-ui")
    for run in RUNS:
        with LogWriter(logdir=str(root / run)) as w:
            for step in range(STEPS):
                wall = 1e9 + step
                w.add_scalars("loss", {k: loss(run, k, step) for k in KEYS}, step, walltime=wall)
                w.add_scalar("acc", acc(run, step), step, walltime=wall)
                w.add_scalar("acc_lo", acc(run, step) - 0.5, step, walltime=wall)
                w.add_scalar("acc_hi", acc(run, step) + 0.5, step, walltime=wall)
                w.add_scalar("lr/main", 0.1 * RUNS[run], step, walltime=wall)
                w.add_scalar("misc", float(step), step, walltime=wall)
            w.add_custom_scalars(LAYOUT)
    with serving(root) as handle:
        yield handle


def chart(page, title: str, pinned: bool = False) -> dict:
    """The card titled ``title``: its state and every trace (meta, x, y, style)."""
    return page.evaluate(
        """([title, pinned]) => {
            const c = [...document.querySelectorAll('.card')].find((c) =>
              c.dataset.chart === title && (c.dataset.pinned === '1') === pinned);
            if (!c) return null;
            const p = c.querySelector('.plot');
            return {state: c.dataset.state, kind: c.dataset.kind, tag: c.dataset.tag || null,
                    group: c.closest('.group').dataset.group,
                    legend: Boolean(p.layout && p.layout.showlegend),
                    traces: (p.data || []).map((t) => ({meta: t.meta, name: t.name, x: t.x, y: t.y,
                      color: t.line.color, dash: t.line.dash || 'solid', fill: t.fill || null}))};
          }""",
        [title, pinned],
    )


def wait_chart(page, title: str, traces: int, pinned: bool = False) -> dict:
    card = page.locator(f'.card[data-chart="{title}"]' + ('[data-pinned="1"]' if pinned else ':not([data-pinned])'))
    card.scroll_into_view_if_needed()
    page.wait_for_function(
        """([title, n, pinned]) => [...document.querySelectorAll('.card')].some((c) =>
             c.dataset.chart === title && (c.dataset.pinned === '1') === pinned &&
             c.dataset.state === 'ready' && c.querySelector('.plot').data &&
             c.querySelector('.plot').data.length === n)""",
        arg=[title, traces, pinned],
    )
    return chart(page, title, pinned)


def open_app(watched, url: str):
    page = watched.page
    page.goto(url)
    page.wait_for_selector('.card[data-chart="loss"]')
    return page


def test_add_scalars_is_one_chart_with_a_line_per_run_and_key(watched, server, tmp_path):
    page = open_app(watched, server.url + "?smoothing=0")
    drawn = wait_chart(page, "loss", 6)
    assert drawn["kind"] == "group" and drawn["legend"]
    lines = {(t["meta"]["run"], t["meta"]["tag"]): t for t in drawn["traces"]}
    assert set(lines) == {(r, f"loss/{k}") for r in RUNS for k in KEYS}
    for (run, tag), trace in lines.items():
        key = tag.split("/")[1]
        assert trace["x"] == list(range(STEPS))
        assert trace["y"] == pytest.approx([loss(run, key, s) for s in range(STEPS)])
        assert trace["name"] == f"{run}/{key}"
    # one colour per run, one dash per key
    for run in RUNS:
        assert len({lines[(run, f"loss/{k}")]["color"] for k in KEYS}) == 1
        assert [lines[(run, f"loss/{k}")]["dash"] for k in KEYS] == ["solid", "dash", "dot"]
    assert lines[("r1", "loss/train")]["color"] != lines[("r2", "loss/train")]["color"]
    # its tags are not drawn again as charts of their own
    tags = page.evaluate("() => [...document.querySelectorAll('.card[data-tag]')].map(c => c.dataset.tag)")
    assert not [t for t in tags if t.startswith("loss/")]
    assert "misc" in tags
    page.screenshot(path=str(tmp_path / "add-scalars.png"), full_page=True)


def test_custom_layout_section_multiline_and_margin(watched, server, tmp_path):
    page = open_app(watched, server.url + "?smoothing=0")
    groups = page.eval_on_selector_all(".group .group-name", "els => els.map(e => e.textContent)")
    assert groups[0] == "Custom"  # above the automatic groups
    multi = wait_chart(page, "acc and lr", 4)
    assert multi["kind"] == "multiline" and multi["legend"]
    got = {(t["meta"]["run"], t["meta"]["tag"]): t["y"] for t in multi["traces"]}
    assert set(got) == {(r, t) for r in RUNS for t in ("acc", "lr/main")}
    for run in RUNS:
        assert got[(run, "acc")] == pytest.approx([acc(run, s) for s in range(STEPS)])
        assert got[(run, "lr/main")] == pytest.approx([0.1 * RUNS[run]] * STEPS)
    band = wait_chart(page, "acc band", 6)  # per run: lower, upper (filled), value
    roles = [(t["meta"]["run"], t["meta"]["role"]) for t in band["traces"]]
    assert sorted(roles) == sorted((r, role) for r in RUNS for role in ("lower", "upper", "raw"))
    for t in band["traces"]:
        run, role = t["meta"]["run"], t["meta"]["role"]
        offset = {"lower": -0.5, "upper": 0.5, "raw": 0.0}[role]
        assert t["y"] == pytest.approx([acc(run, s) + offset for s in range(STEPS)])
        if role == "upper":
            assert t["fill"] == "tonexty"
    # each band's upper edge is drawn right after its lower edge, so the fill spans the band
    order = [(t["meta"]["run"], t["meta"]["role"]) for t in band["traces"]]
    for run in RUNS:
        assert order.index((run, "upper")) == order.index((run, "lower")) + 1
    page.locator('.card[data-chart="acc band"]').screenshot(path=str(tmp_path / "margin.png"))


def test_pinned_card_survives_a_reload_from_its_url(watched, server, tmp_path):
    page = open_app(watched, server.url + "?smoothing=0")
    wait_chart(page, "loss", 6)
    page.locator('.card[data-chart="loss"]:not([data-pinned]) button[name=pin]').click()
    page.wait_for_selector('.card[data-chart="loss"][data-pinned="1"]')
    pins = parse_qs(urlparse(page.url).query)["pin"]
    assert pins == [json.dumps(["g", "loss"], separators=(",", ":"))]
    url = page.url
    page.goto("about:blank")
    page.goto(url)
    pinned = wait_chart(page, "loss", 6, pinned=True)
    assert pinned["group"] == "\u0000pinned"
    groups = page.eval_on_selector_all(".group .group-name", "els => els.map(e => e.textContent)")
    assert groups[:2] == ["Pinned", "Custom"]
    assert sorted(t["meta"]["tag"] for t in pinned["traces"]) == sorted(
        f"loss/{k}" for k in KEYS for _ in RUNS)
    # unpinning from the pinned copy removes it and clears the URL
    page.locator('.card[data-pinned="1"] button[name=pin]').click()
    page.wait_for_function("() => !document.querySelector('.card[data-pinned]')")
    assert "pin" not in parse_qs(urlparse(page.url).query)
    page.screenshot(path=str(tmp_path / "pinned.png"))


def test_new_chart_from_regexes_is_in_the_url_and_exports_as_a_layout(watched, server, tmp_path):
    page = open_app(watched, server.url + "?smoothing=0")
    page.fill("input[name=new-chart]", "^misc$, ^loss/val$")
    page.click(".new-chart button[type=submit]")
    made = wait_chart(page, "^misc$ | ^loss/val$", 4)
    assert made["group"] == "\u0000new"
    assert {(t["meta"]["run"], t["meta"]["tag"]) for t in made["traces"]} == {
        (r, t) for r in RUNS for t in ("misc", "loss/val")}
    url = page.url
    assert parse_qs(urlparse(url).query)["chart"] == ['["^misc$","^loss/val$"]']
    page.goto("about:blank")
    page.goto(url)
    wait_chart(page, "^misc$ | ^loss/val$", 4)
    page.click("button[name=export-layout]")
    text = page.locator(".export-dialog textarea").input_value()
    assert '"Custom": {' in text
    assert '"^misc$ | ^loss/val$": ["Multiline", ["^misc$", "^loss/val$"]],' in text
    assert '"acc band": ["Margin", ["acc", "acc_lo", "acc_hi"]],' in text
    assert text.endswith("writer.add_custom_scalars(layout)")
    namespace: dict = {}
    exec(text.replace("writer.add_custom_scalars(layout)", ""), namespace)  # valid Python
    assert namespace["layout"]["Custom"]["acc and lr"] == ["Multiline", ["^acc$", "^lr/"]]
    with LogWriter(logdir=str(tmp_path / "check")) as w:  # and a layout the writer accepts
        w.add_custom_scalars(namespace["layout"])
    page.locator(".export-dialog").screenshot(path=str(tmp_path / "export.png"))
    page.keyboard.press("Escape")
    page.locator('.card[data-chart="^misc$ | ^loss/val$"] button[name=remove]').click()
    page.wait_for_function("() => !document.querySelector('.card[data-kind=multiline][data-chart*=misc]')")
    assert "chart" not in parse_qs(urlparse(page.url).query)


def test_invalid_regex_for_a_new_chart_is_reported(watched, server):
    page = open_app(watched, server.url)
    page.fill("input[name=new-chart]", "loss/(")
    page.click(".new-chart button[type=submit]")
    page.wait_for_selector(".new-chart-error:not([hidden])")
    assert "Invalid regular expression" in page.locator(".new-chart-error").text_content()
    assert "chart" not in parse_qs(urlparse(page.url).query)


def test_a_chart_can_show_a_subset_of_runs(watched, server):
    page = open_app(watched, server.url + "?smoothing=0")
    wait_chart(page, "loss", 6)
    card = page.locator('.card[data-chart="loss"]')
    card.locator("summary").click()
    card.locator('.card-runs input[value="r2"]').uncheck()
    drawn = wait_chart(page, "loss", 3)
    assert {t["meta"]["run"] for t in drawn["traces"]} == {"r1"}
    assert wait_chart(page, "acc and lr", 4)  # other charts keep every run
    subsets = parse_qs(urlparse(page.url).query)["cruns"]
    assert [json.loads(s) for s in subsets] == [['["g","loss"]', "r1"]]
    page.reload()
    assert {t["meta"]["run"] for t in wait_chart(page, "loss", 3)["traces"]} == {"r1"}
    card = page.locator('.card[data-chart="loss"]')
    card.locator("summary").click()
    card.locator(".card-runs").get_by_role("button", name="Every run").click()  # every run again
    wait_chart(page, "loss", 6)
    assert "cruns" not in parse_qs(urlparse(page.url).query)


def test_smoothing_outliers_and_download_work_on_combined_charts(watched, server):
    page = open_app(watched, server.url + "?smoothing=0.8&outliers=1&logy=1&x=relative")
    drawn = wait_chart(page, "loss", 12)  # raw + smoothed per line
    smoothed = {t["meta"]["tag"]: t["y"] for t in drawn["traces"]
                if t["meta"]["role"] == "smoothed" and t["meta"]["run"] == "r2"}
    raw = [loss("r2", "val", s) for s in range(STEPS)]
    assert smoothed["loss/val"] == pytest.approx(ema(raw, 0.8), rel=1e-12)
    layout = page.evaluate("() => { const p = document.querySelector('.card[data-chart=\"loss\"] .plot');"
                           " return {y: p.layout.yaxis.type, auto: p.layout.yaxis.autorange,"
                           " x: p.layout.xaxis.title.text}; }")
    assert layout["y"] == "log" and layout["auto"] is False and layout["x"].startswith("relative")
    with page.expect_download() as info:
        page.locator('.card[data-chart="loss"] a[data-format=csv]').click()
    rows = list(csv.reader(io.StringIO(open(info.value.path()).read())))
    assert rows[0] == ["step"] + [f"{r}/loss/{k}" for r in RUNS for k in KEYS]
    assert len(rows) == 1 + STEPS
    assert [float(v) for v in rows[3][1:]] == pytest.approx(
        [loss(r, k, 2) for r in RUNS for k in KEYS])


def test_old_logs_without_grouping_draw_as_separate_charts(watched, tmp_path):
    """Tags named like add_scalars' but logged without the grouping (an older visualdl) are
    not guessed into one chart: each is its own chart, as before."""
    with LogWriter(logdir=str(tmp_path / "old")) as w:
        for step in range(5):
            w.add_scalar("loss/train", float(step), step)
            w.add_scalar("loss/val", 2.0 * step, step)
    with serving(tmp_path) as handle:
        page = watched.page
        page.goto(handle.url)
        page.wait_for_selector('.card[data-tag="loss/val"][data-state="ready"]')
        kinds = page.eval_on_selector_all(".card", "els => els.map(e => [e.dataset.kind, e.dataset.chart])")
        assert sorted(kinds) == [["tag", "loss/train"], ["tag", "loss/val"]]
        watched.finish()


def test_zoom_and_tooltip_order_on_a_combined_chart(watched, server):
    page = open_app(watched, server.url + "?smoothing=0&tips=value+descending")
    wait_chart(page, "loss", 6)
    plot = '.card[data-chart="loss"]:not([data-pinned]) .plot'
    assert page.evaluate(f"() => document.querySelector('{plot}').layout.hoversort") == "value descending"
    page.evaluate(f"() => Plotly.relayout(document.querySelector('{plot}'), {{'xaxis.range': [5, 15]}})")
    page.fill("input[name=smoothing] + input", "0.5")
    page.locator("input[name=smoothing] + input").dispatch_event("change")
    wait_chart(page, "loss", 12)
    # a redraw with new smoothing keeps the user's zoom (uirevision), as on single charts
    assert page.evaluate(f"() => document.querySelector('{plot}').layout.xaxis.range") == [5, 15]
    page.locator(plot + " .nsewdrag").first.hover()
    page.wait_for_selector('.card[data-chart="loss"] .hoverlayer .legend', timeout=5000)
    text = page.locator('.card[data-chart="loss"] .hoverlayer').text_content()
    names = [f"{r}/{k}" for r in RUNS for k in KEYS]
    positions = sorted((text.index(n + ":"), n) for n in names)
    order = [n for _, n in positions]
    values = {f"{r}/{k}": loss(r, k, 0) for r in RUNS for k in KEYS}
    assert order == sorted(names, key=lambda n: -values[n])  # highest first, every line named
