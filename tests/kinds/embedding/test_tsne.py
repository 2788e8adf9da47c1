"""t-SNE by itself: without openTSNE it still works through scikit-learn (one frame, the final
one); with neither library, the error says what to install; degenerate matrices give finite
frames."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.kinds.embedding.conftest import CLUSTERS, PER_CLUSTER, clusters
from visualdl.kinds.embedding.projections import MissingLibrary, frames, require


def test_without_opentsne_scikit_learn_makes_one_final_frame(monkeypatch):
    pytest.importorskip("sklearn")
    monkeypatch.setitem(sys.modules, "openTSNE", None)  # "import openTSNE" raises ImportError
    points, labels = clusters()
    out = list(frames(points, "tsne", 2))
    assert [p for _, p in out] == [1.0]
    coords = out[0][0]
    assert coords.shape == (CLUSTERS * PER_CLUSTER, 2) and np.isfinite(coords).all()
    dist = ((coords[:, None, :] - coords[None, :, :]) ** 2).sum(axis=-1)
    np.fill_diagonal(dist, np.inf)
    assert (np.array(labels)[dist.argmin(axis=1)] == np.array(labels)).mean() >= 0.99


def test_without_either_library_the_error_names_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "openTSNE", None)
    monkeypatch.setitem(sys.modules, "sklearn.manifold", None)
    with pytest.raises(MissingLibrary, match=r"openTSNE or scikit-learn.*visualdl\[embeddings\]"):
        require("tsne")


@pytest.mark.parametrize("matrix", [np.zeros((50, 5)), np.arange(40.0).reshape(40, 1)],
                         ids=["constant", "one-column"])
@pytest.mark.parametrize("dims", [2, 3])
def test_degenerate_matrices_give_finite_frames(matrix, dims):
    """openTSNE's own PCA start divides by zero on a constant matrix and refuses fewer
    columns than dimensions; the start made here from our PCA does neither."""
    pytest.importorskip("openTSNE")
    out = list(frames(matrix.astype(np.float32), "tsne", dims))
    assert out[-1][1] == 1.0
    assert all(c.shape == (matrix.shape[0], dims) and np.isfinite(c).all() for c, _ in out)
