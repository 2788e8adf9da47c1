"""``/api/distributions`` draws the bands TensorBoard draws, on histograms of every writer.

The reference is TensorBoard's own pipeline on the same files: its ``EventAccumulator``
(``plugin_event_accumulator``, every size guidance at 0, which migrates a
``HistogramProto`` as ``data_compat`` does) and
``tensorboard.plugins.distribution.compressor.compress_histogram``. The files:

* ``data/tf1``: ``tf.compat.v1.summary.histogram`` (edges beyond min and max, a last empty
  bucket up to DBL_MAX) and ``data/tf2``: ``tf.summary.histogram`` (a k x 3 tensor), both
  written by tensorflow-cpu 2.21.0 with ``make_tf_histograms.py``;
* torch's ``add_histogram`` as tensorboardX 2.x writes it (the same ``make_histogram``),
  written here with the installed tensorboardX: TensorFlow-style bins (the default), numpy
  bins, and values whose percentiles fall exactly between two buckets;
* the ``data/tensorboardx/<version>`` files of ``tests/sources/tfevents`` (tensorboardX
  1.0-1.6's own ``add_histogram``).

TensorBoard computes in float32 (single-precision buckets) or float64 (TF2's tensors): the
bands must agree to 1e-5 of the value range. Our own histograms keep their exact min and max.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogWriter

pea = pytest.importorskip("tensorboard.backend.event_processing.plugin_event_accumulator")
compressor = pytest.importorskip("tensorboard.plugins.distribution.compressor")
tensor_util = pytest.importorskip("tensorboard.util.tensor_util")

HERE = os.path.dirname(__file__)
TBX = os.path.join(HERE, "..", "..", "sources", "tfevents", "data", "tensorboardx")
TOLERANCE = 1e-5


def _reference(path: str) -> dict[str, np.ndarray]:
    """{tag: [step x 9 band values]} as TensorBoard's distributions dashboard has them."""
    acc = pea.EventAccumulator(path, size_guidance={k: 0 for k in pea.DEFAULT_SIZE_GUIDANCE},
                               tensor_size_guidance={"histograms": 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["tensors"]:
        try:
            plugin = acc.SummaryMetadata(tag).plugin_data.plugin_name
        except KeyError:  # no metadata (tensorboardX 1.0's text): not a histogram
            continue
        if plugin != "histograms":
            continue
        out[tag] = np.array([[v for _, v in compressor.compress_histogram(
            tensor_util.make_ndarray(e.tensor_proto))] for e in acc.Tensors(tag)])
    return out


def _served(logdir: str, tags) -> dict[str, np.ndarray]:
    out = {}
    with serving([logdir]) as handle:
        client = Client(handle.url)
        [run] = client.json("/api/runs")["runs"]
        for tag in tags:
            r = client.get("/api/distributions", run=run, tag=tag)
            assert r.status_code == 200
            out[tag] = np.array(r.json()["values"]).T
    return out


def _compare(logdir: str) -> list[str]:
    want = _reference(logdir)
    got = _served(logdir, want)
    for tag, ref in want.items():
        assert got[tag].shape == ref.shape, tag
        span = np.maximum(ref.max(axis=1) - ref.min(axis=1),  # a constant's: its size
                          np.abs(ref).max(axis=1) * 1e-6 + 1e-12)[:, None]
        worst = float((np.abs(got[tag] - ref) / span).max())
        assert worst < TOLERANCE, f"{tag}: off by {worst:.3g} of the range"
    return sorted(want)


@pytest.mark.parametrize("era", ["tf1", "tf2"])
def test_tensorflow_histograms(tmp_path, era):
    logdir = shutil.copytree(os.path.join(HERE, "data", era), tmp_path / era)
    assert _compare(str(logdir)) == ["bimodal", "constant", "halves", "normal", "skewed"]


def test_torch_layout_histograms(tmp_path):
    tbx = pytest.importorskip("tensorboardX")
    rng = np.random.RandomState(7)
    with tbx.SummaryWriter(str(tmp_path)) as w:
        for step in range(30):
            n = rng.randint(2, 400)
            w.add_histogram("tf_bins", rng.randn(n) * rng.uniform(0.01, 100), step)
            w.add_histogram("ints", rng.randint(0, 5, n).astype(float), step,
                            bins=int(rng.randint(1, 30)))
            w.add_histogram("fd", rng.standard_t(2, n), step, bins="fd")
            w.add_histogram("halves", np.repeat([0.0, 1.0], 50 + step), step, bins=10)
    assert _compare(str(tmp_path)) == ["fd", "halves", "ints", "tf_bins"]


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.6"])
def test_tensorboardx_1x_histograms(tmp_path, version):
    logdir = shutil.copytree(os.path.join(TBX, version), tmp_path / "run")
    assert _compare(str(logdir)) == ["weights"]


def test_between_two_buckets_takes_the_next_non_empty_left_edge(tmp_path):
    """Half the values at 0 and half at 1 in ten buckets: 30.85% is inside the first
    bucket, the median is exactly at its top, and TensorBoard puts it at the left edge of
    the next non-empty bucket (0.9), not inside the empty ones between."""
    tbx = pytest.importorskip("tensorboardX")
    with tbx.SummaryWriter(str(tmp_path)) as w:
        w.add_histogram("halves", np.repeat([0.0, 1.0], 50), 0, bins=10)
    [bands] = _served(str(tmp_path), ["halves"])["halves"]
    assert bands[0] == 0.0 and bands[-1] == 1.0
    assert bands[4] == pytest.approx(0.9)
    assert bands[5] == pytest.approx(0.9 + 0.1 * (6915 - 5000) / 5000)


def test_top_band_where_the_float32_sum_passes_10000(tmp_path):
    """tensorboardX 2.x's ``skew`` (exp of normals, 3,000 values, TensorFlow-style bins):
    summed in float32 the weights end past 10,000 basis points, so TensorBoard finds the
    100% point inside the last bucket, 1e-5 of the value below the max. Equal to the value,
    not only to the range."""
    tbx = pytest.importorskip("tensorboardX")
    rng = np.random.RandomState(1)
    with tbx.SummaryWriter(str(tmp_path)) as w:
        for step in range(6):
            rng.randn(5000)  # the auditor's file: another tag drew these first
            w.add_histogram("skew", np.exp(rng.randn(3000)), step)
            rng.randint(0, 5, 1000), rng.randn(200000)
    ref = _reference(str(tmp_path))["skew"]
    got = _served(str(tmp_path), ["skew"])["skew"]
    assert not np.allclose(ref[:, -1], [h.max() for h in _maxima(tmp_path)], rtol=1e-6)
    np.testing.assert_allclose(got, ref, rtol=2e-6)


def _maxima(logdir) -> list[np.ndarray]:
    """Each step's exact maximum, as the file's HistogramProto records it."""
    acc = pea.EventAccumulator(str(logdir), size_guidance={k: 0 for k in pea.DEFAULT_SIZE_GUIDANCE},
                               tensor_size_guidance={"histograms": 0})
    acc.Reload()
    return [tensor_util.make_ndarray(e.tensor_proto)[:, 1] for e in acc.Tensors("skew")]


def test_our_histograms_keep_their_exact_min_and_max(tmp_path):
    values = np.random.default_rng(3).standard_normal(1001) * 3.3
    with LogWriter(logdir=str(tmp_path / "ours")) as w:
        w.add_histogram("w", values, step=0, buckets=13)
    with serving([str(tmp_path / "ours")]) as handle:
        body = Client(handle.url).json("/api/distributions", run="ours", tag="w")
    assert body["values"][0] == [float(values.min())]
    assert body["values"][-1] == [float(values.max())]
    assert body["values"][4][0] == pytest.approx(float(np.median(values)), abs=0.6)
