"""Embedding projections (issue 23, item 10): time to the first drawable projection and to
the final one, ours through the real route against the peer, measured in the same run.

Ours: ``python -m visualdl`` from this checkout in a child process on 127.0.0.1; one GET of
``/api/embeddings/projection`` (first frame: PCA at once), then a poll every 0.1 s until
``final`` (t-SNE by openTSNE in frames, UMAP by umap-learn). The peer: scikit-learn's
``TSNE`` (what a TensorBoard-projector-like server computing on request would run; PyPI's
VisualDL 2.x computes its projections in the browser, so there is no server of its to time)
and ``umap.UMAP`` called directly; it has nothing to draw before its result, so its first
drawn projection is its final one. Both are warmed up first (UMAP's numba compilation).

Data: ten Gaussian clusters (labels in the metadata), 3,000 x 25 and 10,000 x 128. The
``1-NN`` columns are the share of points whose nearest neighbour in the final projection
has the same cluster label: a projection that is fast but worse would show there.

Usage: python bench/embeddings.py [--sizes 3000x25,10000x128] [--methods tsne2,tsne3,umap2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_load import Server  # noqa: E402  (bench/server_load.py)

METHODS = {"tsne2": ("tsne", 2), "tsne3": ("tsne", 3), "umap2": ("umap", 2)}
CLUSTERS = 10


def clusters(rows: int, width: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(CLUSTERS, width)) * 3
    labels = rng.integers(0, CLUSTERS, rows)
    return (centres[labels] + rng.normal(size=(rows, width))).astype(np.float32), labels


def nn_accuracy(coords: np.ndarray, labels: np.ndarray) -> float:
    from sklearn.neighbors import NearestNeighbors

    _, idx = NearestNeighbors(n_neighbors=2).fit(coords).kneighbors(coords)
    return float((labels[idx[:, 1]] == labels).mean())


def ours(url: str, tag: str, method: str, dims: int, limit_s: float = 1800) -> dict:
    """Asked as the view asks: again until final, with the last ETag (a 304 while the
    frame is the same)."""
    params = {"run": "emb", "tag": tag, "step": 0, "method": method, "dims": dims}
    session = requests.Session()
    t0 = time.perf_counter()
    response = session.get(url + "/api/embeddings/projection", params=params, timeout=60)
    body = response.json()
    first = time.perf_counter() - t0
    refined = None
    while not body["final"]:
        if time.perf_counter() - t0 > limit_s:
            raise RuntimeError(f"{tag} {method} {dims}-D not final in {limit_s} s")
        time.sleep(0.1)
        response = session.get(url + "/api/embeddings/projection", params=params, timeout=60,
                               headers={"If-None-Match": response.headers["ETag"]})
        if response.status_code == 304:
            continue
        body = response.json()
        if refined is None and body["frame"] != "pca":
            refined = time.perf_counter() - t0
    final = time.perf_counter() - t0
    coords = np.array(body["coords"], dtype=float).T
    return {"first": first, "refined": refined if refined is not None else final,
            "final": final, "coords": coords}


def peer(data: np.ndarray, method: str, dims: int) -> dict:
    t0 = time.perf_counter()
    if method == "tsne":
        from sklearn.manifold import TSNE

        perplexity = float(min(30, (data.shape[0] - 1) / 3))
        coords = TSNE(n_components=dims, perplexity=perplexity, init="pca",
                      random_state=0).fit_transform(data)
    else:
        import umap

        coords = umap.UMAP(n_components=dims, n_neighbors=15, random_state=0,
                           n_jobs=1).fit_transform(data)
    final = time.perf_counter() - t0
    return {"first": final, "final": final, "coords": np.asarray(coords)}


def warm_up(url: str) -> None:
    """UMAP compiles with numba on first use, in the server and here: not what is timed."""
    ours(url, "warm", "umap", 2)
    ours(url, "warm", "tsne", 2)
    peer(clusters(200, 8)[0], "umap", 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="3000x25,10000x128")
    parser.add_argument("--methods", default=",".join(METHODS))
    args = parser.parse_args()
    sizes = [tuple(map(int, s.split("x"))) for s in args.sizes.split(",") if s]
    methods = [m for m in args.methods.split(",") if m]
    from visualdl import LogWriter

    root = Path(tempfile.mkdtemp(prefix="bench-emb-"))
    try:
        sets = {f"{n}x{d}": clusters(n, d) for n, d in sizes}
        with LogWriter(logdir=str(root / "emb")) as w:
            w.add_embeddings("warm", clusters(200, 8)[0], step=0)
            for tag, (data, _) in sets.items():
                w.add_embeddings(tag, data, step=0)
        server = Server(root)
        try:
            warm_up(server.url)
            print(f"cores: {os.cpu_count()}; times in s; ratio = peer / ours")
            print(f"{'set':<10} {'method':<7} {'ours first':>10} {'ours refined':>12} "
                  f"{'ours final':>10} {'peer final':>10} {'first ratio':>11} "
                  f"{'final ratio':>11} {'1-NN ours':>9} {'1-NN peer':>9}")
            for tag, (data, labels) in sets.items():
                for name in methods:
                    method, dims = METHODS[name]
                    a = ours(server.url, tag, method, dims)
                    b = peer(data, method, dims)
                    print(f"{tag:<10} {name:<7} {a['first']:>10.2f} {a['refined']:>12.2f} "
                          f"{a['final']:>10.2f} {b['final']:>10.2f} "
                          f"{b['first'] / a['first']:>10.0f}x {b['final'] / a['final']:>10.2f}x "
                          f"{nn_accuracy(a['coords'], labels):>9.3f} "
                          f"{nn_accuracy(b['coords'], labels):>9.3f}", flush=True)
        finally:
            server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
