"""add_tensor (LogWriter and SummaryWriter) and TensorBoard's tensor summaries read back
as numpy arrays of the logged dtype and shape, and served as a value table or histogram."""

from __future__ import annotations

import numpy as np
import pytest

from tests.convert.test_convert import assert_same_logs
from tests.helpers.http import client_of
from tests.sources.tfevents.tbwrite import EventWriter
from visualdl import LogReader, LogWriter, SummaryWriter
from visualdl.convert import convert
from visualdl.sources.tfevents import event_pb2 as pb

ARRAYS = {
    "f32": np.array([[1.5, -2.0, np.nan], [0.0, np.inf, 3.25]], np.float32),
    "i64": np.array([2**60 + 1, -5], np.int64),
    "bool": np.array([True, False, True]),
    "f16": np.array([0.5, 65504.0], np.float16),
    "be": np.arange(4, dtype=">i4"),  # big-endian input, stored little-endian
    "scalar": np.float64(2.5),
}


def test_arrays_read_back_exactly(tmp_path):
    with LogWriter(logdir=str(tmp_path / "r")) as w:
        for tag, array in ARRAYS.items():
            w.add_tensor(tag, array, 3)
    reader = LogReader(str(tmp_path))
    assert reader.tags("r")["tensor"] == sorted(ARRAYS)
    for tag, array in ARRAYS.items():
        (event,) = reader.tensors("r", tag)
        assert event.step == 3 and event.value.shape == np.shape(array)
        assert event.value.dtype == np.asarray(array).dtype.newbyteorder("<"), tag
        np.testing.assert_array_equal(event.value, array)


def test_summary_writer_add_tensor_and_bad_input(tmp_path):
    with SummaryWriter(log_dir=str(tmp_path / "sw")) as w:
        w.add_scalar("x", 1.0, 0)
        w.add_tensor("t", [[1, 2], [3, 4]], global_step=2)
        with pytest.raises(TypeError, match="'bad': tensor must be numeric"):
            w.add_tensor("bad", np.array(["a", "b"]))
        with pytest.raises(TypeError, match="'bad': tensor must be real"):
            w.add_tensor("bad", np.array([1j]))
    reader = LogReader(str(tmp_path))
    (event,) = reader.tensors("sw", "t")
    assert event.step == 2 and event.value.tolist() == [[1, 2], [3, 4]]
    assert "bad" not in reader.tags("sw")["tensor"] and reader.tags("sw")["scalar"] == ["x"]


def _tensor_summary(w: EventWriter, tag: str, step: int, tensor: pb.TensorProto,
                    plugin: str | None) -> None:
    meta = {} if plugin is None else {"metadata": pb.SummaryMetadata(
        plugin_data=pb.SummaryMetadata.PluginData(plugin_name=plugin))}
    w.value(step, 1.7e9 + step, tag=tag, tensor=tensor, **meta)


def _shape(*dims: int) -> pb.TensorShapeProto:
    return pb.TensorShapeProto(dim=[pb.TensorShapeProto.Dim(size=d) for d in dims])


def test_tensorboard_tensor_summaries_read_as_tensors(tmp_path):
    with EventWriter(str(tmp_path / "tb")) as w:
        # what torch's add_tensor writes: plugin "tensor", values in float_val / int64_val
        _tensor_summary(w, "torch/f", 1, pb.TensorProto(
            dtype=1, tensor_shape=_shape(2, 2), float_val=[1.0, 2.0, 3.0, 4.5]), "tensor")
        _tensor_summary(w, "torch/i", 1, pb.TensorProto(
            dtype=9, tensor_shape=_shape(3), int64_val=[7, 8, 2**40]), "tensor")
        _tensor_summary(w, "torch/h", 1, pb.TensorProto(
            dtype=19, tensor_shape=_shape(2), half_val=[0x3C00, 0xC000]), "tensor")
        _tensor_summary(w, "tf/bf", 1, pb.TensorProto(  # bfloat16 bits of 1.5 and -3
            dtype=14, tensor_shape=_shape(2), half_val=[0x3FC0, 0xC040]), "")
        # torch's half_val holds each value's float32 bits as an int32 (its half_to_int)
        bits = np.array([0.5, -2.0, 1.5], "<f4").view("<i4").tolist()
        _tensor_summary(w, "torch/h32", 1, pb.TensorProto(
            dtype=19, tensor_shape=_shape(3), half_val=bits), "tensor")
        _tensor_summary(w, "torch/bf", 1, pb.TensorProto(
            dtype=14, tensor_shape=_shape(3), half_val=bits), "tensor")
        # TensorFlow's form: packed bytes, no plugin at all
        packed = np.arange(6, dtype="<f8").reshape(2, 3)
        _tensor_summary(w, "tf/packed", 2, pb.TensorProto(
            dtype=2, tensor_shape=_shape(2, 3), tensor_content=packed.tobytes()), None)
        _tensor_summary(w, "tf/text", 2, pb.TensorProto(
            dtype=7, tensor_shape=_shape(1), string_val=[b"x"]), None)  # not numeric: skipped
    reader = LogReader(str(tmp_path))
    assert reader.tags("tb")["tensor"] == ["tf/bf", "tf/packed", "torch/bf", "torch/f",
                                           "torch/h", "torch/h32", "torch/i"]
    bf = reader.tensors("tb", "tf/bf")[0].value
    assert bf.dtype == np.float32 and bf.tolist() == [1.5, -3.0]
    h32 = reader.tensors("tb", "torch/h32")[0].value
    assert h32.dtype == np.float16 and h32.tolist() == [0.5, -2.0, 1.5]
    bf = reader.tensors("tb", "torch/bf")[0].value
    assert bf.dtype == np.float32 and bf.tolist() == [0.5, -2.0, 1.5]
    f = reader.tensors("tb", "torch/f")[0]
    assert f.value.dtype == np.float32 and f.value.tolist() == [[1.0, 2.0], [3.0, 4.5]]
    i = reader.tensors("tb", "torch/i")[0].value
    assert i.dtype == np.int64 and i.tolist() == [7, 8, 2**40]
    h = reader.tensors("tb", "torch/h")[0].value
    assert h.dtype == np.float16 and h.tolist() == [1.0, -2.0]
    p = reader.tensors("tb", "tf/packed")[0]
    assert p.step == 2 and np.array_equal(p.value, packed)
    assert reader.errors == 0, reader.error_messages
    # visualdl convert copies them into our format, the same arrays
    convert(tmp_path / "tb", tmp_path / "ours")
    assert_same_logs(reader, LogReader(str(tmp_path / "ours")), {"tb": "ours"})
    half = LogReader(str(tmp_path / "ours")).tensors("ours", "torch/h")[0].value
    assert half.dtype == np.float16 and half.tolist() == [1.0, -2.0]


def test_api_sends_values_or_a_histogram(tmp_path):
    big = np.concatenate([np.zeros(20_000), np.ones(10_000), [np.nan]])
    with LogWriter(logdir=str(tmp_path / "r")) as w:
        w.add_tensor("small", ARRAYS["f32"], 0)
        w.add_tensor("big", big, 0)
        w.add_tensor("cube", np.ones((2, 2, 2), np.int8), 0)
    with client_of(tmp_path) as api:
        index = api.json("/api/tensors", run="r", tag="small")
        assert index["steps"] == [0] and index["dtype"] == ["<f4"] and index["shape"] == [[2, 3]]
        small = api.json("/api/tensors/data", run="r", tag="small", step=0)
        assert small["shape"] == [2, 3] and small["dtype"] == "<f4"
        assert small["values"] == [1.5, -2.0, "NaN", 0.0, "Infinity", 3.25]
        body = api.json("/api/tensors/data", run="r", tag="big", step=0)
        assert "values" not in body and body["size"] == 30_001
        assert sum(body["histogram"]["counts"]) == 30_000
        counts = body["histogram"]["counts"]
        assert counts[0] == 20_000 and counts[-1] == 10_000
        assert body["stats"] == {"min": 0.0, "max": 1.0, "mean": pytest.approx(1 / 3),
                                 "nonfinite": 1}
        cube = api.json("/api/tensors/data", run="r", tag="cube", step=0)
        assert "histogram" in cube and cube["shape"] == [2, 2, 2]
        assert api.get("/api/tensors/data", run="r", tag="small", step=9).status_code == 404


def test_torch_summary_writer_and_ours_read_the_same(tmp_path, torch):
    """The same add_tensor calls through torch's SummaryWriter and ours (skipped without
    torch): the same arrays, steps and dtypes read back from both logdirs."""
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    values = {"f": torch.arange(6, dtype=torch.float32).reshape(2, 3),
              "i": torch.tensor([1, -2, 3], dtype=torch.int64),
              "h": torch.tensor([0.5, -2.0], dtype=torch.float16),
              "bf": torch.tensor([1.5, -3.0], dtype=torch.bfloat16)}
    for writer_class, run in ((TorchWriter, "torch"), (SummaryWriter, "ours")):
        w = writer_class(log_dir=str(tmp_path / run))
        for step in (1, 2):
            for tag, value in values.items():
                w.add_tensor(tag, value * step, global_step=step)
        w.close()
    reader = LogReader(str(tmp_path))
    assert reader.tags("torch")["tensor"] == reader.tags("ours")["tensor"] == [
        "bf", "f", "h", "i"]
    for tag in values:
        theirs, ours = reader.tensors("torch", tag), reader.tensors("ours", tag)
        assert [e.step for e in theirs] == [e.step for e in ours] == [1, 2]
        for a, b in zip(theirs, ours):
            assert a.value.dtype == b.value.dtype, tag
            np.testing.assert_array_equal(a.value, b.value)
