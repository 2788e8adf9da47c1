"""TensorFlow's own scalars on the bulk path (issue 23, item 9).

``data/scalars/`` holds files TensorFlow 2.21's writers made (``data/scalars/make_scalars.py``
says how): TF2's ``tf.summary.scalar`` (a tensor per value, ``tensor_content`` as float32,
the value's metadata repeated in every event) and TF1's merged summaries
(``tf.compat.v1.summary.merge_all``: every tag's ``simple_value`` in one event per step).
Both read exactly as TensorBoard's ``EventAccumulator`` reads them, and nearly every event
is decoded in bulk, not one by one. Random logs of those layouts, with awkward neighbours,
read as the careful per-record path reads them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.sources.tfevents.tbwrite import EventWriter, pb
from tests.sources.tfevents.test_bulk_layouts import assert_reads_as_careful
from visualdl import LogReader
from visualdl.sources.tfevents import bulk

DATA = Path(__file__).parent / "data" / "scalars"


def _accumulator(path: Path):
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    acc = ea.EventAccumulator(str(path), size_guidance={k: 0 for k in ea.DEFAULT_SIZE_GUIDANCE})
    acc.Reload()
    return acc


@pytest.mark.parametrize("which", ["tf1", "tf2"])
def test_tensorflows_scalars_equal_event_accumulators(which, monkeypatch):
    monkeypatch.setenv("VISUALDL_NO_CACHE", "1")
    from tensorboard.util import tensor_util

    acc = _accumulator(DATA / which)
    reader = LogReader(str(DATA / which))
    (run,) = reader.runs()
    tags = acc.Tags()
    want = {}
    for tag in tags["scalars"]:
        want[tag] = [(e.step, e.wall_time, e.value) for e in acc.Scalars(tag)]
    for tag in tags["tensors"]:
        want[tag] = [(e.step, e.wall_time, tensor_util.make_ndarray(e.tensor_proto).item())
                     for e in acc.Tensors(tag)]
    assert sorted(reader.tags(run)["scalar"]) == sorted(want) and len(want) >= 3
    for tag, points in want.items():
        steps, walls, values = reader.scalars(run, tag)
        assert steps.tolist() == [p[0] for p in points], tag
        assert walls.tolist() == [p[1] for p in points], tag
        assert values.tolist() == [float(np.float32(p[2])) for p in points], tag
        assert len(points) == 400


@pytest.mark.parametrize("which", ["tf1", "tf2"])
def test_nearly_every_event_is_decoded_in_bulk(which):
    """Only the file_version event and the step-0 events (no step field: another layout)
    are left to the per-record decoder."""
    (path,) = (DATA / which).glob("events.out.tfevents.*")
    with open(path, "rb") as f:
        chunks = list(bulk.scan_events(f))
    left = sum(len(c.records) for c in chunks)
    in_bulk = sum(len(s.steps) for c in chunks for s in c.series) + \
        sum(len(s.steps) for c in chunks for s, _ in c.tensor_scalars)
    tags = 3 if which == "tf2" else 4
    assert left <= 1 + tags
    assert in_bulk >= 400 * tags - tags


def _tensor_scalar(w: EventWriter, tag: str, value: float, step: int, wall: float,
                   double: bool, meta: str | None) -> None:
    """As TF2 writes it: tensor_content of one float32 (or float64), metadata each time."""
    content = np.array([value], np.float64 if double else np.float32).tobytes()
    tensor = pb.TensorProto(dtype=2 if double else 1, tensor_content=content,
                            tensor_shape=pb.TensorShapeProto())
    extra = {} if meta is None else {"metadata": pb.SummaryMetadata(
        plugin_data=pb.SummaryMetadata.PluginData(plugin_name=meta))}
    w.value(step, wall, tag=tag, tensor=tensor, **extra)


def _merged(w: EventWriter, tags: list[str], values: list[float], step: int,
            wall: float) -> None:
    w.write(pb.Event(wall_time=wall, step=step, summary=pb.Summary(value=[
        pb.Summary.Value(tag=t, simple_value=v) for t, v in zip(tags, values)])))


def _random_tf_log(logdir: Path, seed: int, n: int = 3000) -> EventWriter:
    """TF2 tensor scalars (float32 and float64, with metadata on every event, on the first
    only, or naming another plugin), TF1 merged summaries (the same tags, tags of the same
    lengths in another order or with one byte changed, one value more), step sizes of 1
    to 9 bytes and step 0, and text tensors of the same lengths between them."""
    rng = np.random.default_rng(seed)
    w = EventWriter(str(logdir))
    merged_sets = [["loss", "acc_"], ["acc_", "loss"], ["loss", "acc!"], ["loss", "acc_", "x"]]
    steps = [0, 1, 127, 128, 16_384, 2**21, 2**35, 2**62]
    for i in range(n):
        step = steps[int(rng.integers(len(steps)))] if rng.random() < 0.2 else i
        wall = 1e9 + i
        value = float(rng.standard_normal())
        kind = rng.random()
        if kind < 0.35:
            tag = ["epoch_loss", "epoch_acc_", "lr"][int(rng.integers(3))]
            meta = "scalars" if rng.random() < 0.9 else None
            _tensor_scalar(w, tag, value, step, wall, rng.random() < 0.2, meta)
        elif kind < 0.45:
            # text in a tensor event of the scalars' shape: another plugin, not a scalar
            _tensor_scalar(w, "notes", value, step, wall, False, "text")
        elif kind < 0.9:
            tags = merged_sets[int(rng.integers(len(merged_sets)))]
            _merged(w, tags, [float(rng.standard_normal()) for _ in tags], step, wall)
        else:
            w.add_text("t", "x" * int(rng.integers(0, 6)), step, wall)
    return w


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_tf_layouts_read_as_the_careful_path_does(tmp_path, seed):
    got = assert_reads_as_careful(tmp_path, _random_tf_log(tmp_path, seed))
    assert "notes" not in got  # a text tensor is no scalar, whatever its bytes
