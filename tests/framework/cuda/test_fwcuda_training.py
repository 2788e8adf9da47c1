"""Layers, optimizers and transfers on "cuda" agree with the CPU backend."""

import os

import numpy as np
import pytest

import visualdl.framework as vf
import visualdl.framework.nn.functional as F
from visualdl.framework import nn

if not (os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or vf.cuda_available()):
    pytest.skip("needs a GPU or NUMBA_ENABLE_CUDASIM=1", allow_module_level=True)


def _net():
    vf.seed(3)
    # no conv bias before batch norm: its true gradient is 0, so Adam would amplify rounding noise
    return nn.Sequential(nn.Conv2D(1, 2, 3, padding=1, bias=False), nn.BatchNorm2D(2), nn.ReLU(),
                         nn.MaxPool2D(2), nn.Flatten(), nn.Linear(8, 3))


@pytest.mark.parametrize("make_opt", [
    lambda ps: vf.optim.SGD(ps, 0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
    lambda ps: vf.optim.AdamW(ps, 0.01, grad_clip=vf.optim.ClipGradByGlobalNorm(0.5)),
], ids=["sgd_nesterov", "adamw_clip"])
def test_training_steps_match_cpu(make_opt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 1, 4, 4)).astype(np.float32)
    y = np.array([0, 2, 1])
    results = {}
    for device in ("cpu", "cuda"):
        net = _net().to(device)
        opt = make_opt(net.parameters())
        xt, yt = vf.tensor(x, device=device), vf.tensor(y, device=device)
        for _ in range(2):
            loss = F.cross_entropy(net(xt), yt)
            opt.zero_grad()
            loss.backward()
            opt.step()
        results[device] = {k: v.numpy() for k, v in net.state_dict().items()}
    for k in results["cpu"]:
        np.testing.assert_allclose(results["cuda"][k], results["cpu"][k], rtol=1e-4, atol=1e-5,
                                   err_msg=k)


def test_embedding_sparse_adam_updates_only_used_rows():
    emb = nn.Embedding(10, 3).to("cuda")
    before = emb.weight.numpy().copy()
    opt = vf.optim.Adam(emb.parameters(), 0.1)
    idx = vf.tensor(np.array([[1, 4, 1]]), device="cuda")
    emb(idx).sum().backward()
    assert isinstance(emb.weight.grad, vf.RowSparseGrad)
    opt.step()
    after = emb.weight.numpy()
    changed = np.flatnonzero(np.abs(after - before).sum(1) > 0)
    assert changed.tolist() == [1, 4]


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # simulator RNG only
def test_dropout_on_cuda_masks_and_scales():
    vf.seed(0)
    x = vf.ones((4, 32), device="cuda", requires_grad=True)
    y = F.dropout(x, 0.25)
    y.sum().backward()
    out = y.numpy()
    kept = out != 0
    assert 0.55 < kept.mean() < 0.95
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.75, rtol=1e-6)


def test_long_reduction_two_pass_matches_numpy():
    data = np.random.default_rng(1).standard_normal(5000)
    t = vf.tensor(data, device="cuda")
    np.testing.assert_allclose(t.sum().item(), data.sum(), rtol=1e-10)
    np.testing.assert_allclose(t.max().item(), data.max())


def test_gradient_flows_across_devices():
    a = vf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = (a.to("cuda") * 2.0).to("cpu").sum()
    b.backward()
    assert a.grad.device == "cpu"
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0, 2.0])
