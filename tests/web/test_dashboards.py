"""Every dashboard but scalars and graph, in headless Chromium over real logs and a real
server: each view renders, sliders move the shown step (and the pixels), Markdown stays
inert, hparams charts hold one line/point per run, no console errors, a screenshot each."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.helpers.logs import IMAGE_STEPS, mpl_red, write_kinds
from tests.helpers.server import serving
from visualdl import LogWriter
from visualdl.server.background import start_server

pytestmark = pytest.mark.browser

ALL_TABS = ["Images", "Audio", "Text", "Histograms", "Distributions", "PR Curves", "ROC Curves",
            "HParams", "Embeddings", "Figures"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(write_kinds(tmp_path_factory.mktemp("dash"))) as handle:
        yield handle


def open_tab(watched, server, tab: str, query: str = ""):
    page = watched.page
    page.goto(f"{server.url}?tab={tab}{query}")
    page.wait_for_selector(f"#tab-{tab}[aria-selected=true]")
    return page


def card(page, run: str, tag: str) -> str:
    return f'.card[data-run="{run}"][data-tag="{tag}"]'


def wait_state(page, selector: str, state: str = "ready") -> None:
    page.locator(selector).scroll_into_view_if_needed()
    page.wait_for_function(
        "([s, state]) => { const c = document.querySelector(s); return c && c.dataset.state === state; }",
        arg=[selector, state],
    )


def set_range(page, selector: str, value: int) -> None:
    """Move a range input as a user would: value then an input event."""
    page.locator(selector).evaluate(
        "(el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', {bubbles: true})); }",
        value,
    )


def red_pixel(page, selector: str) -> int:
    """The red channel of the top-left pixel of the image on screen in `selector`."""
    return page.locator(selector).evaluate(
        """(img) => { const c = document.createElement('canvas'); c.width = img.naturalWidth;
           c.height = img.naturalHeight; const g = c.getContext('2d'); g.drawImage(img, 0, 0);
           return g.getImageData(0, 0, 1, 1).data[0]; }"""
    )


def test_a_tab_per_kind_in_order(watched, server, tmp_path):
    page = open_tab(watched, server, "images")
    tabs = page.locator("#tabs [role=tab]").all_text_contents()
    assert [t for t in tabs if t in ALL_TABS] == ALL_TABS
    page.screenshot(path=str(tmp_path / "tabs.png"))


def test_images_slider_every_step_pixels_and_tools(watched, server, tmp_path):
    page = open_tab(watched, server, "images")
    a = card(page, "a", "samples/input")
    wait_state(page, a)
    img = f"{a} .image-frame img"
    page.wait_for_selector(f'{img}[data-step="{IMAGE_STEPS - 1}"]')  # newest step first
    assert page.locator(a).get_attribute("data-total") == str(IMAGE_STEPS)  # ALL steps
    assert red_pixel(page, img) == IMAGE_STEPS - 1
    set_range(page, f"{a} .step-range", 17)
    page.wait_for_selector(f'{img}[data-step="17"]')
    assert red_pixel(page, img) == 17
    assert "step=17" in page.locator(img).get_attribute("src")
    readout = page.locator(f"{a} .step-readout").inner_text()
    assert "step 17" in readout and "18 of 40" in readout
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", readout)  # wall time
    # keyboard: the range input takes arrows, Home and End
    page.locator(f"{a} .step-range").focus()
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector(f'{img}[data-step="16"]')
    page.keyboard.press("Home")
    page.wait_for_selector(f'{img}[data-step="0"]')
    assert red_pixel(page, img) == 0
    page.click(f"{a} button[aria-label$='next step']")
    page.wait_for_selector(f'{img}[data-step="1"]')

    # one slider drives every card when synced
    b = card(page, "b", "samples/input")
    wait_state(page, b)
    page.check("input[name=sync]")
    set_range(page, f"{a} .step-range", 5)
    page.wait_for_selector(f'{b} .image-frame img[data-step="5"]')
    assert red_pixel(page, f"{b} .image-frame img") == 5

    # actual size: the 8x6 image at its natural size, not scaled to the card
    page.check("input[name=actual-size]")
    page.wait_for_function(f"() => document.querySelector('{img}').getBoundingClientRect().width === 8")
    page.uncheck("input[name=actual-size]")
    set_range(page, "input[name=brightness]", 150)
    set_range(page, "input[name=contrast]", 50)
    assert page.locator(img).evaluate("(i) => getComputedStyle(i).filter") == \
        "brightness(1.5) contrast(0.5)"
    assert "brightness=150" in page.url and "sync=1" in page.url

    page.click(f"{a} .image-frame")
    dialog = page.locator("dialog.lightbox")
    dialog.wait_for(state="visible")
    assert "step 5" in dialog.inner_text()
    page.screenshot(path=str(tmp_path / "images-enlarged.png"))
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    page.screenshot(path=str(tmp_path / "images.png"), full_page=True)


def test_audio_player_slider_and_download(watched, server, tmp_path):
    page = open_tab(watched, server, "audio")
    a = card(page, "a", "voice")
    wait_state(page, a)
    player = page.locator(f"{a} audio")
    assert "step=4" in player.get_attribute("src")
    meta = page.locator(f"{a} .audio-meta").inner_text()
    assert "0.1 s" in meta and "8000 Hz" in meta and "1 channel" in meta
    set_range(page, f"{a} .step-range", 2)
    page.wait_for_function(f"() => document.querySelector('{a} audio').dataset.step === '2'")
    link = page.locator(f"{a} a[download]")
    assert "step=2" in link.get_attribute("href") and "download=1" in link.get_attribute("href")
    with page.expect_download() as info:
        link.click()
    assert info.value.suggested_filename.endswith(".wav")
    page.wait_for_function(f"() => document.querySelector('{a} audio').readyState >= 1")
    assert player.evaluate("(p) => p.duration") == pytest.approx(0.1, abs=0.01)
    page.screenshot(path=str(tmp_path / "audio.png"), full_page=True)


def test_text_markdown_is_inert_and_plain_toggle(watched, server, tmp_path):
    page = open_tab(watched, server, "text")
    xss = card(page, "a", "xss")
    wait_state(page, xss)
    wait_state(page, card(page, "b", "xss"))
    body = page.locator(f"{xss} .text-md")
    assert body.locator("h1").inner_text() == "Title"
    assert body.locator("table td").all_text_contents() == ["1", "2"]
    assert body.locator("script").count() == 0
    assert page.evaluate("() => window.__xss") is None
    assert body.locator("img").evaluate_all("(imgs) => imgs.map((i) => i.outerHTML)") == ["<img>"]
    notes = card(page, "a", "notes")
    wait_state(page, notes)
    steps = page.locator(f"{notes} .text-entry").evaluate_all("(e) => e.map((x) => x.dataset.step)")
    assert steps == ["4", "3", "2", "1", "0"]  # newest first
    assert page.locator(f"{notes} .text-entry strong").nth(1).inner_text() == "4"
    page.screenshot(path=str(tmp_path / "text.png"), full_page=True)
    page.check("input[name=plain-text]")
    page.wait_for_selector(f"{xss} pre.text-plain")
    assert "<script>window.__xss = 1</script>" in page.locator(f"{xss} pre.text-plain").inner_text()
    assert page.evaluate("() => window.__xss") is None
    page.screenshot(path=str(tmp_path / "text-plain.png"), full_page=True)


def traces_of(page, selector: str):
    return page.locator(f"{selector} .js-plotly-plot").evaluate(
        "(p) => p.data.map((t) => ({type: t.type, n: (t.x || []).length, meta: t.meta || null}))"
    )


def test_histograms_offset_and_overlay(watched, server, tmp_path):
    page = open_tab(watched, server, "histograms")
    a = card(page, "a", "weights")
    wait_state(page, a)
    assert page.locator(a).get_attribute("data-mode") == "offset"
    traces = traces_of(page, a)
    assert [t["meta"]["step"] for t in traces] == [0, 1, 2, 3, 4]  # newest drawn last: in front
    y_range = page.locator(f"{a} .js-plotly-plot").evaluate("(p) => p._fullLayout.yaxis.range")
    assert y_range[0] > y_range[1]  # steps grow downwards: the newest ridge is at the front
    page.screenshot(path=str(tmp_path / "histograms-offset.png"), full_page=True)
    page.check("input[name=hist-mode][value=overlay]")
    page.wait_for_function(f"() => document.querySelector('{a}').dataset.mode === 'overlay'")
    assert len(traces_of(page, a)) == 5 and traces_of(page, a)[0]["n"] == 20
    page.screenshot(path=str(tmp_path / "histograms-overlay.png"), full_page=True)


def test_distributions_percentile_bands(watched, server, tmp_path):
    page = open_tab(watched, server, "distributions")
    a = card(page, "a", "weights")
    wait_state(page, a)
    traces = traces_of(page, a)
    assert len(traces) == 9 and all(t["n"] == 5 for t in traces)  # 4 bands x 2 edges + median
    median = page.locator(f"{a} .js-plotly-plot").evaluate("(p) => p.data[8].y")
    assert [round(m) for m in median] == [0, 1, 2, 3, 4]
    page.screenshot(path=str(tmp_path / "distributions.png"), full_page=True)


@pytest.mark.parametrize("tab,tag,x", [("pr_curves", "pr", "recall"), ("roc_curves", "roc", "fpr")])
def test_curves_slider_hover_fields_and_auc(watched, server, tmp_path, tab, tag, x):
    page = open_tab(watched, server, tab)
    a = card(page, "a", tag)
    wait_state(page, a)
    assert re.match(r"(PR|ROC) AUC \d\.\d{4} at step 4", page.locator(f"{a} .curve-auc").inner_text())
    set_range(page, f"{a} .step-range", 1)
    page.wait_for_function(f"() => document.querySelector('{a} .curve-auc').textContent.endsWith('step 1')")
    curve = page.locator(f"{a} .js-plotly-plot").evaluate(
        "(p) => { const t = p.data.find((d) => d.meta.role === 'curve');"
        " return {n: t.x.length, custom: t.customdata[0], hover: t.hovertemplate}; }"
    )
    assert curve["n"] == 11 and len(curve["custom"]) == 5  # threshold, TP, FP, TN, FN
    for word in ("threshold", "TP", "FP", "TN", "FN"):
        assert word in curve["hover"]
    roles = [t["meta"]["role"] for t in traces_of(page, a)]
    assert roles == (["chance", "curve"] if x == "fpr" else ["curve"])
    # hover a point with the mouse: plotly's tooltip shows the threshold and the counts
    x, y = page.locator(f"{a} .js-plotly-plot").evaluate(
        """(p) => { const t = p.data[p.data.length - 1]; const fl = p._fullLayout;
           const r = p.getBoundingClientRect();
           // the leftmost point: away from the mode bar in the top right corner
           const i = t.x.indexOf(Math.min(...t.x));
           return [r.left + fl._size.l + fl.xaxis.l2p(t.x[i]), r.top + fl._size.t + fl.yaxis.l2p(t.y[i])]; }"""
    )
    page.mouse.move(x - 20, y + 20)
    page.mouse.move(x, y, steps=4)
    page.wait_for_function(f"() => document.querySelector('{a} .hoverlayer').textContent.includes('threshold')")
    tip = page.locator(f"{a} .hoverlayer").text_content()
    assert "threshold" in tip and "TP" in tip
    page.screenshot(path=str(tmp_path / f"{tab}.png"), full_page=True)


def test_hparams_table_charts_and_metric_curves(watched, server, tmp_path):
    page = open_tab(watched, server, "hparams")
    page.wait_for_selector(".hp-table tbody tr")
    rows = lambda: page.locator(".hp-table tbody tr").evaluate_all(  # noqa: E731
        "(rs) => rs.map((r) => r.dataset.run)")
    assert rows() == ["a", "b"]
    header = page.locator('.hp-table th[data-key="h:lr"] button')
    header.click()
    assert rows() == ["b", "a"]  # lr ascending: 0.01 first
    page.locator('.hp-table th[data-key="h:lr"] button').click()
    assert rows() == ["a", "b"]
    assert page.locator('.hp-table th[data-key="h:lr"]').get_attribute("aria-sort") == "descending"
    page.fill("input[name=hparams-filter]", "adam")
    page.wait_for_function("() => document.querySelectorAll('.hp-table tbody tr').length === 1")
    page.fill("input[name=hparams-filter]", "")
    page.wait_for_function("() => document.querySelectorAll('.hp-table tbody tr').length === 2")
    with page.expect_download() as info:
        page.click(".hparams a[download]")
    assert info.value.suggested_filename == "hparams.csv"
    lines = open(info.value.path(), encoding="utf-8", newline="").read().strip().split("\r\n")
    assert len(lines) == 3 and lines[0].startswith("Run,") and "loss" in lines[0]

    page.wait_for_function("() => { const p = document.querySelector('.hp-splom'); return p.data && p._fullLayout; }")
    par = page.locator(".hp-parcoords").evaluate(
        "(p) => ({type: p.data[0].type, lens: p.data[0].dimensions.map((d) => d.values.length),"
        " labels: p.data[0].dimensions.map((d) => d.label)})")
    assert par["type"] == "parcoords" and set(par["lens"]) == {2}
    assert set(par["labels"]) == {"lr", "optimizer", "bn", "loss"}  # missing_metric: no values
    splom = page.locator(".hp-splom").evaluate(
        "(p) => ({type: p.data[0].type, lens: p.data[0].dimensions.map((d) => d.values.length)})")
    assert splom["type"] == "splom" and set(splom["lens"]) == {2}
    assert "WebGL is not supported" not in page.locator(".hparams").inner_text()

    page.click('.hp-run:has-text("b")')
    page.wait_for_function("() => { const p = document.querySelector('.hp-metrics .card[data-tag=\"loss\"] .js-plotly-plot');"
                           " return p && p.data && p.data[0].x.length === 5; }")
    loss = page.locator('.hp-metrics .card[data-tag="loss"] .js-plotly-plot').evaluate("(p) => p.data[0].y")
    assert loss == pytest.approx([2.0 / (s + 1) for s in range(5)])
    assert "No scalar data" in page.locator('.hp-metrics .card[data-tag="missing_metric"]').inner_text()
    assert "hpRun=b" in page.url
    page.screenshot(path=str(tmp_path / "hparams.png"), full_page=True)


def test_embeddings_pca_color_search_3d_sampling_and_501(watched, server, tmp_path):
    page = open_tab(watched, server, "embeddings")
    a = card(page, "a", "emb")
    wait_state(page, a)
    assert page.locator(a).get_attribute("data-points") == "60"
    names = page.locator(f"{a} .js-plotly-plot").evaluate("(p) => p.data.map((t) => [t.name, t.x.length])")
    assert sorted(names) == [["neg", 30], ["pos", 30]]  # colored by the first metadata column
    page.fill(f"{a} input[name=emb-search]", "^pos")
    page.wait_for_function(f"() => document.querySelector('{a}').dataset.matches === '30'")
    assert "30 matches" in page.locator(f"{a} .emb-status").inner_text()
    page.screenshot(path=str(tmp_path / "embeddings-search.png"), full_page=True)
    page.select_option(f"{a} select[name=emb-color]", "")
    page.check("input[name=emb-dims][value='3']")
    page.wait_for_function(
        f"() => {{ const p = document.querySelector('{a} .js-plotly-plot');"
        " return p.data && p.data[0].type === 'scatter3d' && p.data[0].z.length === 60; }")
    page.screenshot(path=str(tmp_path / "embeddings-3d.png"), full_page=True)

    # a big set is sampled by the server and the card says so
    page.route(re.compile(r".*/api/embeddings/projection\?.*"),
               lambda route: route.continue_(url=route.request.url + "&max_points=10"))
    page.check("input[name=emb-dims][value='2']")
    try:
        page.wait_for_function(f"() => document.querySelector('{a} .emb-status').textContent.includes('Sampled 10 of 60')")
    except Exception:
        print("STATUS", page.locator(f"{a} .emb-status").inner_text(), page.locator(f"{a} .emb-message").inner_text())
        raise
    page.unroute(re.compile(r".*/api/embeddings/projection\?.*"))

    # no t-SNE library on the server: a clear message, not a blank chart
    page.route(re.compile(r".*/api/embeddings/projection\?.*method=tsne.*"), lambda route: route.fulfill(
        status=501, content_type="application/json",
        body='{"error": "t-SNE needs scikit-learn: pip install \'visualdl[embeddings]\'"}'))
    page.select_option("select[name=emb-method]", "tsne")
    wait_state(page, a, "unavailable")
    message = page.locator(f"{a} .emb-message").inner_text()
    assert "t-SNE is not available" in message and "pip install" in message
    page.screenshot(path=str(tmp_path / "embeddings-501.png"), full_page=True)
    # the browser logs the 501 response itself; that is the only error allowed here
    watched.errors[:] = [e for e in watched.errors if "501" not in e]


def test_embeddings_retry_a_projection_the_server_is_still_computing(watched, server):
    """A 503 with Retry-After (t-SNE still running on the server) is asked again, not shown
    as a failure: the first answer is the server's busy reply, the retry reaches it."""
    page = watched.page
    asked = []

    def busy_once(route):
        if "run=a" in route.request.url:
            asked.append(route.request.url)
        if len(asked) == 1 and "run=a" in route.request.url:
            route.fulfill(status=503, content_type="application/json",
                          headers={"Retry-After": "1"},
                          body='{"error": "the projection is still being computed"}')
        else:
            route.continue_()

    page.route(re.compile(r".*/api/embeddings/projection\?.*"), busy_once)
    page = open_tab(watched, server, "embeddings")
    a = card(page, "a", "emb")
    page.wait_for_function(
        f"() => document.querySelector('{a} .emb-status')?.textContent.includes('trying again in 1 s')")
    assert page.locator(a).get_attribute("data-state") == "loading"  # not ready while waiting
    wait_state(page, a)
    assert page.locator(a).get_attribute("data-points") == "60"
    assert len(asked) == 2
    watched.errors[:] = [e for e in watched.errors if "503" not in e]


def test_figures_plotly_with_slider(watched, server):
    page = open_tab(watched, server, "figures")
    fig = card(page, "a", "fig")
    wait_state(page, fig)
    ys = lambda: page.locator(f"{fig} .js-plotly-plot").evaluate("(p) => p.data[0].y")  # noqa: E731
    page.wait_for_function(f"() => document.querySelector('{fig}').dataset.shown === '4'")
    assert ys() == [4, 1]
    set_range(page, f"{fig} .step-range", 2)
    page.wait_for_function(f"() => document.querySelector('{fig}').dataset.shown === '2'")
    assert ys() == [2, 1]


def test_figures_png_of_matplotlib_with_slider(watched, server, tmp_path):
    pytest.importorskip("matplotlib")  # write_kinds logged none without it
    page = open_tab(watched, server, "figures")
    mpl = card(page, "a", "mpl")
    wait_state(page, mpl)
    page.wait_for_function(f"() => document.querySelector('{mpl}').dataset.shown === '2'")
    assert page.locator(mpl).get_attribute("data-format") == "png"
    assert red_pixel(page, f"{mpl} .image-frame img") == mpl_red(2)
    set_range(page, f"{mpl} .step-range", 1)
    page.wait_for_function(f"() => document.querySelector('{mpl}').dataset.shown === '1'")
    assert red_pixel(page, f"{mpl} .image-frame img") == mpl_red(1)
    page.screenshot(path=str(tmp_path / "figures.png"), full_page=True)


def test_dark_theme_and_narrow_window(browser, server, tmp_path):
    context = browser.new_context(viewport={"width": 600, "height": 900}, color_scheme="dark")
    page = context.new_page()
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        for tab in ("images", "hparams", "histograms"):
            page.goto(f"{server.url}?tab={tab}")
            page.wait_for_selector(".card[data-state=ready], .hp-table tbody tr")
            # what is on screen has drawn: no card still loading (those below wait, lazily)
            page.wait_for_function("() => !document.querySelector('.card[data-state=loading]')")
            page.screenshot(path=str(tmp_path / f"{tab}-dark-narrow.png"), full_page=True)
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 600 + 1  # nothing forces a horizontal scroll
        assert errors == []
    finally:
        context.close()


def test_tab_appears_when_its_data_arrives(watched, tmp_path):
    root = tmp_path / "live"
    with LogWriter(logdir=str(root / "r")) as w:
        w.add_scalar("loss", 1.0, 0)
    handle = start_server(root, reload_interval=0.3)
    try:
        assert handle.wait_loaded(10)
        page = watched.page
        page.goto(handle.url)
        page.wait_for_selector("#tab-scalars")
        assert page.locator("#tab-images").count() == 0
        with LogWriter(logdir=str(root / "r")) as w:
            w.add_image("pic", np.zeros((4, 4, 3), np.uint8), 0)
        page.wait_for_selector("#tab-images", timeout=15_000)
        page.click("#tab-images")
        page.wait_for_selector('.card[data-tag="pic"] .image-frame img[data-step="0"]')
        with LogWriter(logdir=str(root / "r")) as w:
            w.add_image("pic", np.full((4, 4, 3), 200, np.uint8), 1)
        # a card at its newest step follows new steps as they arrive
        page.wait_for_selector('.card[data-tag="pic"] .image-frame img[data-step="1"]', timeout=15_000)
        assert red_pixel(page, '.card[data-tag="pic"] .image-frame img') == 200
        watched.finish()
    finally:
        handle.stop()
