"""t-SNE in frames: openTSNE (FFT-accelerated for large sets in 2-D) a few dozen iterations
at a time, so the view can draw the layout while it forms; scikit-learn's t-SNE, in one
piece, when openTSNE is not installed."""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Iterator

import numpy as np

__all__ = ["ITERATIONS", "available", "installed", "tsne_frames"]

_EARLY, _LATE = 250, 500  # openTSNE's (and scikit-learn's) default schedule
ITERATIONS = _EARLY + _LATE
_CHUNK = 50  # iterations between two frames


def available() -> bool:
    """Whether either t-SNE library is installed (not imported: see :func:`installed`)."""
    return installed("openTSNE") or installed("sklearn.manifold")


def installed(name: str) -> bool:
    """Whether module ``name`` is there to import, without importing it: the request that
    asks for a projection checks this before it answers PCA at once, and importing openTSNE
    (about 2 s) or umap (about 4 s) there held that first frame back; the refinement, in
    the background, imports it. Only the top-level package is looked up (finding a
    submodule imports its parent); one set to None in ``sys.modules`` is missing."""
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name.partition(".")[0]) is not None
    except (ImportError, ValueError):  # a broken package, or one without a spec
        return False


def tsne_frames(data: np.ndarray, dims: int,
                pca: np.ndarray) -> Iterator[tuple[np.ndarray, float]]:
    """``(coords, progress)`` every few dozen iterations, the last with progress 1.0;
    ``pca``: the data's top ``dims`` principal components (zero-padded), the start."""
    perplexity = float(min(30, (data.shape[0] - 1) / 3))
    init = _initial(pca)
    try:
        import openTSNE  # noqa: F401
    except ImportError:
        yield _sklearn(data, dims, perplexity, init), 1.0
        return
    yield from _opentsne(data, dims, perplexity, init)


def _initial(pca: np.ndarray) -> np.ndarray:
    """PCA scaled to a standard deviation of 1e-4 along its first axis, with a little jitter
    (as openTSNE's own PCA start, which fails on constant data or on fewer columns than
    dimensions; this one does not)."""
    spread = float(pca[:, 0].std())
    start = pca * (1e-4 / spread) if spread > 0 else np.zeros_like(pca)
    return start + np.random.default_rng(0).normal(0, 1e-6, pca.shape)


def _threads() -> int:
    """All cores but one: the server's request threads keep answering meanwhile."""
    return max(1, min(8, (os.cpu_count() or 2) - 1))


def _opentsne(data: np.ndarray, dims: int, perplexity: float,
              init: np.ndarray) -> Iterator[tuple[np.ndarray, float]]:
    """The usual two phases (early exaggeration, then free), cut into chunks. Initialised
    from PCA, as openTSNE recommends, so the first frames already resemble the last."""
    from openTSNE import TSNEEmbedding, affinity

    jobs = _threads()
    affinities = affinity.PerplexityBasedNN(data, perplexity=perplexity, n_jobs=jobs,
                                            random_state=0)
    # "auto": openTSNE's choice, Barnes-Hut below 10,000 points (faster there) and FFT
    # interpolation from there on, which works in 1-D and 2-D only: 3-D takes Barnes-Hut
    embedding = TSNEEmbedding(init, affinities, n_jobs=jobs, random_state=0,
                              negative_gradient_method="auto" if dims <= 2 else "bh")
    done = 0
    for phase, params in ((_EARLY, {"exaggeration": 12, "momentum": 0.5}),
                          (_LATE, {"momentum": 0.8})):
        for _ in range(phase // _CHUNK):
            embedding.optimize(n_iter=_CHUNK, inplace=True, **params)
            done += _CHUNK
            yield np.array(embedding, dtype=np.float64), done / ITERATIONS


def _sklearn(data: np.ndarray, dims: int, perplexity: float, init: np.ndarray) -> np.ndarray:
    from sklearn.manifold import TSNE

    model = TSNE(n_components=dims, perplexity=perplexity, init=init, random_state=0)
    return model.fit_transform(data).astype(np.float64)
