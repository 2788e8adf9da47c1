"""Layer forward hooks and tensor/parameter gradient hooks: what they see, what they change,
and that their handles remove them."""

import numpy as np
import pytest

import visualdl.framework as vf
from visualdl.framework import nn


def _mlp():
    vf.seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


def test_forward_hooks_see_inputs_and_outputs_and_are_removable():
    net = _mlp()
    x = vf.randn((5, 4))
    seen = []
    pre = net[0].register_forward_pre_hook(lambda layer, args: seen.append(("pre", layer, args[0])))
    post = net[1].register_forward_hook(
        lambda layer, args, out: seen.append(("post", layer, args[0], out)))
    y = net(x)
    assert [s[0] for s in seen] == ["pre", "post"]
    assert seen[0][1] is net[0] and seen[0][2] is x
    relu_in, relu_out = seen[1][2], seen[1][3]
    h = x.numpy() @ net[0].weight.numpy().T + net[0].bias.numpy()
    np.testing.assert_allclose(relu_in.numpy(), h, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(relu_out.numpy(), np.maximum(h, 0).astype(np.float32))
    pre.remove()
    post.remove()
    pre.remove()  # idempotent
    seen.clear()
    np.testing.assert_array_equal(net(x).numpy(), y.numpy())
    assert seen == []


def test_hooks_replace_arguments_and_outputs():
    net = _mlp()
    x = vf.randn((2, 4))
    with net[1].register_forward_pre_hook(lambda layer, args: args[0] * 0.0):
        out = net[1](x)  # ReLU of zeros
        assert float(np.abs(out.numpy()).sum()) == 0.0
    with net.register_forward_hook(lambda layer, args, out: out + 1.0):
        np.testing.assert_allclose(net(x).numpy(), net[2](net[1](net[0](x))).numpy() + 1.0,
                                   rtol=1e-6)
    assert not net.__dict__["_forward_hooks"]  # the with-block removed it


def test_hooks_run_in_registration_order():
    layer = nn.ReLU()
    order = []
    h1 = layer.register_forward_hook(lambda *a: order.append(1))
    h2 = layer.register_forward_hook(lambda *a: order.append(2))
    layer(vf.ones((1,)))
    h1.remove()
    layer(vf.ones((1,)))
    h2.remove()
    assert order == [1, 2, 2]


def test_parameter_grad_hook_sees_the_gradient_and_can_scale_it():
    net = _mlp()
    x = vf.randn((6, 4))
    y = vf.tensor(np.arange(6) % 2)
    vf.nn.functional.cross_entropy(net(x), y).backward()
    expected = net[2].weight.grad.numpy().copy()
    net.clear_gradients()
    seen = []

    def hook(g):
        seen.append(g.numpy().copy())
        return g * 2.0

    handle = net[2].weight.register_hook(hook)
    vf.nn.functional.cross_entropy(net(x), y).backward()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], expected, rtol=1e-6)
    np.testing.assert_allclose(net[2].weight.grad.numpy(), 2 * expected, rtol=1e-6)
    handle.remove()
    net.clear_gradients()
    vf.nn.functional.cross_entropy(net(x), y).backward()
    np.testing.assert_allclose(net[2].weight.grad.numpy(), expected, rtol=1e-6)
    assert len(seen) == 1


def test_intermediate_tensor_hook_sees_upstream_gradient():
    x = vf.tensor([1.0, -2.0, 3.0], requires_grad=True)
    h = x * 3.0
    seen = []
    handle = h.register_hook(lambda g: seen.append(g.numpy().copy()))
    (h * h).sum().backward()
    np.testing.assert_allclose(seen[0], 2 * 3 * x.numpy())  # d(h^2)/dh = 2h
    np.testing.assert_allclose(x.grad.numpy(), 18 * x.numpy())
    handle.remove()
    with pytest.raises(RuntimeError, match="does not require grad"):
        vf.ones((2,)).register_hook(lambda g: None)


def test_leaf_root_and_embedding_hooks():
    x = vf.tensor([2.0], requires_grad=True)
    got = []
    x.register_hook(lambda g: got.append(float(g.numpy()[0])))
    x.backward(vf.tensor([5.0]))
    assert got == [5.0]
    emb = nn.Embedding(10, 3)
    rows = []
    emb.weight.register_hook(lambda g: rows.append(g))
    emb(vf.tensor([[1, 4]])).sum().backward()
    assert isinstance(rows[0], vf.RowSparseGrad)
    dense = rows[0].numpy()
    assert dense.shape == (10, 3) and dense[[1, 4]].sum() == 6.0 and dense.sum() == 6.0


def test_activation_stats_logs_histogram_and_statistics(tmp_path):
    from visualdl import LogReader, LogWriter

    net = _mlp()
    x = vf.randn((64, 4))
    with LogWriter(logdir=str(tmp_path / "run")) as writer:
        stats = vf.ActivationStats(writer, net, ["1"], every=2)
        for step in range(4):
            stats.set_step(step)
            out = net(x)
        stats.remove()
        relu_out = net[1](net[0](x)).numpy()  # not logged: the hook is gone
    del out
    reader = LogReader(str(tmp_path))
    tags = reader.tags("run")
    assert tags["histogram"] == ["activations/1"]
    assert sorted(tags["scalar"]) == ["activations/1/mean", "activations/1/std",
                                      "activations/1/zero_fraction"]
    zeros = reader.scalars("run", "activations/1/zero_fraction")
    assert list(zeros.steps) == [0, 2]
    np.testing.assert_allclose(zeros.values[-1], (relu_out == 0).mean(), rtol=1e-6)
    np.testing.assert_allclose(reader.scalars("run", "activations/1/mean").values[0],
                               relu_out.mean(), rtol=1e-5)
    with pytest.raises(KeyError, match="nope"):
        vf.ActivationStats(None, net, ["nope"])
