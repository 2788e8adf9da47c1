"""Autograd engine, tensor API, dtype promotion and the dispatch observer."""

import numpy as np
import pytest

import visualdl.framework as vf
from visualdl.framework import dispatch


def test_gradients_accumulate_across_backward_calls():
    a = vf.tensor([1.0, 2.0], requires_grad=True)
    (a * 3.0).sum().backward()
    (a * a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [3 + 2, 3 + 4])


def test_shared_subexpression_sums_both_paths():
    a = vf.tensor([2.0, -1.0], requires_grad=True)
    b = vf.tensor([5.0, 7.0], requires_grad=True)
    c = a * b
    (c + a + c * c).sum().backward()  # d/da = b + 1 + 2ab*b
    av, bv = np.array([2.0, -1.0]), np.array([5.0, 7.0])
    np.testing.assert_allclose(a.grad.numpy(), bv + 1 + 2 * av * bv * bv, rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), av + 2 * av * bv * av, rtol=1e-6)


def test_no_grad_records_nothing_and_works_as_decorator():
    a = vf.tensor([1.0], requires_grad=True)
    with vf.no_grad():
        b = a * 2.0
    assert not b.requires_grad and b.grad_fn is None

    @vf.no_grad()
    def f(x):
        return x * 2.0

    assert not f(a).requires_grad
    assert (a * 2.0).requires_grad and vf.is_grad_enabled()


def test_second_backward_needs_retain_graph():
    a = vf.tensor([1.0, 2.0], requires_grad=True)
    y = (a * a).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(a.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_backward_errors_are_clear():
    with pytest.raises(RuntimeError, match="1-element"):
        (vf.tensor([1.0, 2.0], requires_grad=True) * 2.0).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        vf.tensor([1.0]).backward()
    with pytest.raises(TypeError, match="float"):
        vf.tensor([1, 2], requires_grad=True)


def test_detach_and_non_scalar_backward_with_grad():
    a = vf.tensor([1.0, 2.0], requires_grad=True)
    y = a * a.detach()
    y.backward(vf.tensor([1.0, 10.0]))
    np.testing.assert_allclose(a.grad.numpy(), [1.0, 20.0])


def test_dtype_rules():
    i = vf.tensor([1, 2, 3])
    f = vf.tensor([0.5, 1.5, 2.5])
    assert i.dtype == vf.int64 and f.dtype == vf.float32
    assert (i + 0.5).dtype == vf.float32
    assert (i * 2).dtype == vf.int64
    assert (i / 2).dtype == vf.float32
    assert (f + vf.tensor(np.ones(3))).dtype == vf.float64
    assert (i > 1).dtype == vf.bool_
    np.testing.assert_array_equal((i > 1).numpy(), [False, True, True])
    assert (i == vf.tensor([1, 0, 3])).sum().item() == 2
    assert vf.tensor(np.arange(3, dtype=np.float64)).dtype == vf.float64


def test_tensor_api_basics():
    t = vf.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert t.shape == (2, 3) and t.ndim == 2 and t.numel() == 6 and len(t) == 2
    assert t.reshape(-1).shape == (6,) and t.T.shape == (3, 2)
    assert t.unsqueeze(0).shape == (1, 2, 3) and t.unsqueeze(0).squeeze(0).shape == (2, 3)
    assert t.transpose(0, 1).shape == (3, 2)
    assert t.argmax(axis=1).tolist() == [2, 2]
    assert t[1, 2].item() == 5.0
    assert t.sum(axis=0).tolist() == [3.0, 5.0, 7.0]
    assert t.max().item() == 5.0 and t.mean().item() == 2.5
    assert vf.concat([t, t], axis=0).shape == (4, 3) and vf.stack([t, t]).shape == (2, 2, 3)
    np.testing.assert_array_equal(np.asarray(t), t.numpy())
    src = np.ones(3, np.float32)
    copy = vf.tensor(src)
    src[0] = 5
    assert copy.numpy()[0] == 1.0  # vf.tensor copies


def test_every_op_is_seen_by_an_observer():
    seen = []
    remove = dispatch.add_observer(lambda op, ins, out: seen.append((op.name, dict(op.attrs), out.shape)))
    try:
        x = vf.randn((2, 3))
        w = vf.randn((4, 3), requires_grad=True)
        vf.nn.functional.relu(vf.nn.functional.linear(x, w)).sum()
    finally:
        remove()
    assert [s[0] for s in seen] == ["linear", "relu", "sum"]
    assert seen[0][2] == (2, 4) and seen[2][1]["axis"] == (0, 1)
    assert "conv2d" in dispatch.registered_ops()


def test_cuda_request_without_gpu_names_the_reason():
    if vf.cuda_available():
        pytest.skip("a GPU (or the simulator) is available here")
    with pytest.raises(RuntimeError, match="CUDA is not available: .+"):
        vf.tensor([1.0], device="cuda")
    with pytest.raises(ValueError):
        vf.tensor([1.0], device="tpu")
