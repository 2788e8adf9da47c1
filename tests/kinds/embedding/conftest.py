"""A logdir of embeddings for the projection tests: ten clusters apart in 30-D, labelled in
the metadata, that a 2-D PCA mixes up and t-SNE or UMAP keep apart, so a projection's
quality can be read off its coordinates."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.http import client_of
from visualdl import LogWriter

CLUSTERS, PER_CLUSTER, WIDTH = 10, 30, 30


def clusters(seed: int = 0, per_cluster: int = PER_CLUSTER) -> tuple[np.ndarray, list[str]]:
    """``CLUSTERS`` blobs of ``per_cluster`` points, and their labels."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(CLUSTERS, WIDTH)) * 2.5
    labels = np.repeat(np.arange(CLUSTERS), per_cluster)
    points = centres[labels] + rng.normal(size=(labels.size, WIDTH))
    return points.astype(np.float32), [f"c{k}" for k in labels]


@pytest.fixture(scope="package")
def emb_logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("embeddings")
    points, labels = clusters()
    with LogWriter(logdir=str(root / "run")) as w:
        w.add_embeddings("blobs", points, metadata=labels, step=0)
        w.add_embeddings("blobs", points[::-1].copy(), metadata=labels[::-1], step=1)
    return root


@pytest.fixture(scope="package")
def emb_api(emb_logdir):
    with client_of(emb_logdir, timeout=30) as client:
        yield client
