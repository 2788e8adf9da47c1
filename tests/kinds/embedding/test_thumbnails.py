"""Embeddings with thumbnails (torch's ``label_img``): stored as one sprite, served by the
HTTP API, read back by ``LogReader``, and shown in the projector: hovering a point (a real
mouse move in Chromium) shows that row's thumbnail, checked by its pixels. Bad
``label_img`` is refused with the tag named, and nothing logged before is lost."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tests.helpers.http import client_of
from tests.helpers.pages import PageWatch
from tests.helpers.server import serving
from visualdl import LogReader, LogWriter, SummaryWriter
from visualdl.kinds.image.write import decode_png
from visualdl.reader import load_embedding, load_sprite

COLORS = [(255, 0, 0), (0, 200, 0), (0, 0, 255), (250, 220, 0), (160, 0, 200)]
MAT = np.array([[0, 0, 0], [9, 1, 0], [2, 8, 1], [8, 9, 3], [4, 4, 9]], np.float32)


def _thumbs(h: int = 6, w: int = 8) -> np.ndarray:
    """One solid colour a row (N x H x W x 3 uint8)."""
    return np.stack([np.full((h, w, 3), c, np.uint8) for c in COLORS])


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("thumbs")
    with LogWriter(logdir=str(root / "run")) as w:
        w.add_embeddings("pics", MAT, metadata=[f"r{i}" for i in range(5)], step=1,
                         label_img=_thumbs())
        w.add_embeddings("plain", MAT, step=1)
    return root


def test_sprite_layout_reader_and_api(logdir):
    r = LogReader(str(logdir))
    (ref,) = r.embeddings("run", "pics")
    assert ref.meta["thumbnail"] == (6, 8)
    message = r.load(ref)
    assert np.array_equal(load_sprite(message), _thumbs())
    assert np.array_equal(load_embedding(message)[0], MAT)
    sprite = decode_png(message.sprite)
    assert sprite.shape == (2 * 6, 3 * 8, 3)  # cols = ceil(sqrt(5)) = 3, two rows
    assert tuple(sprite[6 + 3, 8 + 4]) == COLORS[4]  # row 4 at cell (1, 1)
    assert load_sprite(r.load(r.embeddings("run", "plain")[0])) is None
    with client_of(logdir) as api:
        index = api.json("/api/embeddings", run="run", tag="pics")
        assert index["thumbnail"] == [[6, 8]]
        assert api.json("/api/embeddings", run="run", tag="plain")["thumbnail"] == [None]
        got = api.get("/api/embeddings/sprite", {"run": "run", "tag": "pics", "step": 1})
        assert got.status_code == 200 and got.headers["Content-Type"] == "image/png"
        assert np.array_equal(decode_png(got.content), sprite)
        none = api.get("/api/embeddings/sprite", {"run": "run", "tag": "plain", "step": 1})
        assert none.status_code == 404 and "label_img" in none.json()["error"]
        assert api.get("/api/embeddings/sprite", {"run": "run", "tag": "pics", "step": 5}
                       ).status_code == 404


def test_summary_writer_label_img_nchw(tmp_path):
    nchw = _thumbs().transpose(0, 3, 1, 2).astype(np.float32) / 255  # TB's conversion: x255
    with SummaryWriter(str(tmp_path / "exp")) as w:
        w.add_embedding(MAT, metadata=list("abcde"), label_img=nchw, global_step=2)
        w.add_embedding(MAT, label_img=_thumbs().transpose(0, 3, 1, 2), tag="uint8")
    r = LogReader(str(tmp_path / "exp"))
    got = load_sprite(r.load(r.embeddings("exp", "default")[0]))
    # float pixels are scaled by 255 and truncated, as TensorBoard does: within one level
    assert got.shape == (5, 6, 8, 3) and np.abs(got.astype(int) - _thumbs()).max() <= 1
    assert np.array_equal(load_sprite(r.load(r.embeddings("exp", "uint8")[0])), _thumbs())


@pytest.mark.parametrize("label_img, message", [
    (np.zeros((4, 6, 8, 3), np.uint8), r"'t': label_img has 4 images for the 5 rows of mat"),
    (np.zeros((5, 6, 8, 2), np.uint8), r"'t': label_img must have shape \(N, H, W, C\)"),
    (np.zeros((5, 8), np.uint8), r"'t': label_img must have shape"),
    (np.full((5, 6, 8, 3), 2.0), r"'t': label_img must be uint8, or floats in \[0, 1\]"),
    (np.zeros((5, 4000, 4000), np.uint8), r"'t': the sprite .* over 8192: use smaller"),
])
def test_bad_label_img_is_refused_and_nothing_before_is_lost(tmp_path, label_img, message):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_embeddings("t", MAT, step=0, label_img=_thumbs())
        with pytest.raises(ValueError, match=message):
            w.add_embeddings("t", MAT, step=1, label_img=label_img)
    r = LogReader(str(tmp_path))
    assert r.errors == 0 and [ref.step for ref in r.embeddings("run", "t")] == [0]
    assert np.array_equal(load_sprite(r.load(r.embeddings("run", "t")[0])), _thumbs())


def test_summary_writer_label_img_count_mismatch(tmp_path):
    with SummaryWriter(str(tmp_path / "exp")) as w:
        with pytest.raises(ValueError, match=r"'x': label_img has 2 images for the 5 rows"):
            w.add_embedding(MAT, label_img=np.zeros((2, 3, 4, 4)), tag="x")
        with pytest.raises(ValueError, match=r"'y': label_img must have shape \(N, C, H, W\)"):
            w.add_embedding(MAT, label_img=np.zeros((5, 4, 4)), tag="y")


CARD = '.card[data-run="run"][data-tag="pics"]'


@pytest.mark.browser
def test_hovering_a_point_shows_its_thumbnail(browser, logdir):
    from PIL import Image

    page = browser.new_page(viewport={"width": 1200, "height": 900})
    watch = PageWatch(page)
    with serving(logdir) as server:
        page.goto(f"{server.url}?tab=embeddings")
        page.locator(CARD).scroll_into_view_if_needed()
        page.wait_for_function(f"() => document.querySelector('{CARD}')?.dataset.state === 'ready'")
        page.wait_for_selector(f"{CARD} .emb-thumb[data-ready=true]", state="attached")
        points = page.evaluate(
            """(sel) => { const gd = document.querySelector(sel + ' .js-plotly-plot');
              const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
              const r = gd.getBoundingClientRect();
              return gd.data.flatMap((t) => t.x.map((x, k) => ({ row: t.customdata[k],
                x: r.left + xa._offset + xa.d2p(x), y: r.top + ya._offset + ya.d2p(t.y[k]) }))); }""",
            CARD)
        assert sorted(p["row"] for p in points) == [0, 1, 2, 3, 4]
        for point in sorted(points, key=lambda p: p["row"]):
            page.mouse.move(point["x"], point["y"])
            page.wait_for_function(
                "([sel, row]) => document.querySelector(sel + ' .emb-thumb').dataset.row === row",
                arg=[CARD, str(point["row"])])
            thumb = page.locator(f"{CARD} .emb-thumb-img")
            box = thumb.bounding_box()
            assert (round(box["width"]), round(box["height"])) == (8 * 8, 6 * 8)  # scaled x8
            shot = np.asarray(Image.open(io.BytesIO(thumb.screenshot())).convert("RGB"))
            # the whole thumbnail is that row's colour: the right cell of the sprite
            centre = shot[2:-2, 2:-2].reshape(-1, 3).astype(int)
            assert (np.abs(centre - COLORS[point["row"]]).max(axis=1) <= 3).all(), point["row"]
            assert f"row {point['row']}" in page.locator(f"{CARD} .emb-thumb").inner_text()
        plain = '.card[data-run="run"][data-tag="plain"]'
        page.locator(plain).scroll_into_view_if_needed()
        page.wait_for_function(f"() => document.querySelector('{plain}')?.dataset.state === 'ready'")
        assert page.locator(f"{plain} .emb-thumb").is_hidden()
        watch.finish()
    assert watch.errors == []
    page.close()
