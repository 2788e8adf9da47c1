"""The HTML report in headless Chromium, opened from disk with the network cut off: its
charts are drawn from the embedded points, hovering shows a point's value, a run's
checkbox hides its traces in every chart, the smoothing slider recomputes the EMA; and the
dashboard's "Save as HTML" downloads the report of the runs on screen."""

from __future__ import annotations

import json
import re

import pytest

from tests.helpers.pages import ema, wait_ready
from tests.helpers.server import serving
from tests.report.conftest import SPIKE, write_logdir
from visualdl import LogReader
from visualdl.report import Selection, build_report, selection_from_url

pytestmark = pytest.mark.browser

ACC_A = [0.5, 0.6, 0.7, 0.8, 0.9]


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("report_ui")
    write_logdir(root)
    return root


@pytest.fixture(scope="module")
def report_file(logdir, tmp_path_factory):
    path = tmp_path_factory.mktemp("report_file") / "report.html"
    path.write_text(build_report(LogReader(str(logdir)), Selection(smoothing=0.0)),
                    encoding="utf-8")
    return path


def _offline_page(watched):
    """The watched page, with every request that is not for a file:// URL refused."""
    page = watched.page
    asked = []

    def guard(route):
        asked.append(route.request.url)
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            route.abort()

    page.context.route("**/*", guard)
    page.context.set_offline(True)
    return page, asked


def _traces(page, tag):
    return page.evaluate(
        """(tag) => { const div = document.querySelector(`.chart[data-tag="${tag}"]`);
              // plotly's own state (_fullData) for what is drawn; meta as given (data)
              return div._fullData.map((t, i) => ({
                run: div.data[i].meta.run, role: div.data[i].meta.role, visible: t.visible,
                x: Array.from(div.data[i].x), y: Array.from(div.data[i].y)})); }""", tag)


def test_report_opens_from_disk_offline(watched, report_file):
    page, asked = _offline_page(watched)
    page.goto(report_file.as_uri())
    page.wait_for_function("document.body.dataset.ready === '1'")
    assert page.evaluate("document.body.dataset.drawn") == "3"  # 2 scalar charts, 1 histogram
    assert all(url.startswith("file://") for url in asked), asked
    loss = _traces(page, "train/loss")
    assert [(t["run"], t["role"]) for t in loss] == [(0, "raw"), (0, "smoothed"),
                                                      (1, "raw"), (1, "smoothed")]
    assert max(loss[0]["y"]) == SPIKE
    assert page.locator('.chart[data-tag="train/loss"] path.js-line').count() == 4
    assert re.search(r"of 20,010 points kept", page.inner_text("#points"))
    assert page.locator("#runs tbody tr").count() == 2
    assert page.locator("figure img").count() == 2
    assert float(page.evaluate("document.body.dataset.firstChartMs")) > 0  # the SVG first look

    acc = _traces(page, "eval/acc")
    assert acc[1]["x"] == [0, 10, 20, 30, 40]
    assert acc[1]["y"] == pytest.approx(ACC_A, rel=1e-6)
    page.evaluate("""() => { const div = document.querySelector('.chart[data-tag="eval/acc"]');
                             Plotly.Fx.hover(div, [{curveNumber: 1, pointNumber: 2}]); }""")
    hover = page.locator('.chart[data-tag="eval/acc"] .hovertext')
    hover.wait_for()
    assert [t.text_content() for t in hover.locator("text.nums tspan").all()] == [
        "a", "step 20", "0.7"]

    page.locator('#controls input[data-run="a"]').uncheck()
    page.wait_for_function("""() => { const d = document.querySelector(
                                '.chart[data-tag="train/loss"]');
                              return d._fullData.every((t, i) => d.data[i].meta.run !== 0
                                                       || t.visible === false); }""")
    for tag in ("train/loss", "eval/acc", "weights"):
        visible = {(t["run"], t["visible"]) for t in _traces(page, tag)}
        assert visible == {(0, False), (1, True)}, tag
    assert page.locator('figure[data-run="a"]').is_hidden()
    assert page.locator('#runs tr[data-run="a"]').is_hidden()
    assert page.locator('figure[data-run="b"]').is_visible()

    page.locator("#smoothing").fill("0.5")
    page.wait_for_function("""() => document.querySelector('.chart[data-tag="eval/acc"]')
                              .data[1].y[1] !== 0.6""")
    smoothed = _traces(page, "eval/acc")  # run a's hidden traces are smoothed too
    assert smoothed[1]["y"] == pytest.approx(ema(ACC_A, 0.5), rel=1e-6)
    assert smoothed[3]["y"] == pytest.approx(ema([v + 0.01 for v in ACC_A], 0.5), rel=1e-6)
    assert smoothed[0]["y"] == pytest.approx(ACC_A, rel=1e-6)  # the raw trace stays


def test_save_as_html_downloads_the_shown_runs(watched, logdir, tmp_path):
    with serving(logdir) as server:
        page = watched.page
        page.goto(f"{server.url}?tab=scalars&off=a&tags=acc&smoothing=0.3")
        wait_ready(page, ["eval/acc"])
        with page.expect_download() as info:
            page.click("#save-html")
        download = info.value
        assert download.suggested_filename == "visualdl-report.html"
        path = tmp_path / "saved.html"
        download.save_as(path)
        watched.finish()
    page_text = path.read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script id="report-data" type="application/json">(.*?)'
                                r"</script>", page_text, re.S).group(1))
    assert data["runs"] == ["b"]
    assert data["smoothing"] == 0.3
    assert [c["tag"] for s in data["scalars"]["sections"] for c in s["charts"]] == ["eval/acc"]


def test_grouped_report_draws_bands(watched, logdir, tmp_path):
    path = tmp_path / "grouped.html"
    selection = selection_from_url("http://h/?group=hp:seed&smoothing=0&tags=acc")
    path.write_text(build_report(LogReader(str(logdir)), selection), encoding="utf-8")
    page, _ = _offline_page(watched)
    page.goto(path.as_uri())
    page.wait_for_function("document.body.dataset.ready === '1'")
    traces = page.evaluate("""() => {
        const d = document.querySelector('.chart[data-tag="eval/acc"]');
        return d._fullData.map((t, i) => ({role: d.data[i].meta.role, fill: t.fill, name: t.name,
                                           y: Array.from(d.data[i].y)})); }""")
    assert [t["role"] for t in traces] == ["group", "group", "group-center"]
    assert traces[1]["fill"] == "tonexty"
    assert traces[2]["name"] == "seed=7 (2 runs)"
    assert traces[2]["y"] == pytest.approx([v + 0.005 for v in ACC_A], rel=1e-6)
    assert "Runs grouped by 'seed'" in page.inner_text("footer")
