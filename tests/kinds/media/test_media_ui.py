"""The Video and 3D tabs in headless Chromium over a real server: a video plays (its time
advances), its frames hold the logged colours (drawn to a canvas and read back), frame
stepping, loop, speed and the step slider work; a mesh rotated by dragging moves the other
run's camera too, and a large point cloud is drawn subsampled until all points are asked for."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.server import serving
from visualdl import LogWriter

pytestmark = pytest.mark.browser
pytest.importorskip("av", reason="PyAV (visualdl[video]) is not installed")

FPS = 8
FRAMES = 16
STEPS = 3
CLOUD = 3_000
DRAWN = 2_000  # ?meshPoints=: WebGL is software-drawn here, a few thousand points suffice
TOL = 16  # H.264 (yuv420p) and the browser's colour conversion


def colour(step: int, frame: int) -> tuple[int, int, int]:
    return (15 * frame, 60 + 80 * step, 200)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("media")
    rng = np.random.default_rng(3)
    for run in ("a", "b"):
        with LogWriter(logdir=str(root / run)) as w:
            for step in range(STEPS):
                frames = np.zeros((FRAMES, 32, 32, 3), np.uint8)
                for i in range(FRAMES):
                    frames[i] = colour(step, i)
                w.add_video("clip", frames, step, fps=FPS)
            w.add_mesh("cloud", rng.random((CLOUD, 3)), 0)
            w.add_mesh("tetra", [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], 0,
                       colors=[[255, 0, 0]] * 4, faces=[[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]])
    with serving(root) as handle:
        yield handle


def card(run: str, tag: str) -> str:
    return f'.card[data-run="{run}"][data-tag="{tag}"]'


PIXEL = """(v) => { const c = document.createElement('canvas'); c.width = v.videoWidth;
  c.height = v.videoHeight; const g = c.getContext('2d'); g.drawImage(v, 0, 0);
  return Array.from(g.getImageData(16, 16, 1, 1).data.slice(0, 3)); }"""


def close_to(got, want) -> bool:
    return max(abs(a - b) for a, b in zip(got, want)) <= TOL


def test_video_plays_steps_frames_and_follows_settings(watched, server):
    page = watched.page
    page.goto(f"{server.url}?tab=video")
    a = card("a", "clip")
    page.wait_for_selector(f'{a}[data-shown="{STEPS - 1}"]')  # newest step first
    video = page.locator(f"{a} video")
    page.wait_for_function("(v) => v.currentTime > 0.3 && !v.paused", arg=video.element_handle())
    # step the frames by hand: paused, on frame 0, then three frames on
    video.evaluate("(v) => { v.pause(); v.currentTime = 0.5 / 8; }")
    page.wait_for_function("(v) => !v.seeking && Math.abs(v.currentTime - 0.0625) < 1e-3",
                           arg=video.element_handle())
    assert close_to(video.evaluate(PIXEL), colour(STEPS - 1, 0))
    nxt = page.locator(f"{a} button[aria-label='Next frame']")
    for _ in range(3):
        nxt.click()
    page.wait_for_function("(v) => !v.seeking && Math.abs(v.currentTime - 3.5 / 8) < 1e-3",
                           arg=video.element_handle())
    assert close_to(video.evaluate(PIXEL), colour(STEPS - 1, 3))
    page.locator(f"{a} button[aria-label='Previous frame']").click()
    page.wait_for_function("(v) => !v.seeking && Math.abs(v.currentTime - 2.5 / 8) < 1e-3",
                           arg=video.element_handle())
    assert close_to(video.evaluate(PIXEL), colour(STEPS - 1, 2))
    assert page.locator(f"{a} .video-time").text_content() == "frame 3"
    # loop and speed apply to every player
    page.locator("input[name=video-loop]").uncheck()
    page.locator("select[name=video-speed]").select_option("2")
    assert page.locator("video").evaluate_all("(vs) => vs.map((v) => [v.loop, v.playbackRate])") \
        == [[False, 2], [False, 2]]
    # the slider shows another step: its own colours
    page.locator(f"{a} .step-range").evaluate(
        "(el) => { el.value = '0'; el.dispatchEvent(new Event('input', {bubbles: true})); }")
    page.wait_for_selector(f'{a}[data-shown="0"]')
    video.evaluate("(v) => { v.pause(); v.currentTime = 0.5 / 8; }")
    page.wait_for_function("(v) => v.readyState >= 2 && !v.seeking && v.currentTime < 0.07",
                           arg=video.element_handle())
    assert close_to(video.evaluate(PIXEL), colour(0, 0))
    assert video.evaluate("(v) => [v.loop, v.playbackRate]") == [False, 2]


CAMERA = "(p) => { const e = p._fullLayout.scene.camera.eye; return [e.x, e.y, e.z]; }"


def test_mesh_rotation_moves_every_camera_and_all_points_on_demand(watched, server):
    page = watched.page
    page.set_default_timeout(60_000)  # WebGL is drawn in software (SwiftShader) here
    page.goto(f"{server.url}?tab=mesh&meshPoints={DRAWN}")
    for run in ("a", "b"):
        page.wait_for_selector(f'{card(run, "cloud")}[data-shown="0"]')
    plot_a, plot_b = (page.locator(f"{card(run, 'cloud')} .mesh-plot") for run in ("a", "b"))
    assert plot_a.evaluate("(p) => [p.data[0].type, p.data[0].x.length]") == ["scatter3d", DRAWN]
    assert page.locator(f"{card('a', 'cloud')} .mesh-note").text_content() == \
        "2,000 of 3,000 points drawn"
    before = plot_b.evaluate(CAMERA)
    box = plot_a.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for k in range(1, 11):
        page.mouse.move(x + 12 * k, y + 3 * k)
    page.mouse.up()
    page.wait_for_function(f"(p) => {{ const e = ({CAMERA})(p); return e.some((v, i) => "
                           f"Math.abs(v - {before}[i]) > 1e-3); }}", arg=plot_a.element_handle())
    rotated = plot_a.evaluate(CAMERA)
    page.wait_for_function(f"(p) => ({CAMERA})(p).every((v, i) => Math.abs(v - {rotated}[i]) < 1e-9)",
                           arg=plot_b.element_handle())
    # every other plot follows: the tetrahedra too
    tetra = page.locator(f"{card('b', 'tetra')} .mesh-plot")
    tetra.scroll_into_view_if_needed()
    page.wait_for_selector(f'{card("b", "tetra")}[data-shown="0"]')
    assert tetra.evaluate("(p) => [p.data[0].type, [...p.data[0].i], p.data[0].vertexcolor]") == \
        ["mesh3d", [0, 0, 0, 1], ["#ff0000"] * 4]
    assert tetra.evaluate(CAMERA) == pytest.approx(rotated)
    # all the points, on request
    page.locator(f"{card('a', 'cloud')}").scroll_into_view_if_needed()
    page.locator(f"{card('a', 'cloud')} button", has_text="Load all points").click()
    page.wait_for_selector(f'{card("a", "cloud")}[data-points="{CLOUD}"]')
    assert plot_a.evaluate("(p) => p.data[0].x.length") == CLOUD
    assert page.locator(f"{card('a', 'cloud')} .mesh-note").text_content() == "3,000 points"


def test_tensorboard_gif_video_is_shown(watched, tmp_path):
    """torch's / tensorboardX's add_video GIF (an image summary) shows in the Video tab as
    the GIF it is, its first frame's colour on screen."""
    from tests.kinds.media.test_event_files import GIF_REDS, write_tensorboardx

    write_tensorboardx(str(tmp_path / "tbx"))
    with serving(tmp_path) as handle:
        page = watched.page
        page.goto(f"{handle.url}?tab=video")
        gif = card("tbx", "clip")
        page.wait_for_selector(f'{gif}[data-shown="3"]')
        img = page.locator(f"{gif} .video-frame img")
        assert img.evaluate("(i) => [i.naturalWidth, i.naturalHeight, new URL(i.src).pathname]") \
            == [10, 8, "/api/videos/data"]
        red = img.evaluate("""(i) => { const c = document.createElement('canvas'); c.width = 10;
          c.height = 8; const g = c.getContext('2d'); g.drawImage(i, 0, 0);
          return g.getImageData(4, 4, 1, 1).data[0]; }""")
        assert red in GIF_REDS  # a frame of the GIF (which one depends on when it was drawn)
        assert page.locator(f"{gif} .video-controls").is_hidden()
        assert page.locator(f"{gif} .image-meta").text_content() == "10×8 · 5 frames at 5 fps"
        watched.finish()
