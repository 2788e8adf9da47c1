"""A t-SNE or UMAP request answers PCA at once without importing the method's library
(audit item 10): it only looks the library up, and the background refinement imports it.

Before: ``require`` imported openTSNE (about 2 s) or umap (about 4 s) on the request, so
the first frame of 10,000 x 128 took over 3 s. Run in a fresh interpreter, where nothing
has imported them yet."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
HEAVY = ("openTSNE", "umap", "sklearn", "pynndescent", "numba")

CHECK = """
import importlib.util, json, sys
from visualdl.kinds.embedding import projections, tsne
found = {"tsne": tsne.available(), "umap": importlib.util.find_spec("umap") is not None}
for method, there in found.items():
    if there:
        projections.require(method)
print(json.dumps({"found": found, "imported": [m for m in %r if m in sys.modules]}))
""" % (HEAVY,)

# the refinement held back (never importing anything) while the first answers are asked
FIRST = """
import json, sys, threading
import numpy as np, requests
sys.path.insert(0, %r)
from visualdl.kinds.embedding import api as embedding_api
from tests.helpers.server import serving

hold = threading.Event()

def held(matrix, method, dims):
    hold.wait(60)
    yield np.zeros((matrix.shape[0], dims)), 1.0

embedding_api.frames = held
out = {}
with serving(sys.argv[1]) as server:
    for method in sys.argv[2:]:
        body = requests.get(server.url + "/api/embeddings/projection", timeout=30, params={
            "run": "run", "tag": "blobs", "step": 0, "method": method, "dims": 2}).json()
        out[method] = [body["frame"], body["final"], body["progress"], len(body["coords"])]
    out["imported"] = [m for m in %r if m in sys.modules]
    hold.set()
print(json.dumps(out))
""" % (str(ROOT), HEAVY)


def _run(script: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _methods() -> list[str]:
    there = [m for m, mods in (("tsne", ("openTSNE", "sklearn")), ("umap", ("umap",)))
             if any(importlib.util.find_spec(name) for name in mods)]
    if not there:
        pytest.skip("neither t-SNE's nor UMAP's library is installed")
    return there


def test_the_availability_check_imports_no_library():
    methods = _methods()
    out = _run(CHECK)
    assert [m for m, there in out["found"].items() if there] == methods
    assert out["imported"] == []


def test_the_first_answer_is_pca_not_final_before_any_library_is_imported(emb_logdir):
    methods = _methods()
    out = _run(FIRST, str(emb_logdir), *methods)
    for method in methods:
        assert out[method] == ["pca", False, 0.0, 2], method
    assert out["imported"] == []


def test_a_library_that_fails_to_import_is_the_refinements_missing_library(monkeypatch):
    from tests.kinds.embedding.conftest import clusters
    from visualdl.kinds.embedding import projections

    monkeypatch.setattr(projections, "installed", lambda name: True)
    monkeypatch.setitem(sys.modules, "umap", None)  # "import umap" raises ImportError
    projections.require("umap")  # looked up: there
    with pytest.raises(projections.MissingLibrary, match="umap-learn"):
        next(projections.frames(clusters()[0], "umap", 2))
