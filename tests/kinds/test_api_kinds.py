"""The API of every kind but scalars, against real log files: exact values, every step
reachable, 404s for unknown run/tag/step."""

import io

import numpy as np
import pytest
from PIL import Image

from tests.helpers.logs import (
    CURVE_SAMPLES,
    IMAGE_STEPS,
    MPL_SIZE,
    MPL_STEPS,
    image_at,
    mpl_red,
    pr_labels,
)
from visualdl.kinds import registry
from visualdl.kinds.audio.write import decode_wav

BUILT_IN = [k.name for k in registry.all_kinds() if not k.plugin_entry]


def test_tags_list_every_kind(api):
    kinds = api.json("/api/tags")["kinds"]
    assert list(kinds) == BUILT_IN  # write_kinds logs every built-in kind, listed in order
    for kind in BUILT_IN:
        assert set(kinds[kind]) == {"a", "b"}, kind
    for kind in BUILT_IN:
        assert api.json("/api/tags", kind=kind)["runs"] == kinds[kind]
    assert api.get("/api/tags", kind="nope").status_code == 400


def test_image_index_has_every_step_and_each_png_is_exact(api):
    index = api.json("/api/images", run="a", tag="samples/input")
    assert index["total"] == IMAGE_STEPS and index["steps"] == list(range(IMAGE_STEPS))
    assert index["width"] == [8] * IMAGE_STEPS and index["height"] == [6] * IMAGE_STEPS
    for step in (0, 17, IMAGE_STEPS - 1):
        response = api.get("/api/images/data", run="a", tag="samples/input", step=step)
        assert response.status_code == 200 and response.headers["Content-Type"] == "image/png"
        pixels = np.asarray(Image.open(io.BytesIO(response.content)))
        assert np.array_equal(pixels, image_at(step))


def test_image_bytes_are_cacheable(api):
    params = {"run": "a", "tag": "samples/input", "step": 3}
    first = api.get("/api/images/data", **params)
    assert "max-age" in first.headers["Cache-Control"] and first.headers["ETag"]
    again = api.get("/api/images/data", params, headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize("path, params", [
    ("/api/hparams", {}),
    ("/api/embeddings/projection", {"run": "a", "tag": "emb", "step": 1}),
])
def test_json_answers_revalidate(api, path, params):
    first = api.get(path, **params)
    assert first.status_code == 200, first.text
    again = api.get(path, params, headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize("path,params,status", [
    ("/api/images", {"run": "nope", "tag": "samples/input"}, 404),
    ("/api/images", {"run": "a", "tag": "nope"}, 404),
    ("/api/images/data", {"run": "a", "tag": "samples/input", "step": 999}, 404),
    ("/api/images/data", {"run": "a", "tag": "samples/input", "step": "x"}, 400),
    ("/api/images/data", {"run": "a", "tag": "samples/input"}, 400),
    ("/api/audio/data", {"run": "a", "tag": "voice", "step": 77}, 404),
    ("/api/text", {"run": "a", "tag": "../../etc/passwd"}, 404),
    ("/api/histograms", {"run": "../../etc", "tag": "weights"}, 404),
    ("/api/distributions", {"run": "a"}, 400),
    ("/api/pr_curves", {"run": "a", "tag": "roc"}, 404),
    ("/api/embeddings/projection", {"run": "a", "tag": "emb", "step": 1, "method": "x"}, 400),
    ("/api/embeddings/projection", {"run": "a", "tag": "emb", "step": 1, "dims": 4}, 400),
    ("/api/figures/data", {"run": "b", "tag": "fig", "step": 9}, 404),
])
def test_errors_are_json(api, path, params, status):
    response = api.get(path, **params)
    assert response.status_code == status
    assert "error" in response.json()


def test_audio_index_and_wav(api):
    index = api.json("/api/audio", run="b", tag="voice")
    assert index["steps"] == [0, 1, 2, 3, 4]
    assert index["sample_rate"] == [8000] * 5 and index["durations"] == [0.1] * 5
    response = api.get("/api/audio/data", run="b", tag="voice", step=3, download=1)
    assert response.headers["Content-Type"] == "audio/wav"
    assert "attachment" in response.headers["Content-Disposition"]
    samples, rate = decode_wav(response.content)
    assert rate == 8000 and samples.shape == (800, 1)
    assert np.all(samples == round(0.3 * 32767))


def test_text_is_sanitized_markdown(api):
    body = api.json("/api/text", run="a", tag="notes")
    assert [e["step"] for e in body["entries"]] == [0, 1, 2, 3, 4]
    assert body["entries"][2]["html"] == "<p>step <strong>2</strong> of run a</p>"
    xss = api.json("/api/text", run="a", tag="xss")["entries"][0]
    assert "<script" not in xss["html"] and "onerror" not in xss["html"]
    assert "<table>" in xss["html"] and "<h1>Title</h1>" in xss["html"]
    assert "<script>" in xss["text"]  # the source is kept as logged
    assert '<img src="x">' not in xss["html"] and "<img>" in xss["html"]  # no request to /x


def test_markdown_keeps_absolute_links_and_drops_relative_ones():
    from visualdl.kinds.text.api import render_markdown

    html = render_markdown("[a](https://example.org/a) [b](/api/reload) ![c](data:x) [d](javascript:alert(1))")
    assert 'href="https://example.org/a"' in html and 'rel="noopener noreferrer"' in html
    assert "/api/reload" not in html and "javascript:" not in html and "data:x" not in html


def test_histograms_and_distributions(api):
    body = api.json("/api/histograms", run="a", tag="weights")
    assert body["total"] == 5
    first = body["entries"][0]
    assert len(first["counts"]) == 20 and len(first["edges"]) == 21
    assert sum(first["counts"]) == 1000 and abs(first["mean"]) < 0.2
    assert 0.8 < first["std"] < 1.2
    dist = api.json("/api/distributions", run="a", tag="weights")
    assert dist["steps"] == [0, 1, 2, 3, 4] and len(dist["values"]) == 9
    medians = dist["values"][4]
    assert [round(m) for m in medians] == [0, 1, 2, 3, 4]  # the data was centred on the step
    for k in range(8):  # bands are ordered
        assert all(lo <= hi for lo, hi in zip(dist["values"][k], dist["values"][k + 1]))
    assert dist["values"][0] == [e["min"] for e in body["entries"]]


@pytest.mark.parametrize("kind, path", [("pr", "/api/pr_curves"), ("roc", "/api/roc_curves")])
def test_curve_counts_match_the_labels_written(api, kind, path):
    body = api.json(path, run="a", tag=kind)
    assert [e["step"] for e in body["entries"]] == [0, 1, 2, 3, 4]
    for entry in body["entries"]:
        positives = int(pr_labels("a", entry["step"]).sum())
        assert 0 < positives < CURVE_SAMPLES
        assert len(entry["tp"]) == len(entry["thresholds"]) == 11
        for tp, fn, fp, tn in zip(entry["tp"], entry["fn"], entry["fp"], entry["tn"]):
            assert tp + fn == positives and fp + tn == CURVE_SAMPLES - positives
        assert entry["tp"][0] == positives and entry["fp"][0] == CURVE_SAMPLES - positives


def test_pr_and_roc_curves(api):
    pr = api.json("/api/pr_curves", run="a", tag="pr")
    assert pr["total"] == 5
    entry = pr["entries"][0]
    assert len(entry["precision"]) == 11 and len(entry["thresholds"]) == 11
    assert entry["recall"][0] == 1.0  # threshold 0: everything is positive
    assert entry["auc"] == 1.0  # well-separated scores
    roc = api.json("/api/roc_curves", run="a", tag="roc")
    assert roc["entries"][0]["auc"] == 1.0  # the scores separate the classes
    assert roc["entries"][0]["tpr"][0] == 1.0 and roc["entries"][0]["fpr"][0] == 1.0


def test_hparams_table(api):
    table = api.json("/api/hparams")
    assert table["hparam_names"] == ["bn", "lr", "optimizer"] or \
        set(table["hparam_names"]) == {"bn", "lr", "optimizer"}
    assert table["metric_names"] == ["loss", "missing_metric"]
    rows = {row["run"]: row for row in table["runs"]}
    assert rows["a"]["hparams"] == {"lr": 0.1, "optimizer": "sgd", "bn": True}
    assert rows["b"]["metrics"] == {"loss": 2.0 / 5, "missing_metric": None}


def test_embedding_projection_pca_separates_clusters(api):
    index = api.json("/api/embeddings", run="a", tag="emb")
    assert index["steps"] == [1] and index["shape"] == [[60, 5]]
    body = api.json("/api/embeddings/projection", run="a", tag="emb", step=1, method="pca",
                    dims=3)
    assert body["total"] == 60 and body["shown"] == 60 and not body["sampled"]
    assert len(body["coords"]) == 3 and len(body["coords"][0]) == 60
    x = np.array(body["coords"][0])
    assert abs(x[:30].mean() - x[30:].mean()) > 5  # the first component splits the clusters
    assert body["metadata_header"] == ["label", "index"] and body["metadata"][0] == ["pos", "0"]
    assert body["explained_variance"][0] > 0.5
    sampled = api.json("/api/embeddings/projection", run="a", tag="emb", step=1, max_points=10)
    assert sampled["sampled"] and sampled["shown"] == 10 and len(sampled["metadata"]) == 10


def test_embedding_tsne_when_installed(api):
    pytest.importorskip("sklearn")
    body = api.json("/api/embeddings/projection", run="a", tag="emb", step=1, method="tsne")
    x, y = np.array(body["coords"][0]), np.array(body["coords"][1])
    centres = np.array([[x[:30].mean(), y[:30].mean()], [x[30:].mean(), y[30:].mean()]])
    assert np.linalg.norm(centres[0] - centres[1]) > 3 * max(x[:30].std(), y[:30].std()) / 2


def test_embedding_umap_when_installed(api):
    pytest.importorskip("umap")
    body = api.json("/api/embeddings/projection", run="b", tag="emb", step=1, method="umap")
    assert body["method"] == "umap" and body["shown"] == 60 and len(body["coords"]) == 2
    x, y = np.array(body["coords"][0]), np.array(body["coords"][1])
    gap = np.hypot(x[:30].mean() - x[30:].mean(), y[:30].mean() - y[30:].mean())
    assert gap > 3 * max(x[:30].std(), y[:30].std())  # the two clusters stay apart


def test_figures(api):
    index = api.json("/api/figures", run="a", tag="fig")
    assert index["steps"] == [0, 1, 2, 3, 4] and index["format"] == ["plotly"] * 5
    fig = api.json("/api/figures/data", run="a", tag="fig", step=2)
    assert fig["data"][0]["y"] == [2, 1]


def test_matplotlib_figures_are_pngs_of_the_figure_size(api):
    pytest.importorskip("matplotlib")  # write_kinds logged none without it
    index = api.json("/api/figures", run="a", tag="mpl")
    assert index["steps"] == list(range(MPL_STEPS)) and index["format"] == ["png"] * MPL_STEPS
    for step in range(MPL_STEPS):
        response = api.get("/api/figures/data", run="a", tag="mpl", step=step)
        assert response.status_code == 200 and response.headers["Content-Type"] == "image/png"
        image = Image.open(io.BytesIO(response.content))
        assert image.format == "PNG" and image.size == MPL_SIZE
        pixels = np.asarray(image.convert("RGB"))
        assert (pixels == (mpl_red(step), 0, 200)).all()  # the figure's background, everywhere
