"""Shared by the export tests: export a layer, check it with onnx's full checker, run it in
onnxruntime and in vf.jit.load at a batch size other than the traced one, compare."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import visualdl.framework as vf

TRACE_BATCH, RUN_BATCH = 3, 5
TOL = {"rtol": 1e-5, "atol": 1e-5}


def session(path: str):
    # the test extra's; without it the parity checks skip (the other export tests run)
    ort = pytest.importorskip("onnxruntime")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def check_parity(net: vf.nn.Layer, make_inputs, path: str, dynamic_batch: bool = True,
                 opset: int = 17) -> onnx.ModelProto:
    """``make_inputs(batch)`` -> list of numpy arrays. Returns the exported model."""
    pytest.importorskip("onnxruntime")  # before the work: the check runs the model in it
    net.eval()
    traced = [vf.tensor(a) for a in make_inputs(TRACE_BATCH)]
    model = vf.onnx.export(net, traced, path, opset=opset, dynamic_batch=dynamic_batch)
    onnx.checker.check_model(onnx.load(path), full_check=True)
    batch = RUN_BATCH if dynamic_batch else TRACE_BATCH
    run = make_inputs(batch)
    if dynamic_batch:
        for value in model.graph.input:
            assert value.type.tensor_type.shape.dim[0].dim_param == "batch"
    eager = net(*[vf.tensor(a) for a in run])
    eager = [t.numpy() for t in (eager if isinstance(eager, (tuple, list)) else [eager])]
    sess = session(path)
    feeds = {i.name: a for i, a in zip(sess.get_inputs(), run)}
    got = sess.run(None, feeds)
    assert len(got) == len(eager)
    for e, g in zip(eager, got):
        assert e.shape == g.shape and e.dtype == g.dtype
        np.testing.assert_allclose(g, e, **TOL)
    mine = vf.jit.load(path).run(*run)
    for m, g in zip(mine, got):
        assert m.shape == g.shape and m.dtype == g.dtype
        np.testing.assert_allclose(m, g, **TOL)
    return model
