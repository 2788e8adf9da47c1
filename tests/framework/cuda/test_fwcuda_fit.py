"""The high-level API on "cuda" (a GPU or Numba's simulator): Model.fit with the VisualDL
callback reads device tensors (histograms, the traced graph), gradient hooks see device
gradients, and an exported program matches the CPU model."""

import os

import numpy as np
import pytest

import visualdl.framework as vf
from visualdl import LogReader
from visualdl.framework import nn

if not (os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or vf.cuda_available()):
    pytest.skip("needs a GPU or NUMBA_ENABLE_CUDASIM=1", allow_module_level=True)


def _net():
    vf.seed(0)
    return nn.Sequential(nn.Conv2D(1, 2, 3, padding=1), nn.ReLU(), nn.MaxPool2D(2),
                         nn.Flatten(), nn.Linear(8, 3))


def test_fit_with_visualdl_on_cuda(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (6, 1, 4, 4)).astype(np.float32)
    y = np.array([0, 1, 2, 0, 1, 2])
    net = _net().to("cuda")
    grads = []
    net[4].weight.register_hook(lambda g: grads.append((g.device, g.numpy().copy())))
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.1), vf.nn.CrossEntropyLoss(),
                  vf.metric.Accuracy())
    model.fit((x, y), (x, y), batch_size=3, epochs=1, verbose=0,
              callbacks=[vf.callbacks.VisualDL(str(tmp_path / "gpu"), histogram_freq=1,
                                               system_metrics=False)])  # exact tags below
    assert len(grads) == 2 and grads[0][0] == "cuda"
    reader = LogReader(str(tmp_path))
    tags = reader.tags("gpu")
    assert sorted(tags) == ["config", "graph", "histogram", "hparams", "image", "scalar"]
    assert [h.step for h in reader.histograms("gpu", "grads/4.weight")] == [1, 2]
    np.testing.assert_allclose(reader.histograms("gpu", "grads/4.weight")[-1].max,
                               grads[-1][1].max(), rtol=1e-6)
    path = str(tmp_path / "gpu.onnx")
    vf.onnx.export(net, vf.tensor(x[:2], device="cuda"), path)
    cpu = _net()
    cpu.load_state_dict(net.state_dict())
    np.testing.assert_allclose(vf.jit.load(path).run(x)[0], cpu(vf.tensor(x)).numpy(),
                               rtol=1e-5, atol=1e-5)
