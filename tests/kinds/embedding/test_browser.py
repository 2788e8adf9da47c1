"""The embeddings view in headless Chromium over a real server computing a real t-SNE: the
first frame (PCA) is drawn at once with a progress bar, each refinement is drawn without
losing the user's zoom, and the bar goes when the projection is final."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.pages import PageWatch
from tests.helpers.server import serving
from tests.kinds.embedding.conftest import clusters
from visualdl import LogWriter

pytestmark = pytest.mark.browser

CARD = '.card[data-run="run"][data-tag="blobs"]'
# What each card showed, at every change of its state or progress bar.
_RECORD = """
window.__frames = [];
new MutationObserver(() => {
  const card = document.querySelector('%s');
  const bar = card && card.querySelector('[role=progressbar]');
  const plot = card && card.querySelector('.js-plotly-plot');
  if (!bar) return;
  const last = window.__frames[window.__frames.length - 1];
  const now = { state: card.dataset.state, hidden: bar.hidden,
    value: bar.getAttribute('aria-valuenow'), points: card.dataset.points || null,
    first: plot && plot.data ? plot.data[0].x[0] : null };
  if (!last || JSON.stringify(last) !== JSON.stringify(now)) window.__frames.push(now);
}).observe(document, { subtree: true, attributes: true, childList: true });
""" % CARD


# Enough points that the refinement lasts several of the view's polls on any machine.
POINTS = 3000


@pytest.fixture(scope="module")
def big_logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("embeddings-view")
    points, labels = clusters(per_cluster=POINTS // 10)
    with LogWriter(logdir=str(root / "run")) as w:
        w.add_embeddings("blobs", points, metadata=labels, step=0)
        w.add_embeddings("blobs", points[::-1].copy(), metadata=labels[::-1], step=1)
    return root


@pytest.fixture()
def watched(browser):
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    watch = PageWatch(page)
    yield watch
    assert watch.errors == []
    page.close()


def test_tsne_draws_pca_at_once_then_refines_with_progress_keeping_the_zoom(
        watched, big_logdir):
    pytest.importorskip("openTSNE")
    page = watched.page
    page.add_init_script(_RECORD)
    with serving(big_logdir) as server:
        page.goto(f"{server.url}?tab=embeddings&embMethod=tsne")
        page.wait_for_selector("#tab-embeddings[aria-selected=true]")
        if page.locator("select[name=emb-method]").input_value() != "tsne":
            page.select_option("select[name=emb-method]", "tsne")
        # zoom in as soon as the first frame is drawn, while the refinement goes on
        page.wait_for_function(
            """(sel) => { const card = document.querySelector(sel);
              const plot = card && card.querySelector('.js-plotly-plot');
              if (!card || card.dataset.state !== 'refining' || !plot.data) return false;
              Plotly.relayout(plot, { 'xaxis.range': [-0.5, 0.5], 'yaxis.range': [-0.5, 0.5] })
                .then(() => { window.__zoom = plot.layout.xaxis.range.slice(); });
              return true; }""", arg=CARD)
        zoom = page.wait_for_function("() => window.__zoom").json_value()
        assert -1 < zoom[0] < zoom[1] < 1  # the axes' aspect lock widens x a little
        page.wait_for_function(f"() => document.querySelector('{CARD}').dataset.state === 'ready'",
                               timeout=240_000)
        frames = page.evaluate("() => window.__frames")
        refining = [f for f in frames if f["state"] == "refining"]
        assert refining and refining[0]["hidden"] is False and refining[0]["points"] == str(POINTS)
        values = [int(f["value"]) for f in refining]
        assert values == sorted(values) and values[0] == 0 and max(values) > 0
        assert len({f["first"] for f in refining}) >= 2  # more than one frame drawn
        assert frames[-1]["state"] == "ready" and frames[-1]["hidden"] is True
        bar = page.locator(f"{CARD} [role=progressbar]")
        assert bar.is_hidden()
        assert "refining" not in page.locator(f"{CARD} .emb-status").inner_text()
        # the final frame drawn is the server's final t-SNE, inside the user's zoom
        body = server_json(server.url)
        assert body["final"] is True and body["frame"] == "tsne"
        drawn = page.evaluate(f"""() => {{
            const p = document.querySelector('{CARD} .js-plotly-plot');
            return {{ x: p.data.flatMap((t) => t.x), range: p.layout.xaxis.range }}; }}""")
        assert sorted(drawn["x"]) == pytest.approx(sorted(np.array(body["coords"][0], float)))
        assert drawn["range"] == zoom
        watched.finish()


def server_json(url: str) -> dict:
    import requests

    return requests.get(url + "/api/embeddings/projection", timeout=30, params={
        "run": "run", "tag": "blobs", "step": 1, "method": "tsne", "dims": 2}).json()
