"""/api/tables, /api/tables/data and /api/tables/blob against real log files: exact cells
in columnar JSON, each distinct image stored once, media bytes, and 4xx for bad asks."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from tests.kinds.table.common import BIG_ROWS, COLORS, NAMES, RATE
from visualdl.kinds.audio.write import decode_wav

Q = {"run": "exp", "tag": "small"}


def test_index_lists_every_step_with_its_size(tables_api):
    body = tables_api.json("/api/tables", **Q)
    assert body["steps"] == [0, 5] and body["total"] == 2
    assert body["rows"] == [5, 5] and body["columns"] == [6, 6]
    assert tables_api.json("/api/tables", run="exp", tag="big")["rows"] == [BIG_ROWS]


def test_data_is_columnar_with_exact_cells(tables_api):
    body = tables_api.json("/api/tables/data", step=5, **Q)
    assert body["columns"] == ["id", "name", "score", "ok", "img", "clip"]
    assert body["rows"] == 5 and body["step"] == 5
    ids, names, scores, ok, img, clip = body["data"]
    assert ids == [0, 1, 2, 3, 4]
    assert names == [f"{n}5" for n in NAMES]
    assert scores == [0.5, 2.25, -1.0, {"n": "NaN"}, 10.0]
    assert ok == [True, False, True, None, False]
    # rows 0 and 4 hold the same pixels: one blob; the clips come after the images
    assert img == [{"blob": 0}, {"blob": 1}, {"blob": 2}, {"blob": 3}, {"blob": 0}]
    assert clip == [{"blob": 4}, None, None, None, {"blob": 5}]
    assert [b["mime"] for b in body["blobs"]] == ["image/png"] * 4 + ["audio/wav"] * 2
    assert body["blobs"][1]["width"] == 8 and body["blobs"][1]["height"] == 6


def test_blobs_are_the_logged_pixels_and_samples(tables_api):
    for i in range(4):
        r = tables_api.get("/api/tables/blob", step=5, blob=i, **Q)
        assert r.status_code == 200 and r.headers["Content-Type"] == "image/png"
        pixels = np.asarray(Image.open(io.BytesIO(r.content)))
        assert pixels.shape == (6, 8, 3) and tuple(pixels[0, 0]) == COLORS[i]
    r = tables_api.get("/api/tables/blob", step=5, blob=5, **Q)
    assert r.headers["Content-Type"] == "audio/wav"
    samples, rate = decode_wav(r.content)
    assert rate == RATE and samples.shape == (1600, 1)
    want = np.rint(np.sin(np.arange(1600) / 10.0).astype(np.float32) * 0.5 * 32767)
    np.testing.assert_array_equal(samples[:, 0], want.astype(np.int16))


def test_data_revalidates(tables_api):
    first = tables_api.get("/api/tables/data", step=0, **Q)
    again = tables_api.get("/api/tables/data", {**Q, "step": 0},
                           headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.content == b""


def test_bad_asks_are_4xx_with_a_reason(tables_api):
    assert tables_api.get("/api/tables/data", step=3, **Q).status_code == 404
    assert tables_api.get("/api/tables/data", **Q).status_code == 400
    assert tables_api.get("/api/tables/data", run="exp", tag="nope", step=0).status_code == 404
    r = tables_api.get("/api/tables/blob", step=5, blob=6, **Q)
    assert r.status_code == 404 and "has 6 blobs, no blob 6" in r.json()["error"]
    assert tables_api.get("/api/tables/blob", step=5, blob=-1, **Q).status_code == 400
    assert tables_api.get("/api/tables/blob", step=5, blob="x", **Q).status_code == 400
