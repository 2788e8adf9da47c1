"""t-SNE and UMAP through the real route: a first frame (PCA) at once with ``progress`` < 1,
then refinements until ``final``, whose coordinates separate the clusters; a finished
projection is cached, so asking again is instant and identical (issue 23, item 10).

Before: the request waited for the whole t-SNE (up to 60 s, then a 503), with no
``progress``, ``final`` or ``frame`` in the answer."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.http import wait_for
from tests.kinds.embedding.conftest import CLUSTERS, PER_CLUSTER


def _poll_to_final(api, **params) -> list[dict]:
    """Every answer from the first to the final one (each new frame once)."""
    answers = [api.json("/api/embeddings/projection", run="run", tag="blobs", **params)]

    def finished():
        body = api.json("/api/embeddings/projection", run="run", tag="blobs", **params)
        if body["progress"] != answers[-1]["progress"] or body["final"]:
            answers.append(body)
        return body["final"]

    if not answers[0]["final"]:
        wait_for(finished, timeout=240, interval=0.2)
    return answers


def _coords(body: dict) -> np.ndarray:
    coords = np.array(body["coords"], dtype=float).T
    assert coords.shape == (CLUSTERS * PER_CLUSTER, body["dims"])
    assert np.isfinite(coords).all()
    return coords


def _neighbour_accuracy(body: dict) -> float:
    """The share of points whose nearest other point carries the same cluster label."""
    coords = _coords(body)
    labels = np.array([row[0] for row in body["metadata"]])
    dist = ((coords[:, None, :] - coords[None, :, :]) ** 2).sum(axis=-1)
    np.fill_diagonal(dist, np.inf)
    return float((labels[dist.argmin(axis=1)] == labels).mean())


@pytest.mark.parametrize("dims", [2, 3])
def test_tsne_answers_a_first_frame_at_once_then_refines_to_final(emb_api, dims):
    pytest.importorskip("openTSNE")
    answers = _poll_to_final(emb_api, step=0, method="tsne", dims=dims)
    first, final = answers[0], answers[-1]
    assert first["progress"] == 0.0 and first["final"] is False and first["frame"] == "pca"
    assert first["method"] == "tsne" and len(first["coords"]) == dims
    _coords(first)
    progress = [a["progress"] for a in answers]
    assert progress == sorted(progress) and len(answers) >= 3  # refined in several frames
    assert any(0 < p < 1 for p in progress)
    assert final["final"] is True and final["progress"] == 1.0 and final["frame"] == "tsne"
    assert final["shown"] == CLUSTERS * PER_CLUSTER and not final["sampled"]
    assert _neighbour_accuracy(final) >= 0.99
    if dims == 2:  # the clusters PCA's first frame mixes up, t-SNE keeps apart
        assert _neighbour_accuracy(first) < 0.9
    coords = _coords(final)  # unit scale, centred: one camera fits every frame
    assert np.allclose(coords.mean(axis=0), 0, atol=1e-6) and coords.std() == pytest.approx(1)


def test_a_finished_umap_is_cached_identical_and_final_at_once(emb_api):
    pytest.importorskip("umap")
    answers = _poll_to_final(emb_api, step=0, method="umap", dims=2)
    first, final = answers[0], answers[-1]
    assert first["final"] is False and first["progress"] == 0.0 and first["frame"] == "pca"
    assert final["final"] is True and final["frame"] == "umap"
    assert _neighbour_accuracy(final) >= 0.99 and _neighbour_accuracy(first) < 0.9
    again = emb_api.get("/api/embeddings/projection", run="run", tag="blobs", step=0,
                        method="umap", dims=2)
    assert again.status_code == 200 and again.json() == final
    etag = again.headers["ETag"]
    unchanged = emb_api.get("/api/embeddings/projection", run="run", tag="blobs", step=0,
                            method="umap", dims=2, headers={"If-None-Match": etag})
    assert unchanged.status_code == 304
    # another step is another projection: computed afresh
    other = emb_api.json("/api/embeddings/projection", run="run", tag="blobs", step=1,
                         method="umap", dims=2)
    assert other["final"] is False and other["frame"] == "pca"


def test_pca_is_final_in_the_first_answer(emb_api):
    body = emb_api.json("/api/embeddings/projection", run="run", tag="blobs", step=0)
    assert body["final"] is True and body["progress"] == 1.0 and body["frame"] == "pca"
    assert len(body["explained_variance"]) == 2
