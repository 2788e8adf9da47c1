"""add_video: frames go in, a browser-playable file comes out (H.264 MP4 through PyAV, an
animated GIF without it) whose decoded frames hold the pixels logged; served by step with
range requests; SummaryWriter lays several videos out as torch does."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tests.helpers.http import client_of
from visualdl import LogReader, LogWriter, SummaryWriter
from visualdl.kinds.video.write import decode_frames, grid_shape

av = pytest.importorskip("av", reason="PyAV (visualdl[video]) is not installed")

TOL = 6  # H.264 at crf 18 on flat colours: a few levels at most


def colour_frames(t: int = 6, h: int = 32, w: int = 48) -> np.ndarray:
    """Flat frames whose colour says their index: (40 * i, 200, 255 - 40 * i)."""
    frames = np.zeros((t, h, w, 3), np.uint8)
    for i in range(t):
        frames[i] = (40 * i, 200, 255 - 40 * i)
    return frames


def read_back(logdir, run="run", tag="v"):
    reader = LogReader(str(logdir))
    refs = reader.videos(run, tag)
    return reader, refs, [reader.load(r) for r in refs]


def test_mp4_round_trip_every_frame(tmp_path):
    frames = colour_frames()
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_video("v", frames, 3, fps=5)
    _, refs, (msg,) = read_back(tmp_path)
    assert [r.step for r in refs] == [3]
    assert refs[0].meta == {"width": 48, "height": 32, "frames": 6, "fps": 5.0,
                            "mime": "video/mp4"}
    assert msg.data[4:8] == b"ftyp" and msg.mime == "video/mp4"
    assert msg.data.index(b"moov") < msg.data.index(b"mdat")  # playable before it all arrives
    back = decode_frames(msg.data)
    assert back.shape == (6, 32, 48, 3)
    assert np.abs(back.astype(int) - frames.astype(int)).max() <= TOL
    with av.open(__import__("io").BytesIO(msg.data)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264" and float(stream.average_rate) == 5.0


@pytest.mark.parametrize("fmt", ["TCHW", "THW", "NTHWC", "NTCHW"])
def test_dataformats(tmp_path, fmt):
    frames = colour_frames(4, 16, 16)
    data = {"TCHW": frames.transpose(0, 3, 1, 2), "THW": frames[..., 1],
            "NTHWC": frames[None], "NTCHW": frames.transpose(0, 3, 1, 2)[None]}[fmt]
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_video("v", data, 0, dataformats=fmt)
    back = decode_frames(read_back(tmp_path)[2][0].data)
    want = np.repeat(frames[..., 1:2], 3, axis=3) if fmt == "THW" else frames
    assert back.shape == want.shape
    assert np.abs(back.astype(int) - want.astype(int)).max() <= TOL


def test_float_frames_and_odd_sizes(tmp_path):
    frames = np.full((3, 15, 21, 3), 0.5, np.float32)
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_video("v", frames, 0)
    _, (ref,), (msg,) = read_back(tmp_path)
    assert (ref.meta["width"], ref.meta["height"]) == (21, 15)
    back = decode_frames(msg.data)
    assert back.shape == (3, 16, 22, 3)  # H.264 needs even sizes: a black row and column
    assert np.abs(back[:, :15, :21].astype(int) - 128).max() <= TOL


def test_summary_writer_grid_as_torch(tmp_path):
    """torch: N videos padded to a power of two, 2 ** ((N.bit_length() - 1) // 2) rows."""
    assert [grid_shape(n) for n in (1, 2, 3, 4, 5, 8)] == \
        [(1, 1), (1, 2), (1, 4), (2, 2), (2, 4), (2, 4)]
    n, t, h, w = 3, 2, 16, 16
    vids = np.zeros((n, t, 3, h, w), np.float32)
    for k in range(n):
        vids[k, :, k] = 1.0  # video k is pure red, green or blue
    with SummaryWriter(str(tmp_path / "run")) as sw:
        sw.add_video("v", vids, global_step=7, fps=2)
    _, (ref,), (msg,) = read_back(tmp_path)
    assert ref.step == 7 and ref.meta["fps"] == 2.0
    back = decode_frames(msg.data).astype(int)
    assert back.shape == (t, h, 4 * w, 3)  # 1 row of 4 cells, the fourth black
    centre = [back[0, h // 2, k * w + w // 2] for k in range(4)]
    for k, expect in enumerate([(255, 0, 0), (0, 255, 0), (0, 0, 255), (0, 0, 0)]):
        assert np.abs(centre[k] - np.array(expect)).max() <= 3 * TOL, (k, centre[k])


def test_gif_without_pyav_said_once(tmp_path):
    """Without PyAV (its import fails) a video is an animated GIF, with one warning."""
    script = f"""
import sys, warnings
sys.modules["av"] = None  # import av raises ImportError, as when it is not installed
import numpy as np
from visualdl import LogWriter, LogReader
from visualdl.kinds.video.write import decode_frames
frames = np.zeros((3, 8, 8, 3), np.uint8); frames[1] = 120; frames[2] = 255
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with LogWriter(logdir=r"{tmp_path / 'run'}") as w:
        w.add_video("v", frames, 0, fps=10)
        w.add_video("v", frames, 1, fps=10)
r = LogReader(r"{tmp_path}")
msgs = [r.load(ref) for ref in r.videos("run", "v")]
back = decode_frames(msgs[0].data)
print(len([c for c in caught if "PyAV" in str(c.message)]), msgs[0].mime, msgs[1].mime,
      back.shape, back[0, 0, 0, 0], back[1, 0, 0, 0], back[2, 0, 0, 0], msgs[0].fps)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "image/gif", "image/gif", "(3,", "8,", "8,", "3)",
                                   "0", "120", "255", "10.0"]


def test_served_with_ranges(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        for step in range(3):
            w.add_video("v", colour_frames(4, 16, 16), step, fps=4)
    data = read_back(tmp_path)[2][1].data
    with client_of(tmp_path) as api:
        index = api.json("/api/videos", run="run", tag="v")
        assert index["steps"] == [0, 1, 2] and index["frames"] == [4, 4, 4]
        assert index["mime"] == ["video/mp4"] * 3 and index["fps"] == [4.0] * 3
        whole = api.get("/api/videos/data", run="run", tag="v", step=1)
        assert whole.status_code == 200 and whole.content == data
        assert whole.headers["Content-Type"] == "video/mp4"
        assert whole.headers["Accept-Ranges"] == "bytes"
        part = api.get("/api/videos/data", {"run": "run", "tag": "v", "step": 1},
                       headers={"Range": "bytes=4-11"})
        assert part.status_code == 206 and part.content == data[4:12]
        assert part.headers["Content-Range"] == f"bytes 4-11/{len(data)}"
        assert api.get("/api/videos/data", run="run", tag="v", step=9).status_code == 404
        assert api.get("/api/videos/data", run="run", tag="v").status_code == 400
        assert api.get("/api/videos/data", run="run", tag="v", step="x").status_code == 400
