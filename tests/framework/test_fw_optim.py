"""Optimizers against PyTorch and closed forms; schedulers; clipping; state."""

import math

import numpy as np
import pytest

import visualdl.framework as vf
from visualdl.framework import nn

try:
    import torch
except ImportError:
    torch = None

W0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]], np.float32)
X = np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 3.0], [2.0, 1.0, 0.0]], np.float32)


def _ours(make, steps=4):
    w = nn.Parameter(W0)
    opt = make([w])
    for _ in range(steps):
        loss = (vf.matmul(vf.tensor(X), w.T) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w.numpy()


def _theirs(make, steps=4):
    w = torch.tensor(W0, requires_grad=True)
    opt = make([w])
    for _ in range(steps):
        loss = ((torch.tensor(X) @ w.T) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w.detach().numpy()


CASES = {
    "sgd": (lambda p: vf.optim.SGD(p, 0.05), lambda p: torch.optim.SGD(p, 0.05)),
    "sgd_momentum_wd": (lambda p: vf.optim.SGD(p, 0.05, momentum=0.9, weight_decay=0.01),
                        lambda p: torch.optim.SGD(p, 0.05, momentum=0.9, weight_decay=0.01)),
    "sgd_nesterov": (lambda p: vf.optim.SGD(p, 0.05, momentum=0.9, nesterov=True),
                     lambda p: torch.optim.SGD(p, 0.05, momentum=0.9, nesterov=True)),
    "adam": (lambda p: vf.optim.Adam(p, 0.1, weight_decay=0.01),
             lambda p: torch.optim.Adam(p, 0.1, weight_decay=0.01)),
    "adamw": (lambda p: vf.optim.AdamW(p, 0.1, weight_decay=0.1),
              lambda p: torch.optim.AdamW(p, 0.1, weight_decay=0.1)),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", list(CASES))
def test_optimizer_matches_pytorch(name):
    ours, theirs = CASES[name]
    np.testing.assert_allclose(_ours(ours), _theirs(theirs), rtol=1e-5, atol=1e-6)


def test_plain_sgd_closed_form():
    w = nn.Parameter(np.array([1.0, -2.0], np.float32))
    opt = vf.optim.SGD([w], 0.1)
    (w * w).sum().backward()
    opt.step()
    np.testing.assert_allclose(w.numpy(), [1.0 - 0.2, -2.0 + 0.4], rtol=1e-6)


def test_schedulers():
    s = vf.optim.StepLR(1.0, step_size=2, gamma=0.5)
    vals = [s()]
    for _ in range(4):
        s.step()
        vals.append(s())
    assert vals == [1.0, 1.0, 0.5, 0.5, 0.25]
    c = vf.optim.CosineAnnealingLR(1.0, T_max=4, eta_min=0.0)
    got = []
    for _ in range(5):
        got.append(c())
        c.step()
    np.testing.assert_allclose(got, [(1 + math.cos(math.pi * t / 4)) / 2 for t in range(5)])
    w = vf.optim.LinearWarmup(vf.optim.StepLR(0.8, 1, 0.5), warmup_steps=4, start_lr=0.0, end_lr=0.8)
    seq = []
    for _ in range(7):
        seq.append(w())
        w.step()
    np.testing.assert_allclose(seq, [0.0, 0.2, 0.4, 0.6, 0.8, 0.4, 0.2])
    p = nn.Parameter(np.zeros(2, np.float32))
    opt = vf.optim.SGD([p], vf.optim.StepLR(0.3, 1, 0.1))
    assert opt.get_lr() == pytest.approx(0.3)
    opt.lr_scheduler.step()
    assert opt.get_lr() == pytest.approx(0.03)


@pytest.mark.torch
def test_scheduler_values_match_pytorch():
    p = torch.zeros(1, requires_grad=True)
    topt = torch.optim.SGD([p], 0.5)
    tsched = torch.optim.lr_scheduler.CosineAnnealingLR(topt, T_max=6, eta_min=0.01)
    ours = vf.optim.CosineAnnealingLR(0.5, T_max=6, eta_min=0.01)
    for _ in range(6):
        assert ours() == pytest.approx(topt.param_groups[0]["lr"], rel=1e-9)
        topt.step()
        tsched.step()
        ours.step()


def test_clip_grad_norm():
    a = nn.Parameter(np.array([3.0, 0.0], np.float32))
    b = nn.Parameter(np.array([[4.0]], np.float32))
    (a * a).sum().backward()   # grad a = [6, 0]
    (b * b).sum().backward()   # grad b = [[8]]
    total = vf.optim.clip_grad_norm_([a, b], 5.0)
    assert total == pytest.approx(10.0)
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 0.0], rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), [[4.0]], rtol=1e-5)
    assert vf.optim.clip_grad_norm_([a, b], 100.0) == pytest.approx(5.0, rel=1e-5)
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 0.0], rtol=1e-5)


def test_sparse_embedding_sgd_touches_only_used_rows():
    emb = nn.Embedding(50, 2)
    before = emb.weight.numpy().copy()
    opt = vf.optim.SGD(emb.parameters(), 0.5, momentum=0.9)
    emb(vf.tensor([7, 7, 9])).sum().backward()
    opt.step()
    diff = emb.weight.numpy() - before
    assert set(np.flatnonzero(np.abs(diff).sum(1))) == {7, 9}
    np.testing.assert_allclose(diff[7], [-1.0, -1.0], rtol=1e-6)
    np.testing.assert_allclose(diff[9], [-0.5, -0.5], rtol=1e-6)


def test_optimizer_state_roundtrip():
    w = nn.Parameter(W0)
    opt = vf.optim.Adam([w], 0.1)
    (w * w).sum().backward()
    opt.step()
    state = opt.state_dict()
    w2 = nn.Parameter(w.numpy())
    opt2 = vf.optim.Adam([w2], 0.1)
    opt2.set_state_dict(state)
    for o, p in ((opt, w), (opt2, w2)):
        o.zero_grad()
        (p * p).sum().backward()
        o.step()
    np.testing.assert_allclose(w2.numpy(), w.numpy(), rtol=1e-6)
    with pytest.raises(ValueError):
        vf.optim.SGD([], 0.1)


def test_an_optimizer_state_that_does_not_fit_is_refused_whole(tmp_path):
    """Adam's state into SGD, or a state of other parameters: a ValueError that says what
    differs, and the optimizer unchanged (Model.load's checkpoint of another setup)."""
    import visualdl.framework as vf
    from visualdl.framework import nn

    def trained(opt_cls, out_features=3, **kw):
        vf.seed(0)
        net = nn.Linear(4, out_features)
        opt = opt_cls(net.parameters(), 0.1, **kw)
        loss = (net(vf.to_tensor(np.ones((2, 4), np.float32))) ** 2).sum()
        loss.backward()
        opt.step()
        return opt

    adam, sgd = trained(vf.optim.Adam), trained(vf.optim.SGD, momentum=0.9)
    before = {k: v.copy() for k, v in sgd.state_dict()["state"].items()}
    assert before  # momentum buffers
    with pytest.raises(ValueError, match="optimizer state of Adam, loaded into SGD"):
        sgd.set_state_dict(adam.state_dict())
    wide = trained(vf.optim.SGD, out_features=5, momentum=0.9).state_dict()
    with pytest.raises(ValueError, match=r"shape \(5, 4\) where parameter 0 is \(3, 4\)"):
        sgd.set_state_dict(wide)
    after = sgd.state_dict()
    assert after["step_count"] == 1 and after["state"].keys() == before.keys()
    for k, v in before.items():
        np.testing.assert_array_equal(after["state"][k], v)
    sgd.set_state_dict(trained(vf.optim.SGD, momentum=0.9).state_dict())  # its own kind: fine
