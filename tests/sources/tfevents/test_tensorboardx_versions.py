"""Event files from every tensorboardX release 1.0-1.9 and 2.x read as TensorBoard reads them.

tensorboardX 1.0 to 1.7 open a file with an event that has a wall time and no
``file_version``; TensorBoard reads those files all the same, so must we. The files under
``data/tensorboardx/<version>/`` were written by that release itself (the commands are in
``make_tensorboardx.py``); the installed tensorboardX 2.x writes one more here. The
reference is TensorBoard's own ``EventAccumulator`` with every size guidance at 0 (nothing
sampled away).
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from visualdl.reader import LogReader

ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

DATA = os.path.join(os.path.dirname(__file__), "data", "tensorboardx")
VERSIONS = ["1.0", "1.1", "1.2", "1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "2.0"]


def _accumulator(path: str):
    acc = ea.EventAccumulator(path, size_guidance={k: 0 for k in ea.DEFAULT_SIZE_GUIDANCE})
    acc.Reload()
    return acc


def _compare(logdir: str) -> int:
    """Our reader against EventAccumulator on one run; the number of tags compared."""
    acc = _accumulator(logdir)
    reader = LogReader(logdir)
    assert [f.refused for f in reader.files()] == [""]
    assert reader.errors == 0
    [run] = reader.runs()
    tags = acc.Tags()
    for tag in tags["scalars"]:
        want = acc.Scalars(tag)
        got = reader.scalars(run, tag)
        assert got.steps.tolist() == [e.step for e in want]
        assert got.values.tolist() == [e.value for e in want]
        assert got.wall_times.tolist() == [e.wall_time for e in want]
    for tag in tags["histograms"]:
        want = acc.Histograms(tag)
        got = reader.histograms(run, tag)
        assert [e.step for e in got] == [e.step for e in want]
        for ours, theirs in zip(got, want):
            h = theirs.histogram_value
            assert (ours.min, ours.max, ours.count) == (h.min, h.max, h.num)
            assert ours.counts.sum() == sum(h.bucket)
    for tag in tags["tensors"]:  # the text plugin's
        want = acc.Tensors(tag)
        got = reader.texts(run, tag)
        assert [(e.step, e.text) for e in got] == \
            [(e.step, e.tensor_proto.string_val[0].decode()) for e in want]
    return sum(len(tags[k]) for k in ("scalars", "histograms", "tensors"))


@pytest.mark.parametrize("version", VERSIONS)
def test_each_release_reads_as_tensorboard_reads_it(tmp_path, version):
    logdir = shutil.copytree(os.path.join(DATA, version), tmp_path / "run")
    assert _compare(str(logdir)) == (3 if version < "1.7" else 2)
    reader = LogReader(str(logdir))
    assert reader.scalars("run", "loss").values.tolist() == \
        [np.float32(1 / (s + 1)).item() for s in range(5)]
    text_tag = "note" if version < "1.4" else "note/text_summary"  # as each release named it
    assert [e.text for e in reader.texts("run", text_tag)] == ["hello"]


def test_the_first_event_of_1x_has_no_file_version():
    """What makes these files differ: checked, so the fixtures stay what they claim."""
    from visualdl.format.framing import HEADER_SIZE
    from visualdl.sources.tfevents import event_pb2

    for version in VERSIONS:
        [name] = os.listdir(os.path.join(DATA, version))
        with open(os.path.join(DATA, version, name), "rb") as f:
            head = f.read(HEADER_SIZE)
            first = event_pb2.Event.FromString(
                f.read(int.from_bytes(head[:8], "little")))
        assert first.wall_time > 0
        assert first.file_version == ("" if version <= "1.7" else "brain.Event:2")


def test_tensorboardx_2x_installed(tmp_path):
    tbx = pytest.importorskip("tensorboardX")
    with tbx.SummaryWriter(str(tmp_path)) as w:
        for step in range(5):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        w.add_histogram("weights", np.random.RandomState(0).randn(500), 3)
        w.add_text("note", "hello", 4)
    assert _compare(str(tmp_path)) == 3


def test_a_file_served_from_tensorboardx_1_0(tmp_path):
    from tests.helpers.http import Client
    from tests.helpers.server import serving

    shutil.copytree(os.path.join(DATA, "1.0"), tmp_path / "old")
    with serving([str(tmp_path)]) as handle:
        client = Client(handle.url)
        r = client.get("/api/scalars", params={"run": "old", "tag": "loss"})
        assert r.status_code == 200
        assert r.json()["steps"] == [0, 1, 2, 3, 4]
        r = client.get("/api/histograms", params={"run": "old", "tag": "weights"})
        assert r.status_code == 200 and r.json()["entries"][0]["count"] == 500
