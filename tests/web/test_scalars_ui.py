"""The scalars dashboard in headless Chromium over real logs and a real server."""

from __future__ import annotations

import csv
import io
import math
from urllib.parse import parse_qs, urlparse

import pytest

from tests.helpers.http import Client, wait_for
from tests.helpers.pages import card_summary, ema, wait_ready, wait_traces
from tests.helpers.server import serving
from visualdl import LogWriter
from visualdl.server.background import start_server

pytestmark = pytest.mark.browser

RUNS = {"alpha": 0.0, "beta": 0.3, "gamma": 0.6}
TAGS = {  # tag -> (runs having it, number of steps)
    "loss": (("alpha", "beta", "gamma"), 200),
    "train/acc": (("alpha", "beta"), 100),
    "train/lr": (("alpha",), 50),
    "eval/loss": (("beta", "gamma"), 20),
}


def value(run: str, tag: str, step: int) -> float:
    return 1.0 / (1.0 + 0.05 * step) + 0.1 * math.sin(step + RUNS[run]) + len(tag) * 0.01


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("ui")
    for run in RUNS:
        with LogWriter(logdir=str(root / run)) as w:
            for tag, (runs, steps) in TAGS.items():
                if run in runs:
                    for step in range(steps):
                        w.add_scalar(tag, value(run, tag, step), step=step, walltime=1e9 + step)
    with serving(root) as handle:
        yield handle


def open_app(watched, url: str):
    page = watched.page
    page.goto(url)
    page.wait_for_selector(".card")
    wait_ready(page, list(TAGS))
    return page


def test_one_chart_per_tag_with_traces_and_points(watched, server, tmp_path):
    page = open_app(watched, server.url)
    cards = card_summary(page)
    assert set(cards) == set(TAGS)
    for tag, (runs, steps) in TAGS.items():
        card = cards[tag]
        assert card["state"] == "ready"
        assert card["traces"] == 2 * len(runs)  # raw (faint) + smoothed per run
        assert sorted(set(card["runs"])) == sorted(runs)
        assert card["points"] == [steps] * (2 * len(runs))
    groups = page.eval_on_selector_all(".group .group-name", "els => els.map(e => e.textContent)")
    assert groups == ["Ungrouped", "eval", "train"]  # the first screen: loss, eval/loss, train/acc
    assert page.locator("#tabs [role=tab]").all_text_contents() == ["Scalars"]
    page.screenshot(path=str(tmp_path / "scalars.png"), full_page=True)


def test_tag_filter_and_invalid_regex(watched, server, tmp_path):
    page = open_app(watched, server.url)
    shown = "(want) => [...document.querySelectorAll('.card')].map(c => c.dataset.tag).sort().join() === want"
    page.fill("input[name=tag-filter]", "^train/")
    page.wait_for_function(shown, arg="train/acc,train/lr")
    assert "tags=%5Etrain%2F" in page.url
    page.fill("input[name=tag-filter]", "LOSS$")  # case-insensitive
    page.wait_for_function(shown, arg="eval/loss,loss")
    page.fill("input[name=tag-filter]", "train/(")
    page.wait_for_function("() => document.querySelectorAll('.card').length === 4")
    box = page.locator("input[name=tag-filter]")
    assert box.get_attribute("aria-invalid") == "true"
    assert "Invalid regular expression" in page.locator(".view-toolbar .filter-error").text_content()
    page.screenshot(path=str(tmp_path / "invalid-filter.png"))


def test_smoothing_slider_changes_drawn_values(watched, server, tmp_path):
    page = open_app(watched, server.url)
    raw = [value("alpha", "train/lr", s) for s in range(50)]

    def traces():
        return page.evaluate(
            "() => [...document.querySelectorAll('.card')].find(c => c.dataset.tag === 'train/lr')"
            ".querySelector('.plot').data.map(t => ({role: t.meta.role, y: t.y}))"
        )

    slider = page.locator("input[name=smoothing]")
    slider.fill("0.9")
    page.wait_for_function("() => new URLSearchParams(location.search).get('smoothing') === '0.9'")
    drawn = {t["role"]: t["y"] for t in traces()}
    assert drawn["raw"] == pytest.approx(raw)
    assert drawn["smoothed"] == pytest.approx(ema(raw, 0.9), rel=1e-12)
    assert drawn["smoothed"] != pytest.approx(raw)
    slider.fill("0")
    wait_traces(page, "train/lr", 1)
    (only,) = traces()
    assert only["role"] == "raw" and only["y"] == pytest.approx(raw)
    assert card_summary(page)["loss"]["traces"] == 3
    page.screenshot(path=str(tmp_path / "no-smoothing.png"))


def test_deselecting_a_run_hides_its_trace(watched, server, tmp_path):
    page = open_app(watched, server.url)
    page.locator('input[type=checkbox][data-run="beta"]').uncheck()
    wait_traces(page, "loss", 4)
    cards = card_summary(page)
    assert "beta" not in cards["loss"]["runs"]
    assert "train/lr" in cards and "beta" not in cards["train/acc"]["runs"]
    assert parse_qs(urlparse(page.url).query)["off"] == ["beta"]
    page.click("text=Select none")
    page.wait_for_function("() => document.querySelectorAll('.card').length === 0")
    page.click("text=Select all")
    wait_ready(page, list(TAGS))
    assert card_summary(page)["loss"]["traces"] == 6
    page.screenshot(path=str(tmp_path / "runs.png"))


def test_run_filter_regex(watched, server):
    page = open_app(watched, server.url)
    page.fill("input[name=run-filter]", "^(alpha|gamma)$")
    wait_traces(page, "loss", 4)
    assert sorted(set(card_summary(page)["loss"]["runs"])) == ["alpha", "gamma"]
    assert page.locator(".run-list input[type=checkbox]").count() == 2


def test_state_in_url_reproduces_the_view(watched, server, tmp_path):
    page = watched.page
    page.goto(server.url + "?smoothing=0&x=wall&logy=1&off=gamma&tags=loss")
    page.wait_for_selector(".card")
    wait_ready(page, ["loss", "eval/loss"])
    cards = card_summary(page)
    assert sorted(cards) == ["eval/loss", "loss"]
    assert cards["loss"]["traces"] == 2 and "gamma" not in cards["loss"]["runs"]
    layout = page.evaluate(
        "() => { const p = document.querySelector('.card[data-tag=\"loss\"] .plot');"
        " return {x: p.layout.xaxis.type, y: p.layout.yaxis.type}; }"
    )
    assert layout == {"x": "date", "y": "log"}
    assert page.locator("input[name=smoothing]").input_value() == "0"
    assert page.locator("input[name=x-axis][value=wall]").is_checked()
    assert not page.locator('input[data-run="gamma"]').is_checked()
    page.screenshot(path=str(tmp_path / "from-url.png"))


def test_axis_and_outlier_controls(watched, server):
    page = open_app(watched, server.url)
    plot = '.card[data-tag="loss"] .plot'
    page.check("input[name=x-axis][value=relative]")
    page.wait_for_function(f"() => document.querySelector('{plot}').layout.xaxis.title.text.startsWith('relative')")
    xs = page.evaluate(f"() => document.querySelector('{plot}').data[0].x.slice(0, 3)")
    assert xs == pytest.approx([0, 1 / 60, 2 / 60])  # 200 s span: minutes since the first point
    assert "(min)" in page.evaluate(f"() => document.querySelector('{plot}').layout.xaxis.title.text")
    page.check("input[name=outliers]")
    page.wait_for_function(f"() => document.querySelector('{plot}').layout.yaxis.autorange === false")
    page.check("input[name=logy]")
    page.wait_for_function(f"() => document.querySelector('{plot}').layout.yaxis.type === 'log'")


def test_csv_download_from_card(watched, server, tmp_path):
    page = open_app(watched, server.url)
    with page.expect_download() as info:
        page.locator('.card[data-tag="train/acc"] a[data-format=csv]').click()
    rows = list(csv.reader(io.StringIO(open(info.value.path()).read())))
    assert rows[0] == ["run", "step", "wall_time", "value"]
    assert len(rows) == 1 + 2 * 100
    first = rows[1]
    assert first[0] == "alpha" and float(first[3]) == value("alpha", "train/acc", 0)


def test_keyboard_and_tooltip(watched, server):
    page = open_app(watched, server.url)
    box = page.locator('input[type=checkbox][data-run="alpha"]')
    box.focus()
    page.keyboard.press("Space")
    wait_traces(page, "loss", 4)
    assert page.evaluate("() => document.activeElement.dataset.run") == "alpha"  # focus kept
    page.keyboard.press("Space")
    wait_traces(page, "loss", 6)
    plot = page.locator('.card[data-tag="loss"] .plot .nsewdrag').first
    plot.hover()
    page.wait_for_selector('.card[data-tag="loss"] .hoverlayer .legend', timeout=5000)
    text = page.locator('.card[data-tag="loss"] .hoverlayer').text_content()
    assert all(run in text for run in RUNS)  # every run's value at the hovered step


# Counts the app's polls of api/info (its auto-refresh tick) as they are sent.
_COUNT_INFO_POLLS = """
window.__infoPolls = 0;
const send = window.fetch;
window.fetch = function (resource, ...rest) {
  const url = typeof resource === 'string' ? resource : String(resource.url || resource);
  if (new URL(url, location.href).pathname.endsWith('/api/info')) window.__infoPolls += 1;
  return send.call(this, resource, ...rest);
};
"""


def test_auto_refresh_keeps_zoom_and_nodes(watched, tmp_path):
    root = tmp_path / "live"
    writer = LogWriter(logdir=str(root / "run"), flush_secs=0.1)
    for step in range(30):
        writer.add_scalar("loss", float(step), step=step)
    writer.flush()
    with start_server(root, reload_interval=0.2) as server:
        page = watched.page
        # The page's timers on a clock the test can stop and run (in real time until then),
        # and its polls of api/info counted as they are sent.
        page.clock.install()
        page.add_init_script(_COUNT_INFO_POLLS)
        page.goto(server.url)
        wait_ready(page, ["loss"])
        plot = '.card[data-tag="loss"] .plot'
        page.evaluate(f"() => {{ const p = document.querySelector('{plot}'); p.__marker = 1;"
                      f" return Plotly.relayout(p, {{'xaxis.range': [5, 10]}}); }}")
        # a zoomed chart draws the window's points, refetched (issue 15)
        page.wait_for_function(f"() => document.querySelector('{plot}').closest('.card').dataset.window === '5:10'")
        assert page.evaluate(f"() => document.querySelector('{plot}').data[0].x") == list(range(5, 11))
        note = f"() => document.querySelector('{plot}').closest('.card').querySelector('.card-note').textContent"
        for step in range(30, 80):
            writer.add_scalar("loss", float(step), step=step)
        writer.flush()
        page.wait_for_function(f"() => ({note})().includes('of 80 points')", timeout=15000)
        state = page.evaluate(f"() => {{ const p = document.querySelector('{plot}');"
                              f" return {{marker: p.__marker, range: p.layout.xaxis.range}}; }}")
        assert state == {"marker": 1, "range": [5, 10]}
        page.uncheck("#autorefresh")
        writer.add_scalar("loss", 1.0, step=100)
        writer.flush()
        api = Client(server.url)  # the server has the new point: a refresh would show it
        wait_for(lambda: len(api.json("/api/scalars", run="run", tag="loss")["steps"]) == 81)
        api.close()
        # Stop the page's clock and run a minute of its timers at once: every poll that a
        # refresh still scheduled would have been sent (the refresh interval here is 1 s).
        polls = page.evaluate("() => window.__infoPolls")
        page.clock.pause_at(page.evaluate("() => Date.now()") + 1)
        page.clock.run_for(60_000)
        assert page.evaluate("() => window.__infoPolls") == polls
        assert "of 80 points" in page.evaluate(note)
        # Turned on again, the next tick polls and the chart shows the new point.
        page.check("#autorefresh")
        page.clock.run_for(1_000)
        assert page.evaluate("() => window.__infoPolls") == polls + 1
        page.clock.resume()
        page.wait_for_function(f"() => ({note})().includes('of 81 points')", timeout=15000)
        watched.finish()
    writer.close()


def test_lazy_cards_with_many_tags(watched, tmp_path):
    root = tmp_path / "many"
    with LogWriter(logdir=str(root / "run")) as w:
        for i in range(300):
            for step in range(20):
                w.add_scalar(f"group{i // 100}/tag{i:03d}", float(step * i), step=step)
    with start_server(root, reload_interval=5) as server:
        page = watched.page
        batches = []
        page.on("request", lambda r: "/api/scalars" in r.url and batches.append(r.url))
        page.goto(server.url + "?smoothing=0")
        page.wait_for_selector('.card[data-state="ready"]')
        assert page.locator(".card").count() == 300
        ready = page.locator('.card[data-state="ready"]').count()
        assert 0 < ready < 40
        assert len(batches) <= 3  # the visible cards came in one batched request or so
        wait_ready(page, ["group2/tag299"])
        assert page.locator('.card[data-state="ready"]').count() < 300
        assert card_summary(page)["group2/tag299"]["points"] == [20]
        # collapse a group (clicked as an element: cards still drawing as they scroll into
        # view move the layout, and a pointer click on a busy CI machine once hit another)
        page.locator('.group[data-group="group0"] > summary').evaluate("s => s.click()")
        assert not page.locator('.group[data-group="group0"]').evaluate("d => d.open")
        assert page.locator('.group[data-group="group1"]').evaluate("d => d.open")
        watched.finish()


def test_hostile_names_are_text(watched, tmp_path):
    run = '<img src=x onerror="window.__pwned=1">'
    tag = "<script>window.__pwned=1</script>"
    with LogWriter(logdir=str(tmp_path / "h" / run)) as w:
        w.add_scalar(tag, 1.0, step=0)
        w.add_scalar(tag, 2.0, step=1)
    with start_server(tmp_path / "h", reload_interval=5) as server:
        page = watched.page
        page.goto(server.url)
        page.wait_for_selector('.card[data-state="ready"]')
        assert page.evaluate("() => window.__pwned") is None
        assert page.locator(".card-title").text_content() == tag
        assert page.locator(".run-name").text_content() == run
        assert page.locator("img[src=x]").count() == 0
        watched.finish()


def test_dark_and_narrow(browser, server, tmp_path):
    context = browser.new_context(viewport={"width": 480, "height": 800}, color_scheme="dark")
    page = context.new_page()
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(server.url)
    wait_ready(page, ["loss"])
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(21, 24, 30)"
    assert page.evaluate("() => document.scrollingElement.scrollWidth") <= 480
    assert not page.locator("#sidebar").is_visible()
    page.click("#sidebar-toggle")
    assert page.locator("#sidebar").is_visible()
    assert page.locator("#sidebar-toggle").get_attribute("aria-expanded") == "true"
    page.screenshot(path=str(tmp_path / "narrow-dark.png"), full_page=False)
    context.close()
    assert errors == []


def _tooltip_runs(page, tag: str) -> list[str]:
    """Run names in the unified tooltip, top to bottom, with the value each shows."""
    plot = page.locator(f'.card[data-tag="{tag}"] .plot .nsewdrag').first
    plot.scroll_into_view_if_needed()  # (wait_ready scrolled to the last card)
    box = plot.bounding_box()
    # off the plot first, until its tooltip is gone: a tooltip still drawn for an earlier
    # position (a unified tooltip shows wherever the pointer is over the plot) would be read
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] - 40)
    page.wait_for_selector(f'.card[data-tag="{tag}"] .hoverlayer .legend .traces',
                           state="detached", timeout=5000)
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    page.wait_for_selector(f'.card[data-tag="{tag}"] .hoverlayer .legend .traces', timeout=5000)
    rows = page.eval_on_selector_all(
        f'.card[data-tag="{tag}"] .hoverlayer .legend .traces',
        "els => els.map(e => [e.getBoundingClientRect().top, e.textContent])",
    )
    out = []
    for _, text in sorted(rows):
        name, _, rest = text.partition(": ")
        out.append((name, float(rest.split(" ")[0])))
    return out


def test_tooltip_order_follows_values(watched, server):
    page = open_app(watched, server.url + "?smoothing=0")
    as_run_order = _tooltip_runs(page, "loss")
    assert [name for name, _ in as_run_order] == list(RUNS)  # default: run order
    page.select_option("select[name=tooltip-order]", "value descending")
    page.wait_for_function("() => location.search.includes('tips=')")
    wait_ready(page, list(TAGS))
    high_first = _tooltip_runs(page, "loss")
    values = [v for _, v in high_first]
    assert len(values) == len(RUNS) and values == sorted(values, reverse=True)
    assert sorted(high_first) == sorted(as_run_order)  # the same step, only reordered
    page.select_option("select[name=tooltip-order]", "value ascending")
    wait_ready(page, list(TAGS))
    low_first = [v for _, v in _tooltip_runs(page, "loss")]
    assert low_first == sorted(values)
    # the order lives in the URL: a reload keeps it
    page.reload()
    wait_ready(page, list(TAGS))
    assert page.input_value("select[name=tooltip-order]") == "value ascending"


def test_a_series_of_one_point_is_a_dot(watched, tmp_path):
    """An epoch metric after one epoch: one point draws no line, so it is drawn as a
    marker (as TensorBoard does); a longer series stays a plain line."""
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_scalar("epoch_loss", 0.5, step=0)
        for step in range(3):
            w.add_scalar("loss", 1.0 / (step + 1), step=step)
    with serving(tmp_path) as server:
        page = watched.page
        page.goto(server.url)
        wait_ready(page, ["epoch_loss", "loss"])
        modes = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('.card')]
            .map(c => [c.dataset.tag, c.querySelector('.plot').data.map(t => t.mode)]))""")
        # the faint raw line, then the smoothed one (a dot for the single point)
        assert modes == {"epoch_loss": ["lines", "markers"], "loss": ["lines", "lines"]}
        dots = page.locator('.card[data-tag="epoch_loss"] .plot .scatterlayer .point')
        assert dots.count() == 1
