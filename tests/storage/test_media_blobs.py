"""Videos and meshes in object storage: written to an ``s3://`` logdir (moto's S3 server)
and a ``memory://`` one, read back with their bytes, each blob fetched once and then
answered from the blob cache, and served by a server on the bucket."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from tests.helpers.http import client_of
from visualdl import LogReader, LogWriter
from visualdl.kinds.mesh.read import arrays

FRAMES = np.zeros((4, 8, 8, 3), np.uint8)
FRAMES[:, :, :, 0] = np.arange(4)[:, None, None] * 60
VERTS = np.arange(30, dtype=np.float32).reshape(10, 3) / 7


def _write(url: str) -> None:
    with LogWriter(logdir=f"{url}/r") as w:
        w.add_scalar("loss", 0.5, 0)
        w.add_video("clip", FRAMES, 1, fps=2)
        w.add_mesh("cloud", VERTS, 2, colors=np.full((10, 3), 9, np.uint8))


def test_memory_blobs_fetched_once(memory_url):
    _write(memory_url)
    reader = LogReader(memory_url)
    video, mesh = reader.videos("r", "clip")[0], reader.meshes("r", "cloud")[0]
    for ref in (video, mesh):
        first = reader.load(ref)
        mid = reader.storage_stats()
        assert reader.load(ref) == first
        after = reader.storage_stats()
        assert after.gets == mid.gets and after.cache_hits == mid.cache_hits + 1
    assert reader.load(video).mime in ("video/mp4", "image/gif")
    assert arrays(reader.load(mesh)).vertices[0].tolist() == VERTS.tolist()


def test_s3_served(s3_url):
    pytest.importorskip("av", reason="PyAV (visualdl[video]) is not installed")
    _write(s3_url)
    reader = LogReader(s3_url)
    data = reader.load(reader.videos("r", "clip")[0]).data
    with client_of(s3_url) as api:
        assert api.json("/api/videos", run="r", tag="clip")["frames"] == [4]
        got = api.get("/api/videos/data", run="r", tag="clip", step=1)
        assert got.status_code == 200 and got.content == data
        assert got.headers["Content-Type"] == "video/mp4"
        body = api.json("/api/meshes/data", run="r", tag="cloud", step=2)
        vertices = np.frombuffer(base64.b64decode(body["vertices"]), "<f4").reshape(-1, 3)
        assert vertices.tolist() == VERTS.tolist() and body["shown"] == 10
