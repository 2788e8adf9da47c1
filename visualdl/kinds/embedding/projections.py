"""Projecting embeddings to 2-D or 3-D: PCA with numpy; t-SNE (openTSNE, else scikit-learn)
and UMAP (umap-learn) from well-kept libraries when they are installed.

t-SNE and UMAP take seconds, so they come as *frames* (:func:`frames`): the view draws PCA
at once and each refinement as it arrives. Their coordinates are centred and scaled to unit
standard deviation, frame after frame, so that one camera fits them all (t-SNE's and UMAP's
units mean nothing anyway; PCA's own answer keeps its units).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from visualdl.kinds.embedding.tsne import available as tsne_available
from visualdl.kinds.embedding.tsne import installed, tsne_frames

__all__ = ["METHODS", "MissingLibrary", "frames", "normalised", "pca", "require",
           "sample_rows"]

METHODS = ("pca", "tsne", "umap")
_HINTS = {
    "tsne": "t-SNE needs openTSNE or scikit-learn: pip install 'visualdl[embeddings]'",
    "umap": "UMAP needs umap-learn: pip install 'visualdl[embeddings]'",
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


def normalised(coords: np.ndarray) -> np.ndarray:
    """Centred, and scaled to unit standard deviation (a constant layout stays as it is)."""
    centred = coords - coords.mean(axis=0)
    spread = float(centred.std())
    return centred / spread if spread > 0 else centred


def require(method: str) -> None:
    """Raise MissingLibrary when ``method``'s library is not installed. Looked up, not
    imported (seconds): the request answers PCA first, the refinement imports."""
    if method == "tsne" and not tsne_available():
        raise MissingLibrary(_HINTS["tsne"])
    if method == "umap" and not installed("umap"):
        raise MissingLibrary(_HINTS["umap"])


def frames(matrix: np.ndarray, method: str, dims: int) -> Iterator[tuple[np.ndarray, float]]:
    """t-SNE's or UMAP's ``(normalised coords, progress)``, the last with progress 1.0.

    umap-learn does not expose its epochs, so UMAP has a single frame, the final one. A
    library that is there but fails to import is missing too (:func:`require` only looked
    it up)."""
    require(method)
    try:
        yield from _frames(matrix, method, dims)
    except ImportError as err:
        raise MissingLibrary(f"{_HINTS[method]} ({err})") from err


def _frames(matrix: np.ndarray, method: str, dims: int) -> Iterator[tuple[np.ndarray, float]]:
    n = matrix.shape[0]
    data = matrix.astype(np.float32)
    if n < 4:  # too few points for a neighbourhood: PCA says all there is
        yield normalised(pca(matrix, dims)[0]), 1.0
        return
    if method == "tsne":
        for coords, progress in tsne_frames(data, dims, pca(matrix, dims)[0]):
            yield normalised(coords), progress
        return
    import umap

    model = umap.UMAP(n_components=dims, n_neighbors=min(15, n - 1), random_state=0, n_jobs=1)
    yield normalised(np.asarray(model.fit_transform(data), dtype=np.float64)), 1.0

