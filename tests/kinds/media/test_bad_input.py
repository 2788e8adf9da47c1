"""Bad videos and meshes: a clear error naming the tag and the problem, raised in the
caller's thread, and nothing logged before is lost."""

from __future__ import annotations

import numpy as np
import pytest

from visualdl import LogReader, LogWriter, SummaryWriter

FRAME = np.zeros((8, 8, 3), np.uint8)
V = np.zeros((1, 4, 3), np.float32)

BAD_VIDEOS = [
    ((np.zeros((8, 8, 3), np.uint8),), {}, ValueError, "must have 4 dimensions, got shape \\(8, 8, 3\\)"),
    ((np.zeros((2, 8, 8, 2), np.uint8),), {}, ValueError, "1, 3 or 4 channels"),
    (([FRAME, FRAME, np.zeros((4, 8, 3), np.uint8)],), {}, ValueError,
     "frames of different sizes: frame 0 has shape \\(8, 8, 3\\), frame 2 has shape \\(4, 8, 3\\)"),
    ((np.full((2, 8, 8, 3), np.nan),), {}, ValueError, "NaN or infinite"),
    ((np.full((2, 8, 8, 3), 2.0),), {}, ValueError, "float videos must lie in \\[0, 1\\]"),
    ((np.zeros((0, 8, 8, 3)),), {}, ValueError, "video is empty"),
    ((np.zeros((2, 8, 8, 3), bool),), {}, TypeError, "dtype bool"),
    ((np.zeros((2, 8, 8, 3), np.uint8),), {"fps": 0}, ValueError, "fps must be in"),
    ((np.zeros((2, 8, 8, 3), np.uint8),), {"fps": "fast"}, TypeError, "fps must be a number"),
    ((np.zeros((2, 8, 8, 3), np.uint8),), {"dataformats": "HWC"}, ValueError, "dataformats must be"),
]

BAD_MESHES = [
    ((np.zeros((4, 2)),), {}, ValueError, "vertices must have shape \\(B, N, 3\\)"),
    ((np.full((1, 4, 3), np.nan),), {}, ValueError, "vertices contain NaN"),
    ((np.zeros((1, 0, 3)),), {}, ValueError, "vertices are empty"),
    ((V,), {"faces": [[[0, 1, 4]]]}, ValueError,
     "faces index vertices 0..4, but there are only 4 vertices \\(0..3\\)"),
    ((V,), {"faces": [[[0, -1, 2]]]}, ValueError, "faces index vertices -1..2"),
    ((V,), {"faces": [[[0.5, 1, 2]]]}, TypeError, "faces must hold integer vertex indices"),
    ((V,), {"colors": np.zeros((1, 3, 3))}, ValueError, "colors must have the vertices' shape"),
    ((V,), {"colors": np.full((1, 4, 3), 300)}, ValueError, "colors must lie in \\[0, 255\\]"),
    ((V,), {"config_dict": {"f": object()}}, ValueError, "config_dict is not JSON-serializable"),
    (("vertices",), {}, TypeError, "vertices must be numeric|not array-like"),
]


@pytest.mark.parametrize("args,kwargs,exc,message", BAD_VIDEOS)
def test_bad_video(tmp_path, args, kwargs, exc, message):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_scalar("before", 1.5, 0)
        with pytest.raises(exc, match="'clip': .*" + message):
            w.add_video("clip", *args, 1, **kwargs)
    reader = LogReader(str(tmp_path))
    assert reader.scalars("run", "before").values.tolist() == [1.5]
    assert "video" not in reader.tags("run")


@pytest.mark.parametrize("args,kwargs,exc,message", BAD_MESHES)
def test_bad_mesh(tmp_path, args, kwargs, exc, message):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_scalar("before", 2.5, 0)
        with pytest.raises(exc, match="'shape': .*" + f"({message})"):
            w.add_mesh("shape", *args, 1, **kwargs)
    reader = LogReader(str(tmp_path))
    assert reader.scalars("run", "before").values.tolist() == [2.5]
    assert "mesh" not in reader.tags("run")


def test_summary_writer_errors_name_the_tag(tmp_path):
    with SummaryWriter(str(tmp_path / "run")) as sw:
        sw.add_scalar("before", 3.0, 0)
        with pytest.raises(ValueError, match="'v': a video with dataformats=NTCHW must have "
                                             "5 dimensions, got shape \\(2, 3, 8, 8\\)"):
            sw.add_video("v", np.zeros((2, 3, 8, 8), np.uint8))
        with pytest.raises(ValueError, match="'m': faces index vertices"):
            sw.add_mesh("m", V, faces=np.array([[[0, 1, 9]]]))
    reader = LogReader(str(tmp_path))
    assert reader.scalars("run", "before").values.tolist() == [3.0]
    assert set(reader.tags("run")) == {"scalar"}
