"""Zoom refetches on every x axis of the scalars chart (issue 15, "Long runs"), in Chromium
over a real server: a 1M-step series zoomed on its Step, Relative and Wall axes until
single steps appear, with the records' exact values; smoothing at the window's edge; log-y;
grouped charts; reset."""

from __future__ import annotations

import math

import pytest

from tests.helpers.pages import ema, watched_page
from tests.helpers.server import serving
from visualdl import LogWriter

pytestmark = pytest.mark.browser

N = 1_000_000
HIDDEN = 654_321  # one step the full view (a few thousand points) cannot show
DT = 0.01  # seconds a step: the run spans 10,000 s, so the relative axis is in hours
T0 = 1_700_000_000.0
LATE = T0 + 50_000.0  # "short" starts later: its relative origin is its own
GROUP_STEPS = 3000


def value(step: int) -> float:
    return 7.5 if step == HIDDEN else math.sin(step / 1000.0) + 1e-6 * (step % 97)


def positive(step: int) -> float:
    return 2.0 + value(step)


def member(seed: int, step: int) -> float:
    return 1.0 / (1.0 + step * 0.01) + 0.1 * seed + 0.001 * (step % 5)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("zoom")
    with LogWriter(logdir=str(root / "big")) as w:
        for s in range(N):
            w.add_scalar("x", value(s), step=s, walltime=T0 + s * DT)
            if s % 10 == 0:
                w.add_scalar("pos", positive(s), step=s, walltime=T0 + s * DT)
    with LogWriter(logdir=str(root / "short")) as w:
        for s in range(0, 20_000):
            w.add_scalar("x", -value(s), step=s, walltime=LATE + s * 0.5)
    for seed in (0, 1, 2):
        with LogWriter(logdir=str(root / f"grp_seed{seed}")) as w:
            for s in range(GROUP_STEPS):
                w.add_scalar("loss", member(seed, s), step=s, walltime=T0 + s)
    with serving(root, load_timeout=60) as handle:
        yield handle


CARD = '.card[data-tag="{tag}"]'


def open_chart(watched, server, query, tag="x"):
    page = watched.page
    windows = []
    page.on("request", lambda r: r.url.endswith("api/scalars/batch")
            and any(k in (r.post_data or "") for k in ("start_step", "wall_min"))
            and windows.append(r.post_data_json))
    page.goto(server.url + "?" + query)
    card = CARD.format(tag=tag)
    page.locator(card).scroll_into_view_if_needed()
    page.wait_for_selector(f'{card}[data-state="ready"]')
    return page, card, f"document.querySelector('{card} .plot')", windows


def trace(page, plot, role="raw", run=None):
    return page.evaluate(
        f"([role, run]) => {{ const t = {plot}.data.find(t => t.meta.role === role"
        f" && (run === null || t.meta.run === run)); return {{x: Array.from(t.x, v => v instanceof Date ? v.getTime() : v), y: t.y}}; }}",
        [role, run])


def drag_zoom(page, card, a, b):
    """A user's drag over the fraction a..b of the chart's width."""
    box = page.locator(f"{card} .plot .nsewdrag").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * a, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * (a + b) / 2, y, steps=5)
    page.mouse.move(box["x"] + box["width"] * b, y, steps=5)
    page.mouse.up()


def test_relative_axis_zooms_to_single_steps_of_a_million(watched, server):
    page, card, plot, windows = open_chart(
        watched, server, "runFilter=^(big|short)$&x=relative&smoothing=0")
    full = trace(page, plot, run="big")
    near = set(range(HIDDEN - 20, HIDDEN + 21))
    assert len(full["x"]) < 5000  # min/max buckets: the spike is there, its neighbours not
    assert len({round(x * 3600 / DT) for x in full["x"]} & near) <= 1
    assert page.evaluate(f"() => {plot}.layout.xaxis.title.text") == "relative time (h)"
    # a drag over the middle of the chart: each run asks for its own wall-time window
    drag_zoom(page, card, 0.40, 0.50)
    page.wait_for_function(f"() => {plot}.closest('.card').dataset.window.startsWith('relative|h:')")
    body = windows[-1]
    items = {item["run"]: item for item in body["series"]}
    lo, hi = items["big"]["wall_min"] - T0, items["big"]["wall_max"] - T0
    assert 0 < lo < hi < 10_000 and "start_step" not in body
    assert items["short"]["wall_min"] - LATE == pytest.approx(lo)  # the same seconds, its origin
    zoomed = trace(page, plot, run="big")
    inside = [x for x in full["x"] if lo / 3600 <= x <= hi / 3600]
    assert len(zoomed["x"]) > 100 and len(zoomed["x"]) > 4 * len(inside)  # refetched, denser
    assert min(zoomed["x"]) >= lo / 3600 - 1e-9 and max(zoomed["x"]) <= hi / 3600 + 1e-9
    # deeper, to 41 steps around the hidden one: every step is there, with its value
    a, b = (HIDDEN - 20) * DT / 3600, (HIDDEN + 20) * DT / 3600
    page.evaluate(f"() => Plotly.relayout({plot}, {{'xaxis.range': [{a!r}, {b!r}]}})")
    page.wait_for_function(f"() => {plot}.data.find(t => t.meta.run === 'big').x.length < 100")
    deep = trace(page, plot, run="big")
    steps = [round(x * 3600 / DT) for x in deep["x"]]
    assert steps[0] >= HIDDEN - 21 and steps[-1] <= HIDDEN + 21 and len(steps) >= 39
    assert steps == list(range(steps[0], steps[-1] + 1))  # every step, none skipped
    assert deep["y"] == [value(s) for s in steps]
    assert deep["x"] == pytest.approx([((T0 + s * DT) - T0) / 3600 for s in steps], abs=1e-12)
    assert "relative" in page.locator(f"{card} .card-note").text_content()
    # the other run's window is its own start plus the same hours: nothing of it is there
    assert trace(page, plot, run="short")["x"] == []
    # double-click: the full view again
    page.dblclick(f"{card} .plot .nsewdrag")
    page.wait_for_function(f"() => {plot}.closest('.card').dataset.window === ''")
    assert trace(page, plot, run="big") == full


@pytest.fixture
def far_east(browser):
    """A page whose clock is at UTC+5:45: plotly's date axis writes local wall-clock
    strings, which the chart must read back in the page's own time zone."""
    yield from watched_page(browser, timezone_id="Asia/Kathmandu")


def test_wall_axis_zooms_to_single_steps(far_east, server):
    page, card, plot, windows = open_chart(far_east, server, "runFilter=^big$&x=wall&smoothing=0")
    assert page.evaluate(f"() => new Date({T0 * 1000!r}).getTimezoneOffset()") == -345
    full = trace(page, plot)
    assert page.evaluate(f"() => {plot}.layout.xaxis.type") == "date"
    # a user's drag: plotly reports the range as local wall-clock strings
    drag_zoom(page, card, 0.30, 0.60)
    page.wait_for_function(f"() => {plot}.closest('.card').dataset.window.startsWith('wall:')")
    lo, hi = windows[-1]["wall_min"] - T0, windows[-1]["wall_max"] - T0
    assert 1000 < lo < hi < 9000 and "start_step" not in windows[-1]
    dragged = trace(page, plot)
    assert lo * 1000 - 1 <= min(dragged["x"]) - T0 * 1000 and max(dragged["x"]) - T0 * 1000 <= hi * 1000 + 1
    # the same range written by a script
    t_lo, t_hi = T0 + (HIDDEN - 5) * DT - 0.002, T0 + (HIDDEN + 5) * DT + 0.002
    page.evaluate(
        f"""([lo, hi]) => {{
          const f = (t) => {{ const d = new Date(t * 1000); const p = (n, w = 2) => String(n).padStart(w, '0');
            return `${{d.getFullYear()}}-${{p(d.getMonth() + 1)}}-${{p(d.getDate())}} ${{p(d.getHours())}}:${{p(d.getMinutes())}}:${{p(d.getSeconds())}}.${{p(d.getMilliseconds(), 3)}}`; }};
          return Plotly.relayout({plot}, {{'xaxis.range': [f(lo), f(hi)]}}); }}""", [t_lo, t_hi])
    page.wait_for_function(f"() => {plot}.data[0].x.length < 100")
    body = windows[-1]
    assert body["wall_min"] == pytest.approx(t_lo, abs=2e-3)
    assert body["wall_max"] == pytest.approx(t_hi, abs=2e-3)
    deep = trace(page, plot)
    steps = list(range(HIDDEN - 5, HIDDEN + 6))
    assert deep["y"] == [value(s) for s in steps]
    assert deep["x"] == pytest.approx([(T0 + s * DT) * 1000 for s in steps], abs=1.0)
    assert page.evaluate(f"() => {plot}.closest('.card').dataset.window").startswith("wall:")
    page.dblclick(f"{card} .plot .nsewdrag")
    page.wait_for_function(f"() => {plot}.closest('.card').dataset.window === ''")
    assert trace(page, plot) == full


def test_smoothing_at_the_window_edge_is_the_full_series_smoothing(watched, server):
    page, card, plot, windows = open_chart(watched, server, "runFilter=^big$&x=step&smoothing=0.9")
    page.evaluate(f"() => Plotly.relayout({plot}, {{'xaxis.range': [{HIDDEN - 20}, {HIDDEN + 20}]}})")
    page.wait_for_function(f"() => {plot}.data.find(t => t.meta.role === 'raw').x.includes({HIDDEN})")
    values = [value(s) for s in range(HIDDEN + 21)]
    for weight in (0.9, 0.5):
        full = ema(values, weight)
        if weight != 0.9:  # the slider's number box; the window is refetched once it rests
            page.fill(".smoothing-number", str(weight))
            page.locator(".smoothing-number").dispatch_event("change")
            page.wait_for_function(
                f"() => Math.abs({plot}.data.find(t => t.meta.role === 'smoothed').y[0] - {full[HIDDEN - 20]!r}) < 1e-9")
        raw = trace(page, plot, "raw")
        smoothed = trace(page, plot, "smoothed")
        assert raw["x"] == list(range(HIDDEN - 20, HIDDEN + 21))
        assert raw["y"] == values[HIDDEN - 20:]
        # the EMA of the whole series at these steps, not one restarted at the window's edge
        assert smoothed["y"] == pytest.approx(full[HIDDEN - 20:], rel=1e-9)
        # (an EMA started at the window's edge would draw the raw value there)
        assert abs(smoothed["y"][0] - raw["y"][0]) > 1e-4
        assert windows[-1]["smoothing"] == weight


def test_log_y_under_zoom_keeps_the_window(watched, server):
    page, card, plot, windows = open_chart(watched, server, "runFilter=^big$&logy=true&smoothing=0",
                                           tag="pos")
    assert page.evaluate(f"() => {plot}.layout.yaxis.type") == "log"
    page.evaluate(f"() => Plotly.relayout({plot}, {{'xaxis.range': [{HIDDEN - 200}, {HIDDEN + 200}]}})")
    page.wait_for_function(f"() => {plot}.data[0].x.length < 100")
    deep = trace(page, plot)
    steps = [s for s in range(HIDDEN - 200, HIDDEN + 201) if s % 10 == 0]
    assert deep["x"] == steps and deep["y"] == [positive(s) for s in steps]
    # log-y off while zoomed: the x window stays, y rescales
    page.uncheck("input[name=logy]")
    page.wait_for_function(f"() => {plot}.layout.yaxis.type === 'linear'")
    assert page.evaluate(f"() => {plot}.layout.xaxis.range") == [HIDDEN - 200, HIDDEN + 200]
    assert page.evaluate(f"() => {plot}.closest('.card').dataset.window") == f"{HIDDEN - 200}:{HIDDEN + 200}"
    assert trace(page, plot) == deep


def test_grouped_chart_zooms_on_steps_whatever_the_x_mode(watched, server):
    page, card, plot, windows = open_chart(
        watched, server, "runFilter=^grp_&x=relative&smoothing=0&group=re:^(grp)_seed", tag="loss")
    page.wait_for_function(f"() => {plot}.closest('.card').dataset.groups === '1'")
    center = "t => t.meta.role === 'center'"
    full = page.evaluate(f"() => {plot}.data.find({center}).x")
    assert len(full) < GROUP_STEPS and 1001 not in full  # thinned to the chart's width
    page.evaluate(f"() => Plotly.relayout({plot}, {{'xaxis.range': [1000, 1010]}})")
    page.wait_for_function(f"() => {plot}.closest('.card').dataset.window === '1000:1010'")
    page.wait_for_function(f"() => {plot}.data.find({center}).x.length === 11")
    got = page.evaluate(f"() => {plot}.data.filter(t => t.meta.group === 'grp').map(t => [t.meta.role, t.x, t.y])")
    by_role = {role: (x, y) for role, x, y in got}
    assert by_role["center"][0] == list(range(1000, 1011))
    mean = [sum(member(k, s) for k in range(3)) / 3 for s in range(1000, 1011)]
    assert by_role["center"][1] == pytest.approx(mean, rel=1e-12)
    assert by_role["band-upper"][1] == pytest.approx([member(2, s) for s in range(1000, 1011)])
    page.dblclick(f"{card} .plot .nsewdrag")
    page.wait_for_function(f"() => {plot}.closest('.card').dataset.window === ''")
    page.wait_for_function(f"() => {plot}.data.find({center}).x.length === {len(full)}")


def test_switching_the_x_axis_drops_the_window(watched, server):
    page, card, plot, windows = open_chart(watched, server, "runFilter=^big$&x=step&smoothing=0")
    full_steps = trace(page, plot)["x"]
    page.evaluate(f"() => Plotly.relayout({plot}, {{'xaxis.range': [{HIDDEN - 20}, {HIDDEN + 20}]}})")
    page.wait_for_function(f"() => {plot}.closest('.card').dataset.window === '{HIDDEN - 20}:{HIDDEN + 20}'")
    page.check("input[name=x-axis][value=relative]")
    page.wait_for_function(f"() => {plot}.layout.xaxis.title.text === 'relative time (h)'")
    page.wait_for_function(f"() => {plot}.closest('.card').dataset.window === ''")
    rel = trace(page, plot)
    assert len(rel["x"]) == len(full_steps)
    assert rel["x"] == pytest.approx([((T0 + s * DT) - T0) / 3600 for s in full_steps], abs=1e-12)
    assert page.evaluate(f"() => {plot}.layout.xaxis.autorange") is True
