"""Videos and meshes across the scalar disk cache: a restarted reader that takes a file's
scalars from the cache (decoding none of its records) still has the file's videos and
meshes, re-read by offset, with the same bytes; for our records and for event files."""

from __future__ import annotations

import numpy as np
import pytest

from tests.kinds.media.test_event_files import COLORS, FACES, VERTS, gif_bytes
from tests.reader.test_cache_persist import SPILL, cache, restart  # noqa: F401 - the fixture
from visualdl import LogWriter
from visualdl.kinds.mesh.read import arrays
from visualdl.reader.log_reader import LogReader
from visualdl.reader import scalar_cache


def _blobs(reader: LogReader, run: str) -> list:
    return [reader.load(ref) for kind in ("video", "mesh")
            for tag in reader.tags(run).get(kind, []) for ref in reader.events(run, kind, tag)]


def test_our_records(tmp_path, cache):  # noqa: F811 - the fixture
    logdir = tmp_path / "logs"
    with LogWriter(logdir=str(logdir / "run")) as w:
        for step in range(SPILL + 5_000):
            w.add_scalar("loss", step / 7, step)
        w.add_video("clip", np.full((3, 8, 8, 3), 90, np.uint8), 1)
        w.add_mesh("cloud", VERTS, 2, colors=COLORS)
    reader = LogReader(logdir)
    assert isinstance(reader.scalars("run", "loss"), scalar_cache.SpilledScalars)
    before = _blobs(reader, "run")
    del reader
    scalar_cache.wait_writes()
    reader, read = restart(logdir)
    assert read == 0
    assert reader.tags("run") == {"scalar": ["loss"], "video": ["clip"], "mesh": ["cloud"]}
    assert _blobs(reader, "run") == before
    assert arrays(before[1]).vertices.tolist() == VERTS.tolist()


def test_event_files(tmp_path, cache):  # noqa: F811 - the fixture
    tbx = pytest.importorskip("tensorboardX")
    logdir = tmp_path / "logs"
    from tensorboardX.proto.summary_pb2 import Summary

    with tbx.SummaryWriter(str(logdir / "tbx")) as w:
        w.add_mesh("cloud", VERTS, colors=COLORS, global_step=1)
        for step in range(SPILL + 5_000):  # enough to spill: the file gets a disk cache
            w.add_scalar("acc", step / 9, step)
        w.add_mesh("solid", VERTS, faces=FACES, global_step=2)
        image = Summary.Image(height=8, width=10, colorspace=3, encoded_image_string=gif_bytes())
        w._get_file_writer().add_summary(Summary(value=[Summary.Value(tag="clip",
                                                                      image=image)]), 3)
    reader = LogReader(logdir)
    assert isinstance(reader.scalars("tbx", "acc"), scalar_cache.SpilledScalars)
    before = _blobs(reader, "tbx")
    assert len(before) == 3
    del reader
    scalar_cache.wait_writes()
    reader, read = restart(logdir)
    assert reader.tags("tbx") == {"scalar": ["acc"], "video": ["clip"],
                                  "mesh": ["cloud", "solid"]}
    assert read == 0  # nothing decoded from the event file: its entries come from the cache
    assert _blobs(reader, "tbx") == before
    solid = arrays(reader.load(reader.meshes("tbx", "solid")[0]))
    assert solid.faces.tolist() == FACES.tolist()
