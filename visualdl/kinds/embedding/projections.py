"""Projecting embeddings to 2-D or 3-D: PCA with numpy; t-SNE and UMAP from well-kept
libraries (scikit-learn, umap-learn) when they are installed."""

from __future__ import annotations

import numpy as np

__all__ = ["METHODS", "MissingLibrary", "project", "sample_rows"]

METHODS = ("pca", "tsne", "umap")
_HINTS = {
    "tsne": ("sklearn.manifold", "t-SNE needs scikit-learn: pip install 'visualdl[embeddings]'"),
    "umap": ("umap", "UMAP needs umap-learn: pip install 'visualdl[embeddings]'"),
}


class MissingLibrary(RuntimeError):
    """The method's library is not installed; the message says what to install."""


def sample_rows(n: int, limit: int, seed: int = 0) -> np.ndarray:
    """Indices of at most ``limit`` rows, the same for the same inputs (sorted)."""
    if n <= limit:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False))


def pca(matrix: np.ndarray, dims: int) -> tuple[np.ndarray, list[float]]:
    """Coordinates on the top principal components and each one's share of variance."""
    centered = matrix.astype(np.float64) - matrix.mean(axis=0)
    _, s, vt = np.linalg.svd(centered, full_matrices=False)
    k = min(dims, vt.shape[0])
    coords = centered @ vt[:k].T
    if k < dims:  # fewer components than asked: pad with zeros
        coords = np.hstack([coords, np.zeros((coords.shape[0], dims - k))])
    var = s**2
    share = (var[:k] / var.sum()).tolist() if var.sum() > 0 else [0.0] * k
    return coords, share


def project(matrix: np.ndarray, method: str, dims: int) -> tuple[np.ndarray, dict]:
    """``(coords, info)`` for ``method`` in ``METHODS``; raises MissingLibrary."""
    if method == "pca":
        coords, share = pca(matrix, dims)
        return coords, {"explained_variance": share}
    module, hint = _HINTS[method]
    try:
        lib = __import__(module, fromlist=["_"])
    except ImportError:
        raise MissingLibrary(hint) from None
    n = matrix.shape[0]
    data = matrix.astype(np.float32)
    if n < 4:
        return pca(matrix, dims)[0], {}
    if method == "tsne":
        model = lib.TSNE(n_components=dims, perplexity=float(min(30, (n - 1) / 3)),
                         init="pca", random_state=0)
        return model.fit_transform(data).astype(np.float64), {}
    model = lib.UMAP(n_components=dims, n_neighbors=min(15, n - 1), random_state=0)
    return np.asarray(model.fit_transform(data), dtype=np.float64), {}
