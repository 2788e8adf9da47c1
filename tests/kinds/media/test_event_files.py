"""TensorBoard's video and 3-D summaries, as torch's and tensorboardX's writers write them:
an ``add_video`` GIF image summary is a video; the mesh plugin's parts are one mesh with
the values that went in. ``visualdl inspect`` counts them and ``visualdl convert`` carries
them into our format unchanged."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from tests.convert.test_convert import assert_same_logs
from tests.helpers.http import client_of
from visualdl import LogReader
from visualdl.convert import convert
from visualdl.kinds.mesh.read import arrays
from visualdl.reader.inspect import summarize

RNG = np.random.default_rng(5)
VERTS = RNG.normal(size=(1, 30, 3)).astype(np.float32)
COLORS = RNG.integers(0, 256, (1, 30, 3), dtype=np.uint8)
FACES = RNG.integers(0, 30, (1, 12, 3)).astype(np.int32)
GIF_REDS = (0, 60, 120, 180, 240)


def gif_bytes() -> bytes:
    """An animated GIF of five flat 8 x 10 frames at 5 fps, as moviepy writes add_video's."""
    frames = [Image.fromarray(np.full((8, 10, 3), (r, 0, 0), np.uint8)) for r in GIF_REDS]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=200,
                   loop=0)
    return out.getvalue()


def write_tensorboardx(logdir: str) -> bytes:
    tbx = pytest.importorskip("tensorboardX")
    from tensorboardX.proto.summary_pb2 import Summary

    gif = gif_bytes()
    with tbx.SummaryWriter(logdir) as w:
        w.add_scalar("loss", 0.5, 0)
        w.add_mesh("cloud", VERTS, colors=COLORS, global_step=1)
        w.add_mesh("solid", VERTS, faces=FACES, config_dict={"camera": {"fov": 60}},
                   global_step=2)
        # what SummaryWriter.add_video writes once moviepy has made the GIF
        image = Summary.Image(height=8, width=10, colorspace=3, encoded_image_string=gif)
        w._get_file_writer().add_summary(Summary(value=[Summary.Value(tag="clip",
                                                                      image=image)]), 3)
    return gif


def test_tensorboardx_meshes_and_gif_video(tmp_path):
    gif = write_tensorboardx(str(tmp_path / "tbx"))
    reader = LogReader(str(tmp_path))
    assert reader.tags("tbx") == {"scalar": ["loss"], "video": ["clip"],
                                  "mesh": ["cloud", "solid"]}
    cloud = arrays(reader.load(reader.meshes("tbx", "cloud")[0]))
    assert cloud.vertices.tolist() == VERTS.tolist() and cloud.colors.tolist() == COLORS.tolist()
    assert cloud.faces is None
    (ref,) = reader.meshes("tbx", "solid")
    solid = arrays(reader.load(ref))
    assert ref.step == 2 and solid.faces.tolist() == FACES.tolist() and solid.colors is None
    assert solid.config == '{"camera": {"fov": 60}}'
    (ref,) = reader.videos("tbx", "clip")
    assert (ref.step, ref.meta) == (3, {"height": 8, "width": 10, "frames": 5, "fps": 5.0,
                                        "mime": "image/gif"})
    with client_of(tmp_path) as api:
        got = api.get("/api/videos/data", run="tbx", tag="clip", step=3)
        assert got.status_code == 200 and got.headers["Content-Type"] == "image/gif"
        assert got.content == gif
        body = api.json("/api/meshes/data", run="tbx", tag="solid", step=2)
        assert body["config"] == {"camera": {"fov": 60}} and body["triangles"] == 12


def test_inspect_counts_and_convert_carries(tmp_path):
    write_tensorboardx(str(tmp_path / "logs" / "tbx"))
    out = io.StringIO()
    assert summarize([str(tmp_path / "logs")], out) == 0
    text = out.getvalue()
    assert "video      clip  (1 points, steps 3)" in text
    assert "mesh       cloud  (1 points, steps 1)" in text
    assert "mesh       solid  (1 points, steps 2)" in text
    summary = convert(tmp_path / "logs", tmp_path / "out")
    assert summary.copied["video"] == 1 and summary.copied["mesh"] == 2
    dst = LogReader(str(tmp_path / "out"))
    assert all(f.source == "visualdl" for f in dst.files())
    assert_same_logs(LogReader(str(tmp_path / "logs")), dst)


def test_a_bad_mesh_is_a_bad_record_not_a_crash(tmp_path):
    tbx = pytest.importorskip("tensorboardX")
    with tbx.SummaryWriter(str(tmp_path / "tbx")) as w:
        w.add_scalar("loss", 0.5, 0)
        w.add_mesh("bad", VERTS, faces=FACES + 100, global_step=1)  # faces past the vertices
        w.add_scalar("loss", 0.25, 1)
    reader = LogReader(str(tmp_path))
    assert reader.scalars("tbx", "loss").values.tolist() == [0.5, 0.25]
    assert "mesh" not in reader.tags("tbx")
    assert any("mesh 'bad'" in m and "index past its 30 vertices" in m
               for m in reader.error_messages)


def test_torch_summary_writer_meshes(tmp_path, torch):
    pytest.importorskip("tensorboard")  # torch.utils.tensorboard needs it
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path / "pt")) as w:
        w.add_mesh("cloud", torch.from_numpy(VERTS), colors=torch.from_numpy(COLORS),
                   global_step=1)
        w.add_mesh("solid", torch.from_numpy(VERTS), faces=torch.from_numpy(FACES),
                   config_dict={"camera": {"fov": 60}}, global_step=2)
    reader = LogReader(str(tmp_path))
    assert reader.tags("pt")["mesh"] == ["cloud", "solid"]
    cloud = arrays(reader.load(reader.meshes("pt", "cloud")[0]))
    assert cloud.vertices.tolist() == VERTS.tolist() and cloud.colors.tolist() == COLORS.tolist()
    solid = arrays(reader.load(reader.meshes("pt", "solid")[0]))
    assert solid.faces.tolist() == FACES.tolist()


def test_torch_and_ours_side_by_side_show_the_same_meshes(tmp_path, torch):
    """The same add_mesh calls through torch's SummaryWriter and ours, both logdirs served
    by one server: every mesh answer is the same."""
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from visualdl import SummaryWriter as OurWriter

    for name, writer_class in (("torch", TorchWriter), ("ours", OurWriter)):
        with writer_class(str(tmp_path / name)) as w:
            w.add_mesh("cloud", torch.from_numpy(VERTS), colors=torch.from_numpy(COLORS),
                       global_step=1)
            w.add_mesh("solid", torch.from_numpy(VERTS), faces=torch.from_numpy(FACES),
                       config_dict={"camera": {"fov": 60}}, global_step=2)
    with client_of(tmp_path) as api:
        for tag, step in (("cloud", 1), ("solid", 2)):
            bodies = [api.json("/api/meshes/data", run=run, tag=tag, step=step)
                      for run in ("torch", "ours")]
            assert bodies[0] == bodies[1]
            assert bodies[0]["points"] == 30 and bodies[0]["step"] == step
