"""add_mesh: vertices, colours, faces and the scene configuration read back exactly; the
server sends a large point cloud subsampled (the same points every time), all of it on
request, and a mesh with triangles whole."""

from __future__ import annotations

import base64

import numpy as np

from tests.helpers.http import client_of
from visualdl import LogReader, LogWriter, SummaryWriter
from visualdl.kinds.mesh.read import arrays

TETRA = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.5]], np.float32)
FACES = np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]], np.int32)
COLORS = np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255], [10, 20, 30]], np.uint8)


def b64(text, dtype):
    return np.frombuffer(base64.b64decode(text), dtype)


def test_round_trip_exact(tmp_path):
    cloud = np.random.default_rng(1).normal(size=(2, 50, 3))  # float64 in: float32 kept
    with SummaryWriter(str(tmp_path / "run")) as sw:
        sw.add_mesh("tetra", TETRA[None], colors=COLORS[None], faces=FACES[None],
                    config_dict={"camera": {"cls": "PerspectiveCamera", "fov": 75}},
                    global_step=4)
        sw.add_mesh("cloud", cloud, global_step=2.9)  # torch's int() of a float step
    reader = LogReader(str(tmp_path))
    (ref,) = reader.meshes("run", "tetra")
    assert ref.step == 4 and ref.meta == {"batch": 1, "points": 4, "triangles": 4,
                                          "colors": True}
    mesh = arrays(reader.load(ref))
    assert mesh.vertices.dtype == np.float32 and mesh.vertices.tolist() == [TETRA.tolist()]
    assert mesh.colors.tolist() == [COLORS.tolist()] and mesh.faces.tolist() == [FACES.tolist()]
    assert mesh.config == '{"camera": {"cls": "PerspectiveCamera", "fov": 75}}'
    (ref,) = reader.meshes("run", "cloud")
    mesh = arrays(reader.load(ref))
    assert ref.step == 2 and mesh.colors is None and mesh.faces is None
    np.testing.assert_array_equal(mesh.vertices, cloud.astype(np.float32))


def test_log_writer_two_dimensional_and_float_colours(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_mesh("m", TETRA, 1, colors=COLORS.astype(float), faces=FACES.tolist())
    mesh = arrays(LogReader(str(tmp_path)).load(LogReader(str(tmp_path)).meshes("run", "m")[0]))
    assert mesh.vertices.shape == (1, 4, 3) and mesh.colors[0].tolist() == COLORS.tolist()


def test_served_subsampled_then_whole(tmp_path):
    n = 250_000
    cloud = np.random.default_rng(2).random((n, 3)).astype(np.float32)
    colors = (cloud * 255).astype(np.uint8)
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_mesh("cloud", cloud, 0, colors=colors)
        w.add_mesh("tetra", np.stack([TETRA, TETRA + 1]), 5, faces=np.stack([FACES, FACES]))
    with client_of(tmp_path) as api:
        index = api.json("/api/meshes", run="run", tag="cloud")
        assert index["points"] == [n] and index["triangles"] == [0] and index["colors"] == [True]
        drawn = api.json("/api/meshes/data", run="run", tag="cloud", step=0)
        assert (drawn["points"], drawn["shown"], drawn["faces"]) == (n, 100_000, None)
        v = b64(drawn["vertices"], "<f4").reshape(-1, 3)
        c = b64(drawn["colors"], np.uint8).reshape(-1, 3)
        assert len(v) == 100_000 == len(c)
        # every point sent is a logged point, with its own colour, in the logged order
        rows = {tuple(p): i for i, p in enumerate(cloud.tolist())}
        picked = [rows[tuple(p)] for p in v.tolist()]
        assert picked == sorted(set(picked))
        assert (c == colors[picked]).all()
        again = api.json("/api/meshes/data", run="run", tag="cloud", step=0)
        assert again["vertices"] == drawn["vertices"]  # the same points every time
        whole = api.json("/api/meshes/data", run="run", tag="cloud", step=0, max_points=0)
        assert whole["shown"] == n
        np.testing.assert_array_equal(b64(whole["vertices"], "<f4").reshape(-1, 3), cloud)
        mesh = api.json("/api/meshes/data", run="run", tag="tetra", step=5, sample=1,
                        max_points=2)  # triangles: never subsampled
        assert (mesh["batch"], mesh["shown"], mesh["triangles"]) == (2, 4, 4)
        assert b64(mesh["vertices"], "<f4").reshape(-1, 3).tolist() == (TETRA + 1).tolist()
        assert b64(mesh["faces"], "<i4").reshape(-1, 3).tolist() == FACES.tolist()
        assert mesh["config"] == {} and mesh["colors"] is None
        assert api.get("/api/meshes/data", run="run", tag="tetra", step=5,
                       sample=2).status_code == 404
        assert api.get("/api/meshes/data", run="run", tag="tetra", step=5,
                       max_points=-1).status_code == 400
        assert api.get("/api/meshes/data", run="run", tag="nope", step=5).status_code == 404


def test_hostile_parameters_are_4xx_never_5xx(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_mesh("m", TETRA, 0, faces=FACES)
        w.add_video("v", np.zeros((2, 4, 4, 3), np.uint8), 0)
    numbers = ["9" * 400, str(2 ** 63), "-1", "nan", "1e400", "", "0x10", "3.5"]
    with client_of(tmp_path) as api:
        for route, tag in (("/api/meshes/data", "m"), ("/api/videos/data", "v")):
            for key in ("step", "sample", "max_points"):
                for value in numbers:
                    got = api.get(route, {"run": "run", "tag": tag, "step": 0, key: value})
                    assert got.status_code in (200, 400, 404), (route, key, value, got.text)
                    if got.status_code == 400:  # the error names the parameter
                        assert key in got.text, (route, key, value, got.text)
            for run, bad_tag in (("../run", tag), ("run", "\x00"), ("nope", tag)):
                assert api.get(route, run=run, tag=bad_tag, step=0).status_code == 404
        for route in ("/api/meshes", "/api/videos"):
            assert api.get(route, run="run").status_code == 400
