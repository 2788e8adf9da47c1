"""The System dashboard in headless Chromium over a run whose system series the real
sampler recorded while training points were logged: charts per host on the wall-time
axis, and hovering a training point shows the machine's state at its wall time, the
values the API answers for that time. The GPU memory peak shows in the run table."""

from __future__ import annotations

import socket
import time

import pytest

from tests.helpers.http import Client, wait_for
from tests.helpers.server import serving
from visualdl import LogReader, LogWriter

pytestmark = pytest.mark.browser

HOST = socket.gethostname().replace("/", "_")
GIB = 1 << 30


def _samples(logdir, run: str) -> int:
    try:
        tags = LogReader(str(logdir)).tags(run).get("system", [])
    except KeyError:
        return 0
    tag = f"system/{HOST}/cpu/percent"
    return len(LogReader(str(logdir)).scalars(run, tag).steps) if tag in tags else 0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("system_ui")
    with LogWriter(logdir=str(root / "train"), system_metrics=0.1) as w:
        step = 0
        deadline = time.monotonic() + 60
        while _samples(root, "train") < 8 and time.monotonic() < deadline:
            w.add_scalar("train/loss", 1.0 / (step + 1), step)
            w.add_scalar("train/acc", step / 100, step)
            if step % 5 == 0:
                w.add_scalar("eval/loss", 2.0 / (step + 1), step)  # sorts before train/loss
            step += 1
            w.flush()
            time.sleep(0.03)  # training's pace: several steps per sample
    with LogWriter(logdir=str(root / "gpu"), system_metrics=False) as w:
        for i, used in enumerate((1 * GIB, 3 * GIB, 2 * GIB)):
            w.add_scalar("system/node7/gpu0/memory_used_bytes", float(used), i, walltime=1e9 + i)
            w.add_scalar("train/loss", 0.5, i, walltime=1e9 + i)
    with serving(root) as handle:
        yield handle


def open_system(watched, server):
    page = watched.page
    page.goto(f"{server.url}?tab=system")
    page.wait_for_selector("#tab-system[aria-selected=true]")
    page.wait_for_function(
        "() => { const s = document.querySelector('.system-run[data-run=\"train\"]');"
        " return s && [...s.querySelectorAll('.system-plot')].every((p) => p.data); }")
    return page


def test_system_section_draws_the_sampled_series(watched, server, tmp_path):
    page = open_system(watched, server)
    api = Client(server.url)
    overview = api.json("/api/system", run="train")
    assert [h["host"] for h in overview["hosts"]] == [HOST]
    charts = page.eval_on_selector_all(
        '.system-run[data-run="train"] .system-grid .system-plot',
        "els => els.map((p) => [p.dataset.chart, p.data.map((t) => [t.meta.metric, t.x.length])])")
    drawn = {metric: n for _, traces in charts for metric, n in traces}
    points = {m["metric"]: m["points"] for m in overview["hosts"][0]["metrics"]}
    assert drawn == {m: n for m, n in points.items() if m in drawn}
    assert {"cpu/percent", "process/cpu_percent", "process/rss_bytes",
            "memory/used_bytes"} <= set(drawn)
    assert all(n >= 8 for n in drawn.values())
    ids = [chart for chart, _ in charts]
    assert ids[:2] == ["cpu", "memory"]
    # the training loss is the curve drawn, not the evaluation loss that sorts first
    assert page.eval_on_selector("select[name=system-tag]", "s => s.value") == "train/loss"
    # the training curve is on the same wall-time axis
    axis = page.eval_on_selector('.system-run[data-run="train"] .system-train',
                                 "p => [p.layout.xaxis.type, p.data[0].x.length]")
    loss = api.json("/api/scalars", run="train", tag="train/loss", points=600)
    assert axis == ["date", len(loss["steps"])]
    # the scalars page does not show system series as charts; the tabs list System
    assert "System" in page.locator("#tabs [role=tab]").all_text_contents()
    page.screenshot(path=str(tmp_path / "system.png"), full_page=True)
    page.goto(f"{server.url}?tab=scalars")
    page.wait_for_selector(".card")
    tags = page.eval_on_selector_all(".card", "els => els.map((c) => c.dataset.tag)")
    assert tags and not any(t.startswith("system/") for t in tags)


def test_hovering_a_training_point_shows_the_machine_then(watched, server, tmp_path):
    page = open_system(watched, server)
    plot = '.system-run[data-run="train"] .system-train'
    loss = Client(server.url).json("/api/scalars", run="train", tag="train/loss", points=600)
    index = len(loss["steps"]) // 2
    x, y = page.eval_on_selector(plot, """(p, i) => { const t = p.data[0]; const fl = p._fullLayout;
        const r = p.getBoundingClientRect();
        return [r.left + fl._size.l + fl.xaxis.l2p(fl.xaxis.d2l(t.x[i])),
                r.top + fl._size.t + fl.yaxis.l2p(t.y[i])]; }""", index)
    page.mouse.move(x - 30, y + 30)
    page.mouse.move(x, y, steps=5)
    readout = '.system-run[data-run="train"] .system-readout'
    page.wait_for_selector(f"{readout}[data-wall-time] .system-metric")
    wall = float(page.get_attribute(readout, "data-wall-time"))
    step = int(page.get_attribute(readout, "data-step"))
    assert loss["wall_times"][loss["steps"].index(step)] == wall  # a real training point
    shown = page.eval_on_selector_all(
        f"{readout} .system-state",
        "els => els.map((d) => [d.dataset.host, [...d.querySelectorAll('.system-metric')].map("
        "(m) => [m.dataset.metric, m.dataset.value, m.dataset.sampled, m.querySelector('dd').textContent])])")
    at = Client(server.url).json("/api/system/at", run="train", wall_time=wall)
    assert [host for host, _ in shown] == [h["host"] for h in at["hosts"]] == [HOST]
    metrics = {m: (float(v), float(s), text) for m, v, s, text in shown[0][1]}
    expected = at["hosts"][0]["metrics"]
    assert set(metrics) == set(expected)
    for metric, sample in expected.items():
        assert metrics[metric][:2] == (sample["value"], sample["wall_time"]), metric
    cpu = expected["cpu/percent"]["value"]
    assert metrics["cpu/percent"][2] == f"{cpu:.1f} %"
    # the hovered time is marked on the host's charts
    marks = page.eval_on_selector_all(
        '.system-run[data-run="train"] .system-grid .system-plot',
        "els => els.map((p) => (p.layout.shapes || []).length)")
    assert marks and all(n == 1 for n in marks)
    page.screenshot(path=str(tmp_path / "system-hover.png"), full_page=True)


def test_gpu_memory_peak_in_the_run_table(watched, server):
    page = open_system(watched, server)
    cell = '#runs li[data-run="gpu"] .run-cell[data-col="gpu"]'
    page.wait_for_selector(cell)
    assert page.locator(cell).text_content() == "3.00 GiB"
    assert page.locator('#runs li[data-run="train"] .run-cell[data-col="gpu"]').text_content() == "–"
    header = page.locator('#runs .run-sort[data-sort="gpu"]').text_content()
    assert header.startswith("GPU mem peak")
    section = page.locator('.system-run[data-run="gpu"] .system-peak').text_content()
    assert "3.00 GiB" in section


def test_zooming_one_chart_moves_the_run_s_other_charts(watched, server):
    page = open_system(watched, server)
    plot = '.system-run[data-run="train"] .system-train'
    left, top, width, height = page.eval_on_selector(plot, """(p) => { const fl = p._fullLayout;
        const r = p.getBoundingClientRect();
        return [r.left + fl._size.l, r.top + fl._size.t, fl._size.w, fl._size.h]; }""")
    page.mouse.move(left + width * 0.3, top + height * 0.5)
    page.mouse.down()
    page.mouse.move(left + width * 0.6, top + height * 0.5, steps=8)
    page.mouse.up()
    ranges = (".system-run[data-run=\"train\"] .system-plot",
              "els => els.map((p) => p.layout.xaxis.range.map(String))")
    zoomed = page.eval_on_selector(plot, "p => p.layout.xaxis.range.map(String)")
    wait_for(lambda: all(r == zoomed for r in page.eval_on_selector_all(*ranges)), timeout=10)
    before = page.eval_on_selector(plot, "p => p.data[0].x.length")
    assert before > 0 and len(page.eval_on_selector_all(*ranges)) >= 5
